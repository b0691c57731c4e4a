// Batch normalisation on the host (the CPU backend's kernels): per-column moments of a rows x
// channels matrix, the normalisation and its gradient. Sums run in double, row by row, so the
// results do not depend on the thread or the vector width.
#pragma once

namespace actorps {

/// mean[c], var[c]: the mean and the biased variance of column c (two passes).
void channel_moments_host(const float* x, int rows, int cols, float* mean, float* var);

/// y = gamma * (x - mean) / sqrt(var + eps) + beta; y may alias x.
void batch_norm_host(const float* x, int rows, int cols, const float* mean, const float* var, const float* gamma,
                     const float* beta, float eps, float* y);

/// dbeta = sum dy, dgamma = sum dy * xhat, dx = gamma / sqrt(var + eps) / rows * (rows * dy - dbeta -
/// xhat * dgamma), per column; dx may alias dy.
void batch_norm_backward_host(const float* x, const float* dy, int rows, int cols, const float* mean, const float* var,
                              const float* gamma, float eps, float* dgamma, float* dbeta, float* dx);

} // namespace actorps
