// Elementwise kernels: activations and their derivatives. CPU reference: compute/activation.hpp.
#pragma once

#include "compute/activation.hpp"

#include <cuda_runtime.h>

#include <cstddef>

namespace actorps::gpu {

/// y = f(x) over n elements; y may alias x.
cudaError_t launch_activate(activation f, const float* x, float* y, size_t n, cudaStream_t s);

/// dx = dy * f'(x) from y = f(x) over n elements; dx may alias dy.
cudaError_t launch_activate_backward(activation f, const float* y, const float* dy, float* dx,
                                     size_t n, cudaStream_t s);

} // namespace actorps::gpu
