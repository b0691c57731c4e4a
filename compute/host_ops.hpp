// Host-memory helpers the CPU-only actors use on whole tensors (vectorised).
#pragma once

#include <cstddef>

namespace actorps {

/// Returns whether none of x[0..n) is NaN or infinite.
bool all_finite(const float* x, size_t n);

/// to[i] += from[i] for i < n (the arrays do not overlap).
void add_into(float* to, const float* from, size_t n);

/// x[i] *= s for i < n.
void scale_values(float* x, size_t n, float s);

/// to[i] += s * from[i] for i < n (the product rounded, then the sum: no fused multiply-add).
void add_scaled(float* to, const float* from, size_t n, float s);

} // namespace actorps
