// Bias kernels: broadcast-add a bias row and sum a matrix's rows (the bias gradient).
#pragma once

#include <cuda_runtime.h>

namespace actorps::gpu {

/// y[i][j] += bias[j] for a row-major rows x cols matrix.
cudaError_t launch_add_bias(float* y, const float* bias, int rows, int cols, cudaStream_t s);

/// out[j] = sum_i x[i][j], summed in row order (deterministic).
cudaError_t launch_sum_rows(const float* x, float* out, int rows, int cols, cudaStream_t s);

} // namespace actorps::gpu
