// When a worker's gradients go out: each shard's share of a step cut into parts that backprop
// completes one after the other (cluster.push-bucket-bytes), so the first parts travel, and the
// shard applies them, while the worker still computes the layers below (wait-free backprop).
// Plain logic without CAF: the worker asks which parts are due and sends them.
#pragma once

#include "messages/shard_protocol.hpp"

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace actorps {

/// Ranges of one push and when they are complete.
struct push_part {
  std::vector<slice_ref> ranges;
  uint32_t ready_after = 0; ///< complete once every variable >= this has its gradient
  bool rows = false;        ///< also carries the step's row slices of an embedding table
};

class push_plan {
public:
  push_plan() = default;

  /// held: per shard, the ranges the worker trains. Backprop completes variables from the last
  /// to the first; a part closes once it holds bucket_floats values (0: one part per shard, due
  /// when backprop is over), and no part carries more than max_floats (larger ones are split,
  /// as cluster.max-message-bytes demands).
  push_plan(const std::vector<std::vector<slice_ref>>& held, uint64_t bucket_floats, uint32_t max_floats);

  /// Shard s holds parts of embedding table `variable`: its last part (an empty one if it has
  /// none) carries the step's rows of that table too, and falls due once the table's gradient
  /// is complete.
  void carry_rows(uint32_t s, uint32_t variable);

  /// Shard s's parts, in the order they fall due.
  const std::vector<push_part>& parts(uint32_t s) const { return parts_.at(s); }

  /// Parts that go out before backprop ends only where early(ready_after) says so
  /// (cluster.push-early-ms): a part it refuses joins the shard's next part, its ranges first
  /// (and its rows, if it carries them), as long as the joined part stays within max_floats; a
  /// shard's last part stays as it is. Call between steps. Returns the parts left in all.
  size_t keep_early(const std::function<bool(uint32_t ready_after)>& early);

  /// The parts of every shard in all.
  size_t count() const;

  /// A new step: no part is sent yet.
  void begin_step();

  /// Backprop has the gradient of every variable >= floor (0: all): returns the (shard, part)
  /// pairs due now that were not returned before in this step, shard by shard, in order.
  std::vector<std::pair<uint32_t, uint32_t>> due(uint32_t floor);

private:
  std::vector<std::vector<push_part>> parts_; // per shard
  std::vector<size_t> sent_;                  // per shard: parts returned this step
  uint32_t max_floats_ = 0;
};

} // namespace actorps
