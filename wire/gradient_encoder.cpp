// Error feedback with rounding and top-k.
#include "wire/gradient_encoder.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace actorps {

namespace {

constexpr float fp16_max = 65504.0f;

} // namespace

const char* to_string(gradient_compression c) {
  return c == gradient_compression::topk ? "topk" : "none";
}

std::optional<gradient_compression> parse_gradient_compression(const std::string& name) {
  for (auto c : {gradient_compression::none, gradient_compression::topk})
    if (name == to_string(c))
      return c;
  return std::nullopt;
}

size_t topk_count(double ratio, size_t n) {
  if (n == 0)
    return 0;
  auto k = static_cast<size_t>(std::ceil(ratio * static_cast<double>(n)));
  return std::clamp<size_t>(k, 1, n);
}

size_t keep_topk(float* xs, size_t n, size_t k) {
  if (k >= n)
    return n;
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  auto larger = [&](uint32_t a, uint32_t b) {
    float x = std::fabs(xs[a]), y = std::fabs(xs[b]);
    return x > y || (x == y && a < b);
  };
  std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(), larger);
  for (size_t i = k; i < n; ++i)
    xs[order[i]] = 0.0f;
  return k;
}

void gradient_encoder::encode(uint32_t variable, uint32_t offset, float* grad, size_t n) {
  if (settings_.exact() || n == 0)
    return;
  auto& residual = residuals_[variable];
  if (residual.size() < offset + n)
    residual.resize(offset + n, 0.0f);
  float* r = residual.data() + offset;
  for (size_t i = 0; i < n; ++i) // what would be sent without loss
    r[i] += grad[i];
  std::copy(r, r + n, grad);
  if (settings_.compression == gradient_compression::topk)
    keep_topk(grad, n, topk_count(settings_.topk_ratio, n));
  if (settings_.precision == wire_precision::fp16) // saturate: what is above fp16's range stays
    for (size_t i = 0; i < n; ++i)
      grad[i] = std::clamp(grad[i], -fp16_max, fp16_max);
  round_to_precision(settings_.precision, grad, n);
  for (size_t i = 0; i < n; ++i) // what was not sent: exact, as rounding drops whole low bits
    r[i] -= grad[i];
}

std::vector<float> gradient_encoder::residual(uint32_t variable, uint32_t offset, size_t n) const {
  std::vector<float> out(n, 0.0f);
  auto it = residuals_.find(variable);
  if (it == residuals_.end())
    return out;
  for (size_t i = 0; i < n && offset + i < it->second.size(); ++i)
    out[i] = it->second[offset + i];
  return out;
}

} // namespace actorps
