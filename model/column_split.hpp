// The vertical split of model parallelism: every layer's units (the columns of its weights and
// bias) divided into K contiguous slices, as evenly as possible, the first slices taking one
// more unit when K does not divide the width.
#pragma once

#include "model/mlp_spec.hpp"

#include <string>

namespace actorps {

/// Columns [begin, end) of a layer.
struct column_range {
  int begin = 0;
  int end = 0;
  int size() const { return end - begin; }
};

/// Returns slice k of K of `units` columns. REQUIRES: 0 <= k < K <= units.
column_range slice_columns(int units, int k, int slices);

/// Returns an error text if spec cannot be split into `slices` slices (every layer, the logits
/// included, needs at least one unit per slice), empty otherwise.
std::string check_split(const mlp_spec& spec, int slices);

} // namespace actorps
