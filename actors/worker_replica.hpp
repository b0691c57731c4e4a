// WorkerReplica: between-graph replication. Owns partition j of W of the training data and a
// compute backend (CUDA if usable, else CPU); loops pull -> forward/backward -> push and reports
// progress to the chief. The only actor that computes on a GPU.
#pragma once

#include "actors/interfaces.hpp"
#include "actors/parameter_shard.hpp"
#include "config/cluster_options.hpp"
#include "config/train_options.hpp"
#include "data/dataset.hpp"

#include <caf/fwd.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace actorps {

/// Everything a worker needs.
struct worker_replica_config {
  uint32_t index = 0;                     ///< worker task index j
  train_settings train{};                 ///< model, batch size, seed, compute device
  worker_settings cluster{};              ///< its part of the cluster's settings (a slice of cluster_settings)
  std::shared_ptr<const data_splits> data{}; ///< the training set (read-only, may be shared)
  chief_actor chief{};
  std::vector<parameter_shard_actor> shards{}; ///< indexed by shard
  std::string host{};                        ///< where this worker runs, for the chief's logs
  /// Reaches a restarted chief (blocking, with retries); empty: losing the chief is fatal.
  std::function<caf::expected<chief_actor>()> reconnect_chief{};
  /// Reaches restarted shard s (blocking, with retries); empty: losing a shard is fatal.
  std::function<caf::expected<parameter_shard_actor>(uint32_t)> reconnect_shard{};
  /// Its node's telemetry: at each progress report the training loss, examples/sec and the
  /// step's compute, push and wait-for-values milliseconds (none: off).
  std::shared_ptr<telemetry> observed{};
};

/// The hello a worker with this model, placement and shards sends the chief (index: its id, or
/// joining_worker for an elastic join; devices: TensorFlow's names of those it computes on).
worker_hello worker_hello_for(const train_settings& train, const std::string& placement, uint32_t shards,
                              const data_splits& data, uint32_t index, std::string host,
                              std::vector<std::string> devices = {});

/// Spawns a worker. detached: on its own thread (production: compute and device waits must not
/// block the scheduler); false for deterministic tests. The worker quits normally after the
/// chief's stop, or with an error (the chief or a shard went away, a request timed out, the
/// backend failed).
worker_replica_actor make_worker_replica(caf::actor_system& sys, worker_replica_config cfg,
                                         bool detached = true);

} // namespace actorps
