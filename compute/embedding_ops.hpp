// Embedding bags on the host (the CPU backend's kernels): each example's ids in slot order, so
// sums run in a fixed order.
#pragma once

#include "compute/backend.hpp"

namespace actorps {

/// See backend::embedding_bag.
void embedding_bag_host(const bag_geometry& g, const float* ids, const float* table, float* out);

/// See backend::embedding_bag_backward.
void embedding_bag_backward_host(const bag_geometry& g, const float* ids, const float* dout, float* dtable);

} // namespace actorps
