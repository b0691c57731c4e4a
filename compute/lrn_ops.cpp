// Each row's denominators s_c = bias + alpha * (the sum of squares over the channel window), summed
// in channel order from the window's first channel.
#include "compute/lrn_ops.hpp"

#include "common/vector_clones.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace actorps {

namespace {

// s[c] for one row.
void denominators(const float* x, int cols, const lrn_params& p, float* s) {
  for (int c = 0; c < cols; ++c) {
    float sum = 0.0f;
    for (int j = std::max(0, c - p.radius); j <= std::min(cols - 1, c + p.radius); ++j)
      sum += x[j] * x[j];
    s[c] = p.bias + p.alpha * sum;
  }
}

// f[c] = s[c]^-beta for one row. TF's default beta, 0.75 (the cifar10 tutorial's), as
// 1 / (sqrt(s) * sqrt(sqrt(s))): square roots and a division run in vector lanes (compute/ builds
// without errno), where powf is a call per value (it had taken a third of that preset's step);
// within a few ulp of powf.
ACTORPS_VECTOR_CLONES
void inverse_powers(const float* s, int cols, float beta, float* f) {
  if (beta == 0.75f) {
    for (int c = 0; c < cols; ++c) {
      const float root = std::sqrt(s[c]);
      f[c] = 1.0f / (root * std::sqrt(root));
    }
    return;
  }
  for (int c = 0; c < cols; ++c)
    f[c] = std::pow(s[c], -beta);
}

} // namespace

void lrn_host(const float* x, int rows, int cols, const lrn_params& p, float* y) {
  std::vector<float> s(static_cast<size_t>(cols)), f(static_cast<size_t>(cols));
  for (int r = 0; r < rows; ++r) {
    const float* in = x + static_cast<size_t>(r) * cols;
    float* out = y + static_cast<size_t>(r) * cols;
    denominators(in, cols, p, s.data());
    inverse_powers(s.data(), cols, p.beta, f.data());
    for (int c = 0; c < cols; ++c)
      out[c] = in[c] * f[static_cast<size_t>(c)];
  }
}

void lrn_backward_host(const float* x, const float* y, const float* dy, int rows, int cols, const lrn_params& p,
                       float* dx) {
  std::vector<float> s(static_cast<size_t>(cols)), t(static_cast<size_t>(cols)), f(static_cast<size_t>(cols));
  for (int r = 0; r < rows; ++r) {
    const size_t at = static_cast<size_t>(r) * cols;
    const float *in = x + at, *out = y + at, *g = dy + at;
    denominators(in, cols, p, s.data());
    inverse_powers(s.data(), cols, p.beta, f.data());
    for (int c = 0; c < cols; ++c)
      t[static_cast<size_t>(c)] = g[c] * out[c] / s[static_cast<size_t>(c)];
    for (int c = 0; c < cols; ++c) {
      float sum = 0.0f;
      for (int j = std::max(0, c - p.radius); j <= std::min(cols - 1, c + p.radius); ++j)
        sum += t[static_cast<size_t>(j)];
      dx[at + static_cast<size_t>(c)] = g[c] * f[static_cast<size_t>(c)] - 2.0f * p.alpha * p.beta * in[c] * sum;
    }
  }
}

} // namespace actorps
