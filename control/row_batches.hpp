// A worker's batches whose embedding-table rows are being fetched: the batch of the step about to
// compute (its rows pulled first) and up to `depth` batches drawn ahead, in the order drawn, whose
// rows come back with the pushes that drew them (cluster.rows-with-push) or are pulled. Depth 1
// asks back the next batch's rows; with cluster.overlap-steps a step computes while the last
// step's exchange travels, so its rows must have been asked back one push earlier: depth 2.
// Each batch has a slot (0 .. depth) and the slot its own control/row_fetch; the caller keeps
// each slot's batch (its exchange, its rows) by slot, and tags every pull or push carrying rows
// with the slot and the fetch. Plain logic without CAF: the worker's actor (actors/worker_rows.cpp)
// and the simulator's workers run it.
#pragma once

#include "control/row_fetch.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

namespace actorps {

class row_batches {
public:
  /// `depth` batches drawn ahead at most (0: every step pulls its rows before it computes).
  explicit row_batches(size_t depth = 0);

  size_t depth() const { return slots_.size() - 1; }

  /// The slot of the step's own batch.
  size_t current() const { return current_; }

  /// Batches drawn ahead, waiting for their steps.
  size_t ahead() const { return ahead_.size(); }

  /// The step computes on a batch drawn now: a fetch of `pulls` row pulls in the current slot
  /// (row_fetch::begin: none computes at once).
  uint64_t begin(size_t pulls);

  /// The step computes on the oldest batch drawn ahead, whose slot becomes the current one:
  /// compute (its rows are in), wait (its last answer computes) or refetch (a push or pull that
  /// carried them failed: the caller begins anew). REQUIRES: ahead() > 0.
  row_fetch::next take_ahead();

  /// The slot the next batch drawn ahead takes (the caller draws it there, then begin_ahead).
  /// REQUIRES: ahead() < depth().
  size_t free_slot() const;

  /// A batch drawn ahead into free_slot(), its rows in `pulls` answers (pushes asking them back,
  /// pulls): its slot and fetch. REQUIRES: ahead() < depth().
  std::pair<size_t, uint64_t> begin_ahead(size_t pulls);

  /// An answer carrying fetch `fetch`'s rows into `slot` was placed (row_fetch::answered).
  row_fetch::next answered(size_t slot, uint64_t fetch);

  /// A pull or push carrying fetch `fetch` of `slot` failed (row_fetch::failed).
  row_fetch::next failed(size_t slot, uint64_t fetch);

  /// A shard went down: every fetch out fails. Returns the current slot's next (abandon while
  /// its rows are still out); those ahead are pulled anew when their steps compute.
  row_fetch::next failed_all();

  /// Whether an answer of `fetch` into `slot` still counts (its rows go into the slot's batch).
  bool counts(size_t slot, uint64_t fetch) const { return slot < slots_.size() && slots_[slot].current(fetch); }

  const row_fetch& fetch(size_t slot) const { return slots_[slot]; }

private:
  std::vector<row_fetch> slots_;
  size_t current_ = 0;
  std::deque<size_t> ahead_; // (oldest first)
};

} // namespace actorps
