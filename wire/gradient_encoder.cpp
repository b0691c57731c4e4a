// Error feedback with rounding and top-k.
#include "wire/gradient_encoder.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace actorps {

const char* to_string(sparsifier c) {
  return c == sparsifier::topk ? "topk" : "none";
}

std::optional<sparsifier> parse_sparsifier(const std::string& name) {
  for (auto c : {sparsifier::none, sparsifier::topk})
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

double topk_ratio_at(const compression_settings& settings, uint64_t step) {
  const double end = settings.topk_ratio;
  const double start = std::max(end, topk_warmup_start);
  if (step >= settings.topk_warmup_steps || start == end)
    return end;
  const double t = static_cast<double>(step) / static_cast<double>(settings.topk_warmup_steps);
  return std::pow(end, t) * std::pow(start, 1.0 - t);
}

namespace {

// The k-th largest of the magnitudes of xs (1 <= k < n). A strided sample proposes a threshold
// that about 2k magnitudes reach; the exact k-th is then selected among those candidates only
// (and among all magnitudes when the sample was unlucky), so the result is exact either way.
// The loops are branch-free over plain pointers, so that they vectorise.
float kth_largest_magnitude(const float* xs, size_t n, size_t k) {
  thread_local std::vector<float> buffer;
  buffer.resize(n);
  float* pool = buffer.data();
  const size_t samples = std::min<size_t>(n, 4096);
  if (samples < n && 4 * k < n) {
    const size_t stride = n / samples;
    for (size_t i = 0; i < samples; ++i)
      pool[i] = std::fabs(xs[i * stride]);
    size_t rank = std::min(samples - 1, (2 * k * samples) / n); // ~2k of n above it
    std::nth_element(pool, pool + rank, pool + samples, std::greater<float>());
    const float proposal = pool[rank];
    size_t m = 0;
    for (size_t i = 0; i < n; ++i) { // always store, advance only for a candidate
      const float v = std::fabs(xs[i]);
      pool[m] = v;
      m += v >= proposal;
    }
    if (m >= k) {
      std::nth_element(pool, pool + (k - 1), pool + m, std::greater<float>());
      return pool[k - 1];
    }
  }
  for (size_t i = 0; i < n; ++i)
    pool[i] = std::fabs(xs[i]);
  std::nth_element(pool, pool + (k - 1), pool + n, std::greater<float>());
  return pool[k - 1];
}

} // namespace

size_t keep_topk(float* xs, size_t n, size_t k) {
  if (k >= n)
    return n;
  if (k == 0) {
    std::fill(xs, xs + n, 0.0f);
    return 0;
  }
  const float threshold = kth_largest_magnitude(xs, n, k);
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) { // keep what reaches the threshold
    const bool keep = std::fabs(xs[i]) >= threshold;
    xs[i] = keep ? xs[i] : 0.0f;
    kept += keep;
  }
  // more than k reach it only through ties at the threshold: the last ones go
  for (size_t i = n; kept > k && i-- > 0;)
    if (std::fabs(xs[i]) == threshold) {
      xs[i] = 0.0f;
      --kept;
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
  float* u = nullptr;
  if (settings_.momentum > 0.0f) { // the velocity is what accumulates
    auto& velocity = velocities_[variable];
    if (velocity.size() < offset + n)
      velocity.resize(offset + n, 0.0f);
    u = velocity.data() + offset;
    const float m = settings_.momentum;
    for (size_t i = 0; i < n; ++i) {
      u[i] = m * u[i] + grad[i];
      grad[i] = u[i];
    }
  }
  if (u == nullptr && settings_.compression == sparsifier::none) { // rounding alone: one pass
    round_with_residual(settings_.precision, grad, r, n);
    return;
  }
  for (size_t i = 0; i < n; ++i) { // what would be sent without loss
    r[i] += grad[i];
    grad[i] = r[i];
  }
  if (settings_.compression == sparsifier::topk)
    keep_topk(grad, n, topk_count(ratio_, n));
  encode_statistic(grad, n);
  for (size_t i = 0; i < n; ++i) // what was not sent: exact, as rounding drops whole low bits
    r[i] -= grad[i];
  if (u != nullptr) // momentum factor masking: a coordinate sent starts its momentum afresh
    for (size_t i = 0; i < n; ++i)
      u[i] = grad[i] != 0.0f ? 0.0f : u[i];
}

void gradient_encoder::encode_statistic(float* grad, size_t n) const {
  if (settings_.precision == wire_precision::fp16) // saturate: what is above fp16's range stays
    for (size_t i = 0; i < n; ++i)
      grad[i] = std::clamp(grad[i], -fp16_max, fp16_max);
  round_to_precision(settings_.precision, grad, n);
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
