// A whole cluster in one thread and virtual time: the real chief and worker controllers
// (control/run_control, control/replica_control) and shards with the real update rules
// (control/sync_rules), wired by a seeded network of per-link FIFO channels (TCP's order, CAF's
// delivery: delays and reordering across links, no loss between live nodes). Faults crash,
// restart, freeze and slow workers. The invariants are checked after every event; the first
// violation stops the run with a transcript and the seed that replays it.
#pragma once

#include "control/chief_commands.hpp"
#include "control/in_graph_driver.hpp"
#include "control/lease_desk.hpp"
#include "control/replica_control.hpp"
#include "control/row_fetch.hpp"
#include "control/run_control.hpp"
#include "control/ssp_session.hpp"
#include "control/sync_rules.hpp"
#include "control/sync_session.hpp"
#include "sim/scenario.hpp"

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <vector>

namespace actorps::sim {

/// How a simulated run ended.
struct outcome {
  bool ok = true;
  std::string violation;               ///< the first invariant broken (empty when ok)
  std::vector<std::string> transcript; ///< the last lines of the run's log
  uint64_t events = 0;
  vtime end = 0;                       ///< virtual time of the last event
  std::string stop_reason;
  int64_t steps = 0;                   ///< the chief's global step
  int64_t worker_steps = 0;            ///< the workers' fresh steps
  int64_t stale_steps = 0;             ///< sync: steps every shard dropped
  int64_t split_steps = 0;             ///< sync: steps some shards dropped
  std::vector<uint64_t> versions;      ///< each shard's updates applied
  uint64_t stale_dropped = 0;          ///< sync: pushes the shards' sessions dropped as stale (a restart counts anew)
  int64_t epochs = 0;                  ///< elastic: epochs the chief's ledger closed (each example once)
  int64_t attached = -1;               ///< the global step the first chief continued at from kept variables
  uint64_t slice_parts = 0;            ///< model-parallel: layer parts the slices received (not stop notices)
  uint64_t links_ended = 0;            ///< links: a worker's link ended at an exchange's deadline
  uint64_t evaluations_failed = 0;     ///< the chief's evaluations whose reads waited past their deadline
};

/// A worker's request to a shard: the shard's epoch at the worker (replica_control::requested)
/// and the request's id, answered once -- by its reply, its failure or its timeout.
struct request_tag {
  uint64_t epoch = 0;
  uint64_t id = 0;
  bool push = false;
  uint64_t fetch = 0; ///< a row pull (or a push asking rows back) of this fetch (0: not one) ...
  size_t slot = 0;    ///< ... into this slot of the worker's row_batches
  uint64_t ahead = 1; ///< a push asking rows back: of the step this many after its own
};

/// A push waiting for its reply at a simulated shard: ssp, parked; sync, a ticket of its session.
struct held_reply {
  uint64_t incarnation;
  request_tag tag;
  uint64_t version = 0;
  uint64_t next_step = 0;
};

/// The splitmix64 generator: the same sequence for a seed on every platform.
class rng {
public:
  explicit rng(uint64_t seed) : state_(seed) {}
  uint64_t next();
  /// Uniform in [0, n) (n > 0).
  uint64_t below(uint64_t n) { return next() % n; }
  /// Uniform in [0, 1).
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
  uint64_t state_;
};

/// Threading: single-threaded; one run per object.
class cluster {
public:
  explicit cluster(scenario sc);
  ~cluster();

  /// Runs the scenario to its end (the chief quits or fails, the queue empties, or an invariant
  /// breaks) and returns how it ended.
  outcome run();

private:
  struct event {
    vtime at;
    uint64_t seq;
    std::function<void()> fn;
  };
  struct later {
    bool operator()(const event& a, const event& b) const { return a.at != b.at ? a.at > b.at : a.seq > b.seq; }
  };
  struct worker_node;
  struct shard_node;

  // The network: node ids are 0 (chief), 1..S (shards), S+1..S+W (workers).
  uint32_t chief_id() const { return 0; }
  uint32_t shard_id(uint32_t s) const { return 1 + s; }
  uint32_t worker_id(uint32_t j) const { return 1 + sc_.shards + j; }
  void at(vtime t, std::function<void()> fn);
  void send(uint32_t from, uint32_t to, std::function<void()> fn);
  void to_worker(uint32_t from, uint32_t j, uint64_t incarnation, std::function<void(worker_node&)> fn);

  void log(const std::string& who, const std::string& text);
  void violate(const std::string& what);
  void log_state();

  // The chief.
  void chief_execute(run_commands cmds);
  void to_chief(uint32_t from, std::function<void()> fn, uint64_t incarnation = 0);
  void evaluation_read(uint64_t op, vtime start);
  void chief_at(vtime t, std::function<void()> fn);
  void restart_chief();
  void setup_shard(uint32_t s);
  void reach_chief(uint32_t j, uint64_t inc);
  void send_hello(uint32_t j, uint64_t inc);
  void on_hello(uint32_t j, uint64_t incarnation);
  void on_join();
  // The chief's commands (sim/cluster_chief.cpp): control/chief_commands' meaning, this cluster
  // the host of its primitives.
  class chief_host;
  struct worker_host;
  // The chief's in-graph steps (sim/cluster_in_graph.cpp): control/in_graph_driver's rules, this
  // cluster its host.
  class in_graph_chief;
  void make_in_graph_driver();
  void in_graph_step();
  void send_part(uint64_t step, in_graph_round::assignment a);
  void on_part(uint32_t j, uint64_t step, uint32_t part, int rows, uint64_t token);
  void push_average(const in_graph_round::result& result, uint64_t token);
  void in_graph_worker_down(uint32_t j);
  void on_lease(uint32_t j, uint64_t incarnation, uint64_t epoch, const lease_request& req);
  bool settle_leases(uint32_t j, const lease_request& req);
  void finish_summary();

  // A worker.
  void start_worker(uint32_t j);
  void worker_execute(uint32_t j, replica_commands cmds);
  void worker_pull(uint32_t j);
  void worker_push(uint32_t j);
  void worker_compute(uint32_t j, int rows);
  // A model-parallel slice's exchange with its group (sim/cluster_slices.cpp).
  struct slice_node_host;
  void make_slice(uint32_t j);
  void slice_compute(uint32_t j, int rows);
  void slice_follow(uint32_t j, caf::error err);
  void worker_gone(uint32_t j, bool crashed, const std::string& why);
  /// The run's end as each worker still running reads it (sim/cluster_workers.cpp).
  void wind_down();

  // A shard.
  void to_shard(uint32_t from, uint32_t s, std::function<void()> fn, std::function<void()> lost = {},
                uint64_t incarnation = 0);
  std::function<void()> request_lost(uint32_t s, uint32_t j, uint64_t incarnation, request_tag tag);
  request_tag open_request(uint32_t j, uint32_t s, bool push);
  bool answered(worker_node& w, uint32_t s, request_tag tag);
  void shard_refuse(uint32_t s, uint32_t j, uint64_t incarnation, request_tag tag);
  // A table's rows (sim/cluster_rows.cpp): a step's fetch, its answers, and what it leads to.
  void worker_fetch_rows(uint32_t j, int rows);
  /// Worker j's rows of step `step`'s batch, pulled from every shard into fetch `fetch` of `slot`.
  void worker_pull_rows(uint32_t j, size_t slot, uint64_t fetch, uint64_t step);
  /// A failure of worker j's fetch `fetch` of `slot`, carried out (give the step up, or pull anew later).
  void fetch_failed(uint32_t j, size_t slot, uint64_t fetch);
  /// A shard went down: every fetch of worker j out fails.
  void fetches_failed(uint32_t j);
  void link_expired(uint32_t j, uint32_t s);
  /// What a failed fetch says: worker j's step is given up where it says abandon.
  void abandon_if(uint32_t j, row_fetch::next next);
  void shard_serve_rows(uint32_t s, uint32_t j, uint64_t incarnation, request_tag tag, uint64_t step);
  /// A fetch must read every row of worker j's step `step` at least at the worker's own last update.
  void check_own_rows(uint32_t s, uint32_t j, uint64_t incarnation, uint64_t step);
  /// Sync, the rows worker j's push asked back for step `step`: read once every step before it
  /// is applied (with its own rows, every contributor's), and at least at its own last update.
  void check_sync_rows(uint32_t s, uint32_t j, uint64_t incarnation, uint64_t step);
  /// cluster.rows-with-push: the step computes on the rows its worker asked back with its pushes.
  void worker_take_rows_ahead(uint32_t j, int rows);
  void shard_row_push(uint32_t s, uint32_t j, uint64_t step);
  void compute_timer(uint32_t j, int rows);
  void reach_shards(uint32_t j, uint64_t inc, std::vector<uint32_t> lost);
  void restore_shard(uint32_t s);
  void set_up_again(uint32_t s, uint64_t version);
  void shard_push(uint32_t s, uint32_t j, uint64_t incarnation, request_tag tag, uint64_t step, uint64_t base);
  void apply_own(uint32_t s, uint32_t j, uint64_t step, uint64_t base);
  void shard_reply(uint32_t s, uint32_t j, uint64_t incarnation, request_tag tag, uint64_t version, uint64_t next_step,
                   bool stale);
  void shard_apply_sync(uint32_t s, sync_session<held_reply>::step_done done);
  void shard_arm_step_clock(uint32_t s, vtime after);
  void shard_lose(uint32_t s, uint32_t j);
  void shard_ssp_released(uint32_t s, ssp_session<held_reply>::released out);
  void shard_sessions(shard_node& sh, run_time now) const;
  float expected_average(const sync_rule::completed& done) const;
  /// Sync pushes carry a table's row slice too: worker j's rows of a table of table_rows rows
  /// for `step` (drawn from the seed), and the check of a completed step's sum by row.
  static constexpr uint32_t table_rows = 32;
  std::vector<uint32_t> table_rows_of(uint32_t j, uint64_t step) const;
  std::string check_table_rows(const sync_rule::completed& done) const;

  void inject(const fault& f);
  void check_ssp(uint32_t s, uint32_t j);
  void check_end();

  run_time clock() const { return run_time{} + std::chrono::microseconds(now_); }

  scenario sc_;
  rng rng_;
  std::priority_queue<event, std::vector<event>, later> queue_;
  uint64_t seq_ = 0;
  vtime now_ = 0;
  std::vector<vtime> link_last_; // per (from, to): the last delivery time (FIFO per link)
  std::vector<vtime> cut_until_; // per node: cut off by a partition until then
  run_control_config rc_;                 // the chief's (a restart gets the same)
  std::unique_ptr<run_control> chief_;
  uint64_t chief_inc_ = 1;                // the chief's process: messages to an older one are lost
  bool chief_alive_ = true;
  uint32_t chief_crashes_ = 0;
  bool sigtermed_ = false;                // the chief took a SIGTERM while training
  struct checkpoint {
    int64_t steps;
    int64_t examples;
    std::vector<uint64_t> versions;     // each shard's snapshot
    std::vector<uint64_t> incarnations; // of the shards snapshotted (0: one was not set up)
    std::vector<int64_t> data_plan;     // elastic: the ledger's save()
    std::vector<uint32_t> members;      // elastic: the ids of the workers in the job
  };
  uint32_t shard_crashes_ = 0;
  bool no_checkpoint_ = false; // a shard was lost before any checkpoint: the run fails, by design
  // Storage faults (fault::kind::corrupt_checkpoint): what reading a saved checkpoint back finds.
  enum class storage { intact, missing, truncated, bad_checksum };
  struct saved_checkpoint {
    checkpoint c;
    storage state = storage::intact;
  };
  static constexpr size_t checkpoints_kept = 3; // (checkpoint.keep's default)
  std::vector<saved_checkpoint> ckpts_;   // the chief's saves, oldest first
  // The checkpoint a restart or a restore reads (the real rule, common/checkpoint_choice: the
  // newest that verifies); none saved: nullopt; none verifying: the error naming each. `say`:
  // log the ones skipped, as a real restore does (not when only asking whether one exists).
  caf::expected<std::optional<checkpoint>> restorable(bool say = true);
  std::vector<std::unique_ptr<worker_node>> workers_; // sc_.worker_slots(): the configured, then joiners
  std::optional<lease_desk> desk_;        // elastic: the chief's data ledger (its process's)
  struct in_graph_node {                  // in-graph: the chief's driver (its process's)
    std::unique_ptr<in_graph_host> host;
    std::unique_ptr<in_graph_driver> driver;
    int rows = 0;                         // the step's global batch
    uint64_t requests = 0;
    std::set<uint64_t> open;              // part requests awaiting an answer
  };
  in_graph_node ig_;
  uint32_t joins_ = 0;                    // joiners admitted
  std::vector<std::unique_ptr<shard_node>> shards_;
  std::deque<std::string> transcript_;
  outcome out_;
  bool over_ = false;
  bool summarized_ = false;
  uint32_t crashes_ = 0;
  uint32_t leaves_ = 0; // elastic: workers that left (SIGTERM)
  int64_t rounds_pushed_ = 0; // push rounds the workers began
  int64_t attached_worker_steps_ = 0; // the chief's worker steps at its attach (scopes)
  int64_t pushes_timed_out_ = 0; // pushes the shard may have applied, their rounds dropped
  bool unreported_ = false;      // the chief finished without a final report (cluster.request-timeout passed)
  uint32_t silenced_ = 0; // ssp: workers let go for silence (they re-enter at the slowest count)
  uint32_t unlinked_ = 0; // workers let go as their link's stream closed (ssp: likewise)
  vtime last_fault_heals_ = 0;
};

/// Runs `sc` and returns its outcome (a convenience for tests and the tool).
outcome simulate(const scenario& sc);

/// Scopes (train.scope on keep-alive shards, the twin of integration.scopes): `first` trains a
/// scope; a second session (`first` with twice its max-steps and the next seed) attaches to the
/// variables the shards kept. Returns both outcomes; the second also fails unless it continued
/// at the step the kept variables are at and stopped at its own max-steps. (Sessions in other
/// scopes share nothing but the shard processes: each is a fresh run.)
std::vector<outcome> simulate_scopes(const scenario& first);

} // namespace actorps::sim
