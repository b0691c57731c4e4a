// Chief: initialises the shards' variables exactly once, waits for every worker (the barrier),
// owns the global step, evaluates on validation and test with the CPU backend, applies the stop
// rule, writes metrics and the summary, and stops everyone. Monitors every peer. CPU only.
#pragma once

#include "actors/interfaces.hpp"
#include "actors/parameter_shard.hpp"
#include "config/cluster_options.hpp"
#include "config/train_options.hpp"
#include "data/dataset.hpp"
#include "train/run_monitor.hpp"

#include <caf/fwd.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace actorps {

/// How a chief's run ended; written by the chief before it quits, read by the node's main.
struct chief_outcome {
  std::mutex mtx;
  bool ok = false;
  std::string message;                ///< the error, when !ok
  errc code = errc::none;             ///< its code (invalid_config: a bad configuration)
  std::optional<run_summary> summary; ///< when ok
};

/// Everything the chief needs.
struct chief_config {
  train_settings train;
  run_settings cluster;                    ///< its part of the cluster's settings
  optimizer_params shard_optimizer;        ///< what the shards apply (config's shard_optimizer)
  std::shared_ptr<const data_splits> data; ///< validation and test sets, and the epoch size
  std::vector<parameter_shard_actor> shards;
  /// With cluster.tensor-stream: a link per shard (its tensor stream) for the evaluations' reads
  /// of an embedding table's rows, read into this process's shared heap where the shard shares
  /// its host; empty: the shards' handles. A link that ends gives way to the shard's handle.
  std::vector<parameter_shard_actor> row_links;
  /// Opens a row link to restored shard s at the handle given (blocking); empty: a restored
  /// shard's rows are read through its handle.
  std::function<caf::expected<parameter_shard_actor>(uint32_t, parameter_shard_actor)> relink_rows;
  std::shared_ptr<chief_outcome> outcome;
  /// Reaches restarted shard s (blocking, with retries); empty: losing a shard is fatal. Used
  /// only with checkpoint.dir (a restarted shard is restored from the last checkpoint).
  std::function<caf::expected<parameter_shard_actor>(uint32_t)> reconnect_shard;
  /// Its node's telemetry: evaluations, progress, the shards' counters at each evaluation (the
  /// lag histogram, stale drops, stragglers) and the stall counts (none: off).
  std::shared_ptr<telemetry> observed;
};

/// The chief's configuration for this cluster and run (its data, shards, outcome and reconnector
/// are the caller's to set).
chief_config chief_config_for(const train_settings& train, const cluster_settings& cluster);

/// Why the run failed, as its node reports it (exit 1, or 2 for a bad configuration): the
/// chief's own message, or, where the chief ended without failing the run itself (an exception,
/// an exit message from a peer), its exit reason; "" when the run ended with its summary.
/// REQUIRES: outcome.mtx held.
std::string outcome_failure(const chief_outcome& outcome, const caf::error& exit_reason);

/// Spawns the chief (detached: its evaluations compute on its own thread; false in tests).
chief_actor make_chief(caf::actor_system& sys, chief_config cfg, bool detached = true);

} // namespace actorps
