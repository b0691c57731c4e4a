// Column-wise loops with the columns innermost (vectorisable), sums in double.
#include "compute/batch_norm_ops.hpp"

#include "common/vector_clones.hpp"

#include <cmath>
#include <cstddef>
#include <vector>

namespace actorps {

namespace {

std::vector<float> inverse_std(const float* var, int cols, float eps) {
  std::vector<float> out(static_cast<size_t>(cols));
  for (int c = 0; c < cols; ++c)
    out[static_cast<size_t>(c)] = static_cast<float>(1.0 / std::sqrt(static_cast<double>(var[c]) + eps));
  return out;
}

} // namespace

ACTORPS_VECTOR_CLONES
void channel_moments_host(const float* x, int rows, int cols, float* mean, float* var) {
  const auto n = static_cast<size_t>(cols);
  std::vector<double> sum(n, 0.0), sq(n, 0.0);
  for (int r = 0; r < rows; ++r) {
    const float* row = x + static_cast<size_t>(r) * n;
    for (size_t c = 0; c < n; ++c)
      sum[c] += row[c];
  }
  for (size_t c = 0; c < n; ++c)
    mean[c] = static_cast<float>(sum[c] / rows);
  for (int r = 0; r < rows; ++r) {
    const float* row = x + static_cast<size_t>(r) * n;
    for (size_t c = 0; c < n; ++c) {
      const double d = static_cast<double>(row[c]) - mean[c];
      sq[c] += d * d;
    }
  }
  for (size_t c = 0; c < n; ++c)
    var[c] = static_cast<float>(sq[c] / rows);
}

ACTORPS_VECTOR_CLONES
void batch_norm_host(const float* x, int rows, int cols, const float* mean, const float* var, const float* gamma,
                     const float* beta, float eps, float* y) {
  const auto n = static_cast<size_t>(cols);
  auto inv = inverse_std(var, cols, eps);
  std::vector<float> scale(n), shift(n);
  for (size_t c = 0; c < n; ++c) {
    scale[c] = gamma[c] * inv[c];
    shift[c] = beta[c] - mean[c] * scale[c];
  }
  for (int r = 0; r < rows; ++r) {
    const float* in = x + static_cast<size_t>(r) * n;
    float* out = y + static_cast<size_t>(r) * n;
    for (size_t c = 0; c < n; ++c)
      out[c] = in[c] * scale[c] + shift[c];
  }
}

ACTORPS_VECTOR_CLONES
void batch_norm_backward_host(const float* x, const float* dy, int rows, int cols, const float* mean, const float* var,
                              const float* gamma, float eps, float* dgamma, float* dbeta, float* dx) {
  const auto n = static_cast<size_t>(cols);
  auto inv = inverse_std(var, cols, eps);
  std::vector<double> sum_dy(n, 0.0), sum_dy_xhat(n, 0.0);
  for (int r = 0; r < rows; ++r) {
    const float* in = x + static_cast<size_t>(r) * n;
    const float* g = dy + static_cast<size_t>(r) * n;
    for (size_t c = 0; c < n; ++c) {
      sum_dy[c] += g[c];
      sum_dy_xhat[c] += static_cast<double>(g[c]) * ((in[c] - mean[c]) * inv[c]);
    }
  }
  std::vector<float> k(n), b(n), a(n);
  for (size_t c = 0; c < n; ++c) {
    dbeta[c] = static_cast<float>(sum_dy[c]);
    dgamma[c] = static_cast<float>(sum_dy_xhat[c]);
    // dx = k * (dy - (dbeta + xhat * dgamma) / rows), xhat = (x - mean) * inv: dx = k dy - a x - b
    k[c] = gamma[c] * inv[c];
    a[c] = k[c] * inv[c] * dgamma[c] / static_cast<float>(rows);
    b[c] = k[c] * dbeta[c] / static_cast<float>(rows) - a[c] * mean[c];
  }
  for (int r = 0; r < rows; ++r) {
    const float* in = x + static_cast<size_t>(r) * n;
    const float* g = dy + static_cast<size_t>(r) * n;
    float* out = dx + static_cast<size_t>(r) * n;
    for (size_t c = 0; c < n; ++c)
      out[c] = k[c] * g[c] - a[c] * in[c] - b[c];
  }
}

} // namespace actorps
