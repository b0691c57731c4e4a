// Elementwise kernels: activations and their derivatives, dropout, products.
// CPU references: compute/activation.hpp, compute/dropout_mask.hpp.
#pragma once

#include "compute/activation.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace actorps::gpu {

/// y = f(x) over n elements; y may alias x.
cudaError_t launch_activate(activation f, const float* x, float* y, size_t n, cudaStream_t s);

/// dx = dy * f'(x) from y = f(x) over n elements; dx may alias dy.
cudaError_t launch_activate_backward(activation f, const float* y, const float* dy, float* dx,
                                     size_t n, cudaStream_t s);

/// mask[i] = dropout_keep_scale(seed, i, rate); y[i] = x[i] * mask[i].
cudaError_t launch_dropout(size_t n, float rate, uint64_t seed, const float* x, float* y,
                           float* mask, cudaStream_t s);

/// out[i] = a[i] * b[i]; out may alias a or b.
cudaError_t launch_multiply(size_t n, const float* a, const float* b, float* out, cudaStream_t s);

} // namespace actorps::gpu
