// The rules of synchronous updates for one shard, without CAF: which gradients count for which
// step, when a step is complete, who is stale, who may go on. The SyncAggregator actor applies
// what these classes decide. Single-threaded.
#pragma once

#include "common/row_places.hpp"
#include "messages/shard_protocol.hpp"

#include <caf/expected.hpp>

#include <cstdint>
#include <optional>
#include <vector>

namespace actorps {

/// SyncReplicasOptimizer's rule: step t collects gradients tagged t from live workers; once
/// replicas_to_aggregate of them arrived (or every live worker, if fewer live), their average --
/// summed in worker order, not arrival order -- is applied once and the step advances. Gradients
/// tagged with an earlier step are stale: dropped, and their sender told the current step.
/// Row slices of an embedding table (each worker names its own rows) are summed by row, so a
/// row several workers touched gets their sum and any other row its one gradient, divided alike
/// (by the contributions' count): the dense average of the same gradients, on the rows touched.
class sync_rule {
public:
  /// The outcome of offering a push.
  enum class verdict { accepted, stale };

  /// A completed step: the average to apply and whom to release.
  struct completed {
    uint64_t step = 0;
    std::vector<variable_slice> average;
    std::vector<uint32_t> released; ///< contributors in worker order
    uint32_t waited_on = 0;         ///< the contributor that arrived last
  };

  /// Worker ids 0..workers-1; the first `live_at_start` are live from the start (0: all), the
  /// others (elastic joiners) from their first push. A step applies its gradients' sum divided
  /// by `sum_over` (0: by their count: the average). REQUIRES: 1 <= replicas_to_aggregate.
  sync_rule(uint32_t workers, uint32_t replicas_to_aggregate, uint32_t live_at_start = 0, uint32_t sum_over = 0);

  uint64_t step() const { return step_; }
  /// Worker ids 0..workers()-1.
  uint32_t workers() const { return workers_; }
  uint32_t live_workers() const;

  /// Offers worker w's gradients for `step`. A worker that was lost counts as live again.
  /// Errors: unknown_worker, protocol_error (a step ahead of the current one, a second push for
  /// the step, or slices laid out differently from the first contribution).
  caf::expected<verdict> offer(uint32_t worker, uint64_t step, std::vector<variable_slice> grads);

  /// Returns whether the current step has every gradient it needs.
  bool ready() const;

  /// REQUIRES: ready(). Averages the contributions, advances the step and returns the result.
  completed complete();

  /// Stops waiting for worker w (its process died, or it stayed silent) and drops the gradient
  /// it holds for the current step (a restarted w pushes the step afresh); returns ready().
  bool lose(uint32_t worker);

  /// Returns the workers the current step still waits for.
  std::vector<uint32_t> missing() const;

  /// Moves to `step` if that is ahead and no gradient is held (a shard restored from a checkpoint
  /// resumes at the cluster's step); returns whether it moved. Until its next step completes it
  /// then follows a first push ahead of it (a restarted chief may go on at a step other shards
  /// kept, past this one's checkpoint).
  bool resume_at(uint64_t step);

private:
  uint32_t needed() const;

  uint32_t workers_;
  uint32_t replicas_;
  uint32_t sum_over_;
  uint64_t step_ = 0;
  std::vector<bool> live_;
  std::vector<std::optional<std::vector<variable_slice>>> grads_; // per worker, current step
  row_places places_; // (complete's merge of row slices: each row's place in the sum, kept between steps)
  uint32_t count_ = 0;
  uint32_t last_ = 0;
  bool catching_up_ = false; ///< resumed: a first push ahead of step_ moves it there
};

/// Stale synchronous parallel: updates apply at once, but a worker may start its next step only
/// while it is at most `staleness` steps ahead of the slowest live worker (0: lock-step).
/// Steps are counted per worker. A worker that is away (an elastic joiner, or one lost whose
/// restart counts from 0 again) enters at the slowest live worker's count with its first push,
/// whatever its own step number says, so it neither parks the others nor runs ahead of them.
/// After resume() the workers go on with their own counts.
class ssp_rule {
public:
  /// Worker ids 0..workers-1, the first `live_at_start` live from the start (0: all).
  ssp_rule(uint32_t workers, uint32_t staleness, uint32_t live_at_start = 0);

  /// Records that worker w finished `step` (its gradients were applied). A worker that is not
  /// live enters (see above). Returns how many steps w is now ahead of the slowest live worker.
  uint64_t finished(uint32_t worker, uint64_t step);

  /// Returns whether worker w may start its next step.
  bool may_continue(uint32_t worker) const;

  /// Stops waiting for worker w.
  void lose(uint32_t worker);

  /// After a restore from a checkpoint: the workers' steps go on from where they were, unknown
  /// here, so no worker holds the others back until its first push to this rule (a worker that
  /// has stopped, or died, never pushes again and must not park the rest forever).
  void resume();

  /// Returns the slowest live workers (those others may wait on).
  std::vector<uint32_t> slowest() const;

private:
  uint64_t min_live() const;

  /// live: counted; resumed: not counted until its next push, which keeps its count; away: not
  /// counted until its next push, which enters it at the slowest live count.
  enum class standing { live, resumed, away };
  bool live(uint32_t w) const { return standing_[w] == standing::live; }

  uint32_t staleness_;
  std::vector<standing> standing_;
  std::vector<uint64_t> done_;  // steps finished per worker, on the rule's count
  std::vector<int64_t> shift_;  // the rule's count minus the worker's own step numbers
};

} // namespace actorps
