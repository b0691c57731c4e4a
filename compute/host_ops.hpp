// Host-memory helpers the CPU-only actors use on whole tensors (vectorised).
#pragma once

#include <cstddef>

namespace actorps {

/// Returns whether none of x[0..n) is NaN or infinite.
bool all_finite(const float* x, size_t n);

} // namespace actorps
