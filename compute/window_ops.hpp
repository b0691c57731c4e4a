// Host implementations of the sliding-window ops (im2col, col2im, max pooling, depthwise
// convolution) over NHWC images;
// the CPU backend runs these, the CUDA backend the kernels of gpu/window_ops.cu.
#pragma once

#include "compute/window_geometry.hpp"

namespace actorps {

/// See backend::im2col. REQUIRES: g.valid().
void im2col_host(const window_geometry& g, int n, const float* x, float* col);

/// See backend::col2im. REQUIRES: g.valid().
void col2im_host(const window_geometry& g, int n, const float* col, float* dx);

/// See backend::maxpool. REQUIRES: g.valid().
void maxpool_host(const window_geometry& g, int n, const float* x, float* y, float* argmax);

/// See backend::maxpool_backward. REQUIRES: g.valid().
void maxpool_backward_host(const window_geometry& g, int n, const float* dy, const float* argmax,
                           float* dx);

/// See backend::depthwise. REQUIRES: g.valid().
void depthwise_host(const window_geometry& g, int n, const float* x, const float* w, float* y);

/// See backend::depthwise_backward_input. REQUIRES: g.valid().
void depthwise_backward_input_host(const window_geometry& g, int n, const float* dy, const float* w, float* dx);

/// See backend::depthwise_backward_weights. REQUIRES: g.valid().
void depthwise_backward_weights_host(const window_geometry& g, int n, const float* x, const float* dy, float* dw);

} // namespace actorps
