// A worker's fetch of its batch's table rows before the step computes (an embedding model in a
// cluster): how many row pulls are out, and whether the step may compute or must be given up.
// Plain logic without CAF: the worker's actor (actors/worker_rows.cpp) and the simulator's
// workers run it; the answers it gives become the controller's inputs there.
#pragma once

#include <cstddef>
#include <cstdint>

namespace actorps {

class row_fetch {
public:
  /// idle: no fetch (between steps); pulling: row pulls are out; failed: the step was given up
  /// (its remaining answers still come, and are dropped). A fetch ahead (cluster.rows-with-push:
  /// the next batch's rows, asked for with this step's pushes) holds its result until the step
  /// computes: pulling_ahead (answers out), ready (every row in), failed_ahead (a push or pull
  /// carrying them failed: the step pulls its rows anew when it computes).
  enum class phase { idle, pulling, failed, pulling_ahead, ready, failed_ahead };

  /// What the worker does after an input: nothing yet, compute the step (every row is in), give
  /// the step up (replica_control::step_abandoned), or pull the batch's rows anew (refetch: its
  /// fetch ahead failed).
  enum class next { wait, compute, abandon, refetch };

  /// A new step's fetch of `pulls` row pulls; returns its number (each answer names it). With no
  /// pulls (a batch without ids) the step computes at once: the caller computes.
  uint64_t begin(size_t pulls);

  /// The next step's fetch, begun while this step pushes; its answers wait for release().
  uint64_t begin_ahead(size_t pulls);

  /// The step computes (its batch was drawn ahead): compute when every row is in, wait while
  /// some are out (the last answer says compute), refetch when the fetch ahead failed.
  /// REQUIRES: holds_ahead().
  next release();

  /// A pull of fetch `fetch` was answered, its rows placed.
  next answered(uint64_t fetch);

  /// A pull of fetch `fetch` failed (refused, timed out, its connection lost); 0: whichever fetch
  /// is out (a shard it pulls from went down).
  next failed(uint64_t fetch = 0);

  /// Whether an answer of `fetch` still counts (its rows go into the batch's table).
  bool current(uint64_t fetch) const {
    return fetch == fetches_ && (at_ == phase::pulling || at_ == phase::pulling_ahead);
  }

  /// Whether a fetch ahead is held for the next step (its batch drawn already).
  bool holds_ahead() const {
    return at_ == phase::pulling_ahead || at_ == phase::ready || at_ == phase::failed_ahead;
  }

  phase at() const { return at_; }
  uint64_t fetches() const { return fetches_; }

private:
  phase at_ = phase::idle;
  uint64_t fetches_ = 0;
  size_t waiting_ = 0;
};

} // namespace actorps
