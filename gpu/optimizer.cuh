// Optimizer update kernels; the formulas are those of compute/optimizer_rules.hpp.
#pragma once

#include "compute/optimizer_rules.hpp"

#include <cuda_runtime.h>

#include <cstddef>

namespace actorps::gpu {

/// Applies update number t of p to n weights in device memory (slots as slot_count(p.kind) needs).
cudaError_t launch_apply_update(const optimizer_params& p, long t, size_t n, float* w,
                                const float* g, float* slot0, float* slot1, cudaStream_t s);

/// Applies update number t of p to `count` rows of `cols` weights in device memory: gradient row j
/// (g + j * cols) to the weights at w + at[j] and the slots at the same offsets; `at` in device
/// memory, the rows distinct (compute/optimizer_rules.hpp's apply_rows_host).
cudaError_t launch_apply_rows(const optimizer_params& p, long t, size_t cols, const size_t* at, size_t count,
                              float* w, const float* g, float* slot0, float* slot1, cudaStream_t s);

/// y += alpha * x over n elements (deterministic elementwise).
cudaError_t launch_axpy(size_t n, float alpha, const float* x, float* y, cudaStream_t s);

/// x *= alpha over n elements.
cudaError_t launch_scale(size_t n, float alpha, float* x, cudaStream_t s);

} // namespace actorps::gpu
