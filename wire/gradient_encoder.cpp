// Error feedback with rounding and top-k.
#include "wire/gradient_encoder.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

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
  if (k == 0) {
    std::fill(xs, xs + n, 0.0f);
    return 0;
  }
  // the k-th largest magnitude, by selection over a copy (no index indirection)
  thread_local std::vector<float> magnitudes;
  magnitudes.resize(n);
  for (size_t i = 0; i < n; ++i)
    magnitudes[i] = std::fabs(xs[i]);
  std::nth_element(magnitudes.begin(), magnitudes.begin() + static_cast<std::ptrdiff_t>(k - 1), magnitudes.end(),
                   std::greater<float>());
  const float threshold = magnitudes[k - 1];
  size_t above = 0;
  for (size_t i = 0; i < n; ++i)
    above += std::fabs(xs[i]) > threshold;
  size_t ties = k - above; // entries equal to the threshold that are kept: the first ones
  for (size_t i = 0; i < n; ++i) {
    float m = std::fabs(xs[i]);
    if (m > threshold)
      continue;
    if (m == threshold && ties > 0)
      --ties;
    else
      xs[i] = 0.0f;
  }
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
