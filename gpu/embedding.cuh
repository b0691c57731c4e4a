// Embedding bag kernels: forward, one thread per output value summing its example's ids in slot
// order (as on the CPU, compute/embedding_ops.cpp); backward, one pass that zeroes the rows the
// ids pick, then one thread per value of dout adding its share to each id's row with atomics
// (the order of those sums varies).
#pragma once

#include "compute/backend.hpp"

#include <cuda_runtime.h>

namespace actorps::gpu {

cudaError_t launch_embedding_bag(const bag_geometry& g, const float* ids, const float* table, float* out, cudaStream_t s);

cudaError_t launch_embedding_bag_backward(const bag_geometry& g, const float* ids, const float* dout, float* dtable,
                                          cudaStream_t s);

} // namespace actorps::gpu
