// Where a push's gradient values lie when they are not inside its slices: a same-host worker's
// shared heap, mapped read-only by its ps node (common/shared_heap.hpp), read there in place.
// Plain logic.
#pragma once

#include "messages/shard_protocol.hpp"

#include <cstddef>
#include <vector>

namespace actorps {

/// `size` floats at `data`.
struct float_span {
  const float* data = nullptr;
  size_t size = 0;
};

/// Slice i's values of a push whose slices carry none (req.grads[i].data.values empty).
using gradient_spans = std::vector<float_span>;

/// The values of gradient slice i of a push: at[i] when `at` is given, else the slice's own.
inline float_span gradient_of(const variable_slice& g, const gradient_spans* at, size_t i) {
  if (at != nullptr)
    return (*at)[i];
  return {g.data.values.data(), g.data.values.size()};
}

} // namespace actorps
