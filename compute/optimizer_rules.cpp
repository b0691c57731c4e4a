// Host implementation of the optimizer update rules and learning-rate schedules.
#include "compute/optimizer_rules.hpp"

#include "common/enum_names.hpp"
#include "common/log.hpp"

#include "compute/denormals.hpp"
#include "compute/fast_math.hpp"
#include "compute/row_prefetch.hpp"

#include <algorithm>
#include <cmath>

namespace actorps {

const char* to_string(optimizer_kind k) {
  switch (k) {
    case optimizer_kind::sgd: return "sgd";
    case optimizer_kind::momentum: return "momentum";
    case optimizer_kind::nesterov: return "nesterov";
    case optimizer_kind::adam: return "adam";
    case optimizer_kind::adagrad: return "adagrad";
    case optimizer_kind::rmsprop: return "rmsprop";
  }
  return "unknown";
}

const char* to_string(lr_schedule s) {
  switch (s) {
    case lr_schedule::constant: return "constant";
    case lr_schedule::exponential: return "exponential";
    case lr_schedule::piecewise: return "piecewise";
    case lr_schedule::cosine: return "cosine";
  }
  return "unknown";
}

std::optional<optimizer_kind> parse_optimizer(const std::string& name) {
  return parse_by_name(name, all_optimizers);
}

std::optional<lr_schedule> parse_schedule(const std::string& name) {
  return parse_by_name(name, all_schedules);
}

int slot_count(optimizer_kind k) {
  switch (k) {
    case optimizer_kind::sgd: return 0;
    case optimizer_kind::momentum:
    case optimizer_kind::nesterov:
    case optimizer_kind::adagrad: return 1;
    case optimizer_kind::adam:
    case optimizer_kind::rmsprop: return 2;
  }
  return 0;
}

float slot_initial_value(const optimizer_params& p, int slot) {
  if (slot == 0 && p.kind == optimizer_kind::adagrad)
    return p.initial_accumulator;
  if (slot == 0 && p.kind == optimizer_kind::rmsprop)
    return 1.0f;
  return 0.0f;
}

std::string check(const optimizer_params& p) {
  if (!(p.learning_rate > 0.0f))
    return cat("train.learning-rate must be > 0, got ", p.learning_rate);
  if (!(p.weight_decay >= 0.0f))
    return cat("train.weight-decay must be >= 0, got ", p.weight_decay);
  if (p.kind == optimizer_kind::adagrad && !(p.initial_accumulator > 0.0f))
    return cat("train.initial-accumulator must be > 0, got ", p.initial_accumulator);
  if (p.kind == optimizer_kind::rmsprop && !(p.rho > 0.0f && p.rho < 1.0f))
    return cat("train.rho must be in (0, 1), got ", p.rho);
  switch (p.schedule) {
    case lr_schedule::constant: break;
    case lr_schedule::exponential:
    case lr_schedule::cosine:
      if (p.decay_steps <= 0)
        return cat("train.lr-decay-steps must be > 0, got ", p.decay_steps);
      if (p.schedule == lr_schedule::exponential && !(p.decay_rate > 0.0f))
        return cat("train.lr-decay-rate must be > 0, got ", p.decay_rate);
      if (p.schedule == lr_schedule::cosine && !(p.cosine_alpha >= 0.0f && p.cosine_alpha <= 1.0f))
        return cat("train.lr-alpha must be in [0, 1], got ", p.cosine_alpha);
      break;
    case lr_schedule::piecewise:
      if (p.values.size() != p.boundaries.size() + 1)
        return cat("train.lr-values needs one more entry than train.lr-boundaries (",
                   p.boundaries.size(), " boundaries, ", p.values.size(), " values)");
      for (size_t i = 0; i < p.boundaries.size(); ++i)
        if (p.boundaries[i] <= (i == 0 ? 0 : p.boundaries[i - 1]))
          return cat("train.lr-boundaries must be positive and increasing; entry ", i, " is ",
                     p.boundaries[i]);
      for (size_t i = 0; i < p.values.size(); ++i)
        if (!(p.values[i] > 0.0f))
          return cat("train.lr-values entry ", i, " must be > 0, got ", p.values[i]);
      break;
  }
  return {};
}

float learning_rate_at(const optimizer_params& p, long t) {
  switch (p.schedule) {
    case lr_schedule::constant: break;
    case lr_schedule::exponential: {
      if (p.decay_rate == 1.0f)
        break;
      double exponent = static_cast<double>(t) / static_cast<double>(p.decay_steps);
      if (p.staircase)
        exponent = std::floor(exponent);
      return static_cast<float>(p.learning_rate * std::pow(static_cast<double>(p.decay_rate), exponent));
    }
    case lr_schedule::piecewise: {
      auto it = std::lower_bound(p.boundaries.begin(), p.boundaries.end(), t);
      size_t i = static_cast<size_t>(it - p.boundaries.begin());
      return i < p.values.size() ? p.values[i] : p.learning_rate;
    }
    case lr_schedule::cosine: {
      constexpr double pi = 3.14159265358979323846;
      double frac = static_cast<double>(std::min(t, p.decay_steps)) / static_cast<double>(p.decay_steps);
      double cosine = 0.5 * (1.0 + std::cos(pi * frac));
      return static_cast<float>(p.learning_rate * ((1.0 - p.cosine_alpha) * cosine + p.cosine_alpha));
    }
  }
  return p.learning_rate;
}

float adam_step_size(const optimizer_params& p, long t) {
  auto td = static_cast<double>(t);
  return static_cast<float>(learning_rate_at(p, t) * std::sqrt(1.0 - std::pow(p.beta2, td))
                            / (1.0 - std::pow(p.beta1, td)));
}

bool decays(const std::string& variable_name) {
  return ends_with(variable_name, "weights"); // (".../weights", a separable layer's ".../depthwise_weights" ...)
}

bool is_moving_statistic(const std::string& variable_name) {
  return ends_with(variable_name, "/moving_mean") || ends_with(variable_name, "/moving_variance");
}

optimizer_params for_variable(const optimizer_params& p, const std::string& variable_name, float moving_decay) {
  optimizer_params out = p;
  if (!decays(variable_name))
    out.weight_decay = 0.0f;
  out.moving_decay = moving_decay;
  return out;
}

namespace {

// One update's step sizes, worked out once for every span it moves.
struct update_rates {
  float lr = 0.0f;   // the schedule's learning rate at step t
  float step = 0.0f; // adam's bias-corrected step size
};

update_rates rates_at(const optimizer_params& p, long t) {
  update_rates r;
  if (p.moving_decay > 0.0f)
    return r;
  r.lr = learning_rate_at(p, t);
  if (p.kind == optimizer_kind::adam)
    r.step = adam_step_size(p, t);
  return r;
}

// The rule itself on n contiguous weights; inlined into each of its callers' clones (so each
// is vectorised for the CPU the clone is for).
__attribute__((always_inline)) inline void update_span(const optimizer_params& p, const update_rates& r, size_t n,
                                                       float* w, const float* g, float* slot0, float* slot1) {
  if (p.moving_decay > 0.0f) {
    const float keep = p.moving_decay, take = 1.0f - p.moving_decay;
    for (size_t i = 0; i < n; ++i)
      w[i] = keep * w[i] + take * g[i];
    return;
  }
  const float lr = r.lr;
  const float wd = p.weight_decay;
  switch (p.kind) {
    case optimizer_kind::sgd:
      for (size_t i = 0; i < n; ++i)
        w[i] -= lr * (g[i] + wd * w[i]);
      break;
    case optimizer_kind::momentum:
    case optimizer_kind::nesterov: {
      const float mu = p.momentum;
      const float look = p.kind == optimizer_kind::nesterov ? 1.0f : 0.0f;
      for (size_t i = 0; i < n; ++i) {
        float gi = g[i] + wd * w[i];
        slot0[i] = mu * slot0[i] + gi;
        // momentum: w -= lr * a; nesterov: w -= lr * (g + mu * a)
        w[i] -= lr * (look * (gi + mu * slot0[i]) + (1.0f - look) * slot0[i]);
      }
      break;
    }
    case optimizer_kind::adam: {
      const float step = r.step;
      const float b1 = p.beta1, b2 = p.beta2, eps = p.epsilon;
      for (size_t i = 0; i < n; ++i) {
        float gi = g[i] + wd * w[i];
        slot0[i] = b1 * slot0[i] + (1.0f - b1) * gi;
        slot1[i] = b2 * slot1[i] + (1.0f - b2) * gi * gi;
        w[i] -= step * slot0[i] / (std::sqrt(slot1[i]) + eps);
      }
      break;
    }
    case optimizer_kind::adagrad:
      for (size_t i = 0; i < n; ++i) {
        float gi = g[i] + wd * w[i];
        slot0[i] += gi * gi;
        w[i] -= lr * gi / std::sqrt(slot0[i]);
      }
      break;
    case optimizer_kind::rmsprop: {
      const float rho = p.rho, mu = p.momentum, eps = p.epsilon;
      for (size_t i = 0; i < n; ++i) {
        float gi = g[i] + wd * w[i];
        slot0[i] = rho * slot0[i] + (1.0f - rho) * gi * gi;
        slot1[i] = mu * slot1[i] + lr * gi / std::sqrt(slot0[i] + eps);
        w[i] -= slot1[i];
      }
      break;
    }
  }
}

} // namespace

ACTORPS_VECTOR_CLONES
void apply_update_host(const optimizer_params& p, long t, size_t n, float* w, const float* g,
                       float* slot0, float* slot1) {
  denormals_flushed flushed; // slots of weights whose gradient stays 0 decay towards denormals
  update_span(p, rates_at(p, t), n, w, g, slot0, slot1);
}

ACTORPS_VECTOR_CLONES
void apply_rows_host(const optimizer_params& p, long t, size_t cols, const size_t* at, size_t count, float* w,
                     const float* g, float* slot0, float* slot1) {
  denormals_flushed flushed;
  const auto r = rates_at(p, t);
  for (size_t j = 0; j < count; ++j) {
    if (j + rows_ahead < count) { // (the rows lie scattered over a table far larger than the caches)
      const size_t next = at[j + rows_ahead];
      prefetch_floats(w + next, cols);
      if (slot0 != nullptr)
        prefetch_floats(slot0 + next, cols);
      if (slot1 != nullptr)
        prefetch_floats(slot1 + next, cols);
    }
    update_span(p, r, cols, w + at[j], g + j * cols, slot0 ? slot0 + at[j] : nullptr, slot1 ? slot1 + at[j] : nullptr);
  }
}

} // namespace actorps
