// Host implementation of the optimizer update rules.
#include "compute/optimizer_rules.hpp"

#include "common/enum_names.hpp"

#include "compute/fast_math.hpp"

#include <cmath>

namespace actorps {

const char* to_string(optimizer_kind k) {
  switch (k) {
    case optimizer_kind::sgd: return "sgd";
    case optimizer_kind::momentum: return "momentum";
    case optimizer_kind::adam: return "adam";
  }
  return "unknown";
}

std::optional<optimizer_kind> parse_optimizer(const std::string& name) {
  constexpr optimizer_kind all[] = {optimizer_kind::sgd, optimizer_kind::momentum, optimizer_kind::adam};
  return parse_by_name(name, all);
}

int slot_count(optimizer_kind k) {
  switch (k) {
    case optimizer_kind::sgd: return 0;
    case optimizer_kind::momentum: return 1;
    case optimizer_kind::adam: return 2;
  }
  return 0;
}

float learning_rate_at(const optimizer_params& p, long t) {
  if (p.decay_rate == 1.0f)
    return p.learning_rate;
  double exponent = static_cast<double>(t) / static_cast<double>(p.decay_steps);
  return static_cast<float>(p.learning_rate * std::pow(static_cast<double>(p.decay_rate), exponent));
}

float adam_step_size(const optimizer_params& p, long t) {
  auto td = static_cast<double>(t);
  return static_cast<float>(learning_rate_at(p, t) * std::sqrt(1.0 - std::pow(p.beta2, td))
                            / (1.0 - std::pow(p.beta1, td)));
}

ACTORPS_VECTOR_CLONES
void apply_update_host(const optimizer_params& p, long t, size_t n, float* w, const float* g,
                       float* slot0, float* slot1) {
  const float lr = learning_rate_at(p, t);
  switch (p.kind) {
    case optimizer_kind::sgd:
      for (size_t i = 0; i < n; ++i)
        w[i] -= lr * g[i];
      break;
    case optimizer_kind::momentum: {
      const float mu = p.momentum;
      for (size_t i = 0; i < n; ++i) {
        slot0[i] = mu * slot0[i] + g[i];
        w[i] -= lr * slot0[i];
      }
      break;
    }
    case optimizer_kind::adam: {
      const float step = adam_step_size(p, t);
      const float b1 = p.beta1, b2 = p.beta2, eps = p.epsilon;
      for (size_t i = 0; i < n; ++i) {
        slot0[i] = b1 * slot0[i] + (1.0f - b1) * g[i];
        slot1[i] = b2 * slot1[i] + (1.0f - b2) * g[i] * g[i];
        w[i] -= step * slot0[i] / (std::sqrt(slot1[i]) + eps);
      }
      break;
    }
  }
}

} // namespace actorps
