// Batch-normalisation kernels: per-column moments, the normalisation and its gradient. Column
// sums run in two fixed-order stages (row chunks, then the chunks in order), in double, so the
// results are the same every run.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace actorps::gpu {

/// Doubles of scratch the moment and gradient kernels need for rows x cols.
size_t batch_norm_scratch(int rows, int cols);

/// mean[c], var[c] (biased) of the columns of x (rows x cols, row-major).
cudaError_t launch_channel_moments(const float* x, int rows, int cols, float* mean, float* var, double* scratch,
                                   cudaStream_t s);

/// y = gamma * (x - mean) / sqrt(var + eps) + beta; y may alias x.
cudaError_t launch_batch_norm(const float* x, int rows, int cols, const float* mean, const float* var,
                              const float* gamma, const float* beta, float eps, float* y, cudaStream_t s);

/// dgamma, dbeta and dx (which may alias dy) of batch normalisation with the batch's moments.
cudaError_t launch_batch_norm_backward(const float* x, const float* dy, int rows, int cols, const float* mean,
                                       const float* var, const float* gamma, float eps, float* dgamma, float* dbeta,
                                       float* dx, double* scratch, cudaStream_t s);

} // namespace actorps::gpu
