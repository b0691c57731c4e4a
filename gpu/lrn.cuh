// Local response normalisation kernels: one thread per element; the window sums run in channel
// order as on the CPU (compute/lrn_ops.cpp).
#pragma once

#include "compute/backend.hpp"

#include <cuda_runtime.h>

namespace actorps::gpu {

cudaError_t launch_lrn(const float* x, int rows, int cols, const lrn_params& p, float* y, cudaStream_t s);

/// dx must not alias dy (the kernel reads neighbours' dy): the backend stages through scratch.
cudaError_t launch_lrn_backward(const float* x, const float* y, const float* dy, int rows, int cols, const lrn_params& p,
                                float* dx, cudaStream_t s);

} // namespace actorps::gpu
