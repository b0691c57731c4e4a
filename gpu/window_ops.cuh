// Sliding-window kernels over NHWC images: im2col, col2im, max pooling, depthwise convolution
// and their gradients.
// CPU reference: compute/window_ops.cpp; the contracts are backend::im2col etc.
#pragma once

#include "compute/window_geometry.hpp"

#include <cuda_runtime.h>

namespace actorps::gpu {

cudaError_t launch_im2col(const window_geometry& g, int n, const float* x, float* col, cudaStream_t s);

cudaError_t launch_col2im(const window_geometry& g, int n, const float* col, float* dx, cudaStream_t s);

cudaError_t launch_maxpool(const window_geometry& g, int n, const float* x, float* y, float* argmax,
                           cudaStream_t s);

cudaError_t launch_maxpool_backward(const window_geometry& g, int n, const float* dy,
                                    const float* argmax, float* dx, cudaStream_t s);

cudaError_t launch_depthwise(const window_geometry& g, int n, const float* x, const float* w, float* y, cudaStream_t s);

cudaError_t launch_depthwise_backward_input(const window_geometry& g, int n, const float* dy, const float* w, float* dx,
                                            cudaStream_t s);

/// Doubles of scratch launch_depthwise_backward_weights needs.
size_t depthwise_weights_scratch(const window_geometry& g, int n);

cudaError_t launch_depthwise_backward_weights(const window_geometry& g, int n, const float* x, const float* dy,
                                              float* dw, double* scratch, cudaStream_t s);

} // namespace actorps::gpu
