// Model parallelism: the chief tells each slice its group, and the slices of a group exchange
// layer parts directly, worker actor to worker actor. Message by message in docs/protocol.md.
#pragma once

#include "messages/equality.hpp"
#include "messages/tensor.hpp"

#include <caf/actor_control_block.hpp>
#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <vector>

namespace actorps {

/// Chief -> each worker of a model-parallel group: (start_atom, slice_group): begin, exchanging
/// layer parts with these workers.
struct slice_group {
  uint32_t group = 0;
  std::vector<caf::strong_actor_ptr> slices{}; ///< index k: the worker holding slice k
};

/// Slice -> every other slice of its group: (slice_atom, layer_part).
struct layer_part {
  uint32_t from = 0;     ///< the sender's slice index
  uint64_t step = 0;     ///< the group's step number (0, 1, ...)
  int32_t layer = 0;     ///< the layer; stop_marker: the sender stops before `step`
  bool backward = false; ///< false: the sender's part of the layer's outputs; true: its
                         ///< contribution to the gradient of the layer's outputs in the
                         ///< receiver's columns
  tensor_buffer data{};  ///< rows x columns, row-major

  static constexpr int32_t stop_marker = -1;

  /// Slice `from`'s part of layer `layer`'s outputs in step `step`.
  static layer_part forward_part(uint32_t from, uint64_t step, int32_t layer, tensor_buffer data) {
    return layer_part{from, step, layer, false, std::move(data)};
  }
  /// Slice `from`'s contribution to the receiver's delta of layer `layer` in step `step`.
  static layer_part backward_part(uint32_t from, uint64_t step, int32_t layer, tensor_buffer data) {
    return layer_part{from, step, layer, true, std::move(data)};
  }
  /// Slice `from` stops before step `step`.
  static layer_part stop_before(uint32_t from, uint64_t step) {
    return layer_part{from, step, stop_marker, false, {}};
  }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, slice_group& x) {
  return f(caf::meta::type_name("slice_group"), x.group, x.slices);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, layer_part& x) {
  return f(caf::meta::type_name("layer_part"), x.from, x.step, x.layer, x.backward, x.data);
}

ACTORPS_FIELDWISE_EQ(slice_group, v.group, v.slices)
ACTORPS_FIELDWISE_EQ(layer_part, v.from, v.step, v.layer, v.backward, v.data)

} // namespace actorps
