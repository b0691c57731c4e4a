// SyncAggregator: sits beside a ParameterShard (so aggregation bandwidth scales with shards) and
// speaks the shard's interface. In sync mode it collects each step's gradients, averages
// replicas_to_aggregate of them in worker order, applies the average once, and releases the
// workers; late gradients are dropped and their sender told. In ssp mode it applies pushes at
// once but holds a worker's reply while it is more than `staleness` steps ahead of the slowest.
#pragma once

#include "actors/parameter_shard.hpp"
#include "config/cluster_options.hpp"

#include <caf/fwd.hpp>

#include <chrono>
#include <cstdint>
#include <string>

namespace actorps {

/// Settings of one aggregator.
struct sync_aggregator_config {
  uint32_t index = 0;                 ///< its shard's index
  train_mode mode = train_mode::sync; ///< sync or ssp
  uint32_t workers = 1;
  uint32_t replicas_to_aggregate = 1; ///< sync: 1..workers
  uint32_t staleness = 0;             ///< ssp
  std::chrono::milliseconds step_timeout{30000}; ///< a step goes on without a silent worker after this
  std::chrono::milliseconds request_timeout{60000}; ///< deadline of every request to its shard
  uint32_t live_at_start = 0;         ///< ids live from the start (0: all; elastic joiners count from their first push)
  uint32_t sum_over = 0;              ///< sync: divide a step's gradient sum by this (0: their count)
};

/// Spawns an aggregator in front of `shard`; the returned handle is used (and published) in the
/// shard's place. Beyond the shard's interface: push follows the mode; (stats_atom) adds the
/// stale-gradient, wait and lag counters; (stop_atom) stops the shard too. A worker whose actor
/// goes down, or that stays silent for step_timeout, no longer holds up a step; its next push
/// makes it count again (a restarted worker rejoins at the current step).
parameter_shard_actor make_sync_aggregator(caf::actor_system& sys, sync_aggregator_config cfg,
                                           parameter_shard_actor shard);

} // namespace actorps
