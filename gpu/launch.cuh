// Launch geometry shared by the elementwise kernel families: 256-thread blocks, grid-stride loops.
#pragma once

#include <cstddef>

namespace actorps::gpu {

constexpr int block_threads = 256;

/// Returns the number of blocks for n elements, capped (grid-stride loops cover the rest).
inline unsigned grid_for(size_t n) {
  size_t g = (n + block_threads - 1) / block_threads;
  return static_cast<unsigned>(g < 65535 * 16 ? g : 65535 * 16);
}

} // namespace actorps::gpu

/// for (size_t i = this thread's first index; i < n; i += all threads of the grid)
#define ACTORPS_GRID_STRIDE(i, n)                                                          \
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < (n);                  \
       i += size_t{gridDim.x} * blockDim.x)
