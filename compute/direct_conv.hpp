// Convolution on the CPU without im2col's column buffer (NHWC, AVX-512 products): the products
// read each window straight from the zero-padded images, one run of k_w * channels floats per
// kernel row (avx512_sgemm_rows), so the columns are never written, read back or folded. The
// filter gradient reads the same windows; the input gradient (stride 1) is the convolution of the
// padded output gradient with the filters turned 180 degrees, other strides fold the column
// gradient back (col2im). Scratch (padded images, window addresses, turned filters) is kept
// between calls. Single-threaded, like its backend.
#pragma once

#include "compute/window_geometry.hpp"

#include <cstddef>
#include <vector>

namespace actorps {

class direct_conv {
public:
  /// y (n * positions() rows x cout) = im2col(x) w, w: window_size() x cout. REQUIRES: g.valid(),
  /// avx512_gemm_available().
  void forward(const window_geometry& g, int n, const float* x, const float* w, int cout, float* y);

  /// dw = im2col(x)^T dy + beta dw (beta 0: dw is not read); dx, unless null, = col2im(dy w^T)
  /// (overwritten). REQUIRES: as forward.
  void backward(const window_geometry& g, int n, const float* x, const float* dy, const float* w, int cout,
                float beta, float* dw, float* dx);

  /// Bytes of scratch held now.
  size_t bytes() const;

private:
  void input_gradient(const window_geometry& g, int n, const float* dy, const float* w, int cout, float* dx);

  std::vector<float> padded_;
  std::vector<float> turned_;
  std::vector<float> columns_;
  std::vector<const float*> rows_;
};

} // namespace actorps
