// What each worker holds of a shard's values, for cluster.value-compression = topk: instead of
// the values, a worker gets the top-k of the difference between the values and what it holds
// (its view), and the view advances by exactly what was sent. What was not sent stays in the
// difference and goes out later (error feedback on the values). Views are keyed by worker,
// variable and offset of the slice, as workers pull and push the same slices every step.
// Plain logic, no CAF: the parameter store calls record() on a worker's pull and encode() when
// it answers a push.
#pragma once

#include "messages/shard_protocol.hpp"

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

namespace actorps {

/// What a receiver of values does with a slice: adds a delta to dst, copies anything else. The
/// shard advances its view of the worker with it, so both sides hold the same floats.
void merge_into(float* dst, const variable_slice& slice);

class value_views {
public:
  /// Worker w now holds values[0, n) of variable var from offset on (a pull's answer).
  void record(uint32_t w, uint32_t var, uint32_t offset, const float* values, size_t n);

  /// Turns slice (the shard's current values of a range) into what worker w receives, at
  /// precision p: with a view of the same range, the top-k (ratio) of the difference to it,
  /// marked as a delta; without one, the values themselves (rounded), which become the view.
  void encode(uint32_t w, variable_slice& slice, double ratio, wire_precision p);

  /// Drops every view of worker w.
  void forget(uint32_t w);

  /// Floats held in views (memory the shard spends on them).
  size_t floats() const;

private:
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, std::vector<float>> views_;
};

} // namespace actorps
