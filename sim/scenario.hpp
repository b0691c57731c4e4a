// What one simulated run is: the cluster's shape, its mode and limits, the network's delays, and
// the faults to inject, all drawn from one seed (scenario_for) or set by hand (actorps-sim).
#pragma once

#include "control/train_mode.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace actorps::sim {

/// Virtual time in microseconds since the run began.
using vtime = int64_t;

/// One fault, injected at `at`.
struct fault {
  enum class kind {
    crash_worker,  ///< worker `node` dies (kill -9); restarted `duration` later when duration > 0
    freeze_worker, ///< worker `node` stops computing for `duration` (SIGSTOP, then SIGCONT)
    slow_worker,   ///< worker `node` computes `factor` times slower from now on
    crash_chief,   ///< the chief dies (kill -9) and restarts `duration` later from its last checkpoint
    crash_shard,   ///< shard `node` dies (kill -9), restarts `duration` later and is restored from the
                   ///< last checkpoint by the chief
    sigterm_chief, ///< SIGTERM to the chief: the run ends as at its limit (`node` not used)
    leave_worker,  ///< SIGTERM to worker `node`: it leaves the job cleanly (elastic)
    join_worker,   ///< a new worker process asks the chief to join (elastic; `node` not used)
    partition,     ///< worker `node` is cut off from every other node for `duration` (shorter than the
                   ///< timeouts: TCP holds the connections and delivers what was sent once it heals)
    sigterm_shard, ///< SIGTERM to shard `node`: its node asks the chief to end the run as at its limit
    corrupt_checkpoint, ///< the newest checkpoint saved so far reads back damaged: `node` % 3 picks its
                        ///< file missing, truncated or failing its checksum (a restart takes an older one)
    freeze_shard,  ///< shard `node`'s process stops for `duration` (SIGSTOP, a scheduler's suspend, then
                   ///< SIGCONT): what reaches it meanwhile is handled once it wakes, in order
  };
  kind what = kind::crash_worker;
  vtime at = 0;
  uint32_t node = 0;
  vtime duration = 0;
  double factor = 1.0;
};

const char* to_string(fault::kind k);

/// A run of the simulator.
struct scenario {
  uint64_t seed = 1;
  train_mode mode = train_mode::async;
  uint32_t workers = 4;
  uint32_t shards = 2;
  uint32_t replicas_to_aggregate = 0; ///< sync; 0: every worker
  uint32_t staleness = 2;             ///< ssp
  int64_t max_steps = 200;
  int report_every = 10;
  vtime step_timeout = 30'000'000;    ///< sync: a silent worker stops holding up a step
  vtime request_timeout = 0;          ///< a worker's request to a shard fails after this (0: never)
  vtime compute = 2'000;              ///< a step's compute time (each step jitters up to +50%)
  vtime latency = 200;                ///< one message's delay (each jitters up to +100%)
  vtime bound = 600'000'000;          ///< the run must end within this much after its last fault heals
  int64_t checkpoint_every = 0;       ///< the chief saves a checkpoint every N global steps (0: never)
  int64_t eval_every = 0;             ///< the chief evaluates every N global steps (0: never), as train.eval-every
  vtime eval_time = 1'000;            ///< how long an evaluation's pulls take (a shard lost meanwhile drops it)
  bool elastic = false;               ///< async: data leases from the chief's epoch ledger; joins and leaves
  int train_rows = 2'000;             ///< elastic, epochs: examples per epoch
  /// > 0 (async, ssp, sync without backups; not elastic, in-graph or model-parallel): the run
  /// stops after these epochs of train_rows instead of max_steps, as the real chief counts them:
  /// each worker its own partition's batches (run_control_config::worker_budgets)
  int epochs = 0;
  int lease_rows = 100;               ///< elastic: examples per lease
  bool in_graph = false;              ///< sync: the chief drives each step, the workers compute its parts
  uint32_t slices = 1;                ///< model-parallel: workers per group (each a slice of the model)
  /// train.scope on keep-alive shards: the versions at which the shards keep the scope this
  /// session attaches to (a session before it trained there); empty: a fresh scope.
  std::vector<uint64_t> kept;
  int overlap_steps = 0;              ///< async: cluster.overlap-steps (the next step computes while a step's exchange travels)
  /// An embedding table (async, sync, ssp): each step first pulls its rows from every shard
  /// (control/row_batches, as the worker's actor) and pushes row gradients; shards keep each row's
  /// version. Drawn from a third of the seeds without elastic membership (overlapped: async only).
  bool table = false;
  /// A table: the next step's rows are asked back with each push and read after its update
  /// (sync: its step's; ssp: as its answer goes, after any wait) (cluster.rows-with-push;
  /// control/row_batches' batches ahead: two with overlap, the pushes asking back the rows of the
  /// step after the one computed ahead). Drawn from half the async, sync and ssp table seeds
  /// without overlap, every one with it (rows_with_push_drawn).
  bool rows_with_push = false;
  /// The workers reach the shards over the tensor stream, each through a ShardLink (the default
  /// transport): a request's deadline is the link's, which ends the link -- every request of that
  /// worker to that shard fails as a lost connection, the worker hears shard s went down and
  /// reaches it again, the same process once it answers (node/run_node's shard_reconnector).
  /// Without links, the deadline is CAF's timer of the one request (BASP: pull afresh).
  bool links = false;
  std::vector<fault> faults;

  /// Worker processes over the run: the configured ones and one per join.
  uint32_t worker_slots() const;

  /// Returns the command line of actorps-sim that replays this scenario.
  std::string replay() const;
};

/// Size classes of the seeded scenarios.
enum class scale { small, large };

/// What a seed draws from besides its mode.
struct draw {
  scale size = scale::small;
  bool elastic = false;       ///< an elastic job whose faults include leaves and joins (not in-graph)
  bool in_graph = false;      ///< (sync only) train.replication = in-graph
  bool shard_crashes = false; ///< the faults include shards killed and restored (a seed's other
                              ///< draws stay those it has without)
  bool storage_faults = false; ///< the faults include damaged checkpoints (likewise)
  bool overlap = false;        ///< async or ssp, not elastic: cluster.overlap-steps = 1 (the draws stay the same)
  bool shard_freezes = false;  ///< the faults include shards frozen, up to 3 request timeouts, and the
                               ///< workers reach the shards through links (likewise; not model-parallel
                               ///< or in-graph)
};

/// Whether a run of sc's shape may train a table (config/table_rules: async, sync or ssp, not
/// elastic or in-graph; overlapped only in async).
bool table_allowed(const scenario& sc);

/// Whether the seed of an async, sync or ssp table run draws cluster.rows-with-push.
bool rows_with_push_drawn(const scenario& sc);

/// Draws a scenario for `seed` in `mode`: the shape (small: 1-8 workers, 1-4 shards; large: up
/// to 256 workers and 16 shards), the limits and a few faults, all from the seed.
scenario scenario_for(uint64_t seed, train_mode mode, draw d = {});

} // namespace actorps::sim
