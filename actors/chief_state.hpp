// The Chief actor's state and the functions its source files share: chief.cpp (the behaviour,
// and carrying out run_control's commands), chief_setup.cpp (preparing the run, setting shards
// up, restoring a lost one) and chief_in_graph.cpp (in-graph replication's steps). Included by
// those files only.
#pragma once

#include "actors/chief.hpp"
#include "actors/shard_reads.hpp"
#include "control/in_graph_driver.hpp"
#include "control/run_control.hpp"
#include "control/traffic_meter.hpp"
#include "checkpoint/checkpoint_store.hpp"
#include "checkpoint/staged_model.hpp"
#include "compute/backend.hpp"
#include "data/batcher.hpp"
#include "control/lease_desk.hpp"
#include "control/silence_watch.hpp"
#include "control/stall_watch.hpp"
#include "model/network.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <memory>
#include <optional>
#include <vector>

namespace actorps::detail {

/// In-graph replication: the chief's steps (actors/chief_in_graph.cpp).
struct in_graph_state {
  std::unique_ptr<in_graph_host> host;      // the actor's primitives (chief_in_graph.cpp)
  std::unique_ptr<in_graph_driver> driver;  // the step's rules (control/in_graph_driver)
  std::unique_ptr<batcher> order;  // the one global data order, batches of workers x batch-size
  std::vector<int32_t> rows;       // the step's global batch (kept while the step is run again)
  uint64_t augment_seed = 0;
};

/// Elastic membership: the data leases and what the summary counts (actors/chief_elastic.cpp).
struct elastic_state {
  std::optional<lease_desk> desk; // the data ledger and the lease rule
  int64_t joins = 0;
  int64_t leaves = 0;
  int64_t crashes = 0;
  int64_t epochs_counted = 0;
  bool counts_exact = true; ///< every counted epoch used each example exactly once
};

struct chief_state {
  chief_config cfg;
  bool detached = true; // on a thread of its own (false in deterministic tests)
  std::unique_ptr<backend> be;
  std::unique_ptr<network> net;
  std::optional<run_log> log;
  std::optional<run_monitor> monitor;
  std::optional<run_control> ctl;
  placement_plan plan;
  std::vector<worker_replica_actor> workers;
  int64_t global_step = 0;               // shard 0's version at the last counters
  int64_t stale_dropped = 0;
  traffic_meter traffic;                 // tensor bytes the workers reported moving
  optimizer_params shard_opt;            // what the shards apply (async-adjusted)
  std::optional<checkpoint_store> store; // checkpoint.dir, if set
  std::optional<checkpoint_on_disk> restored; // what the run resumes from (its values read per shard)
  std::vector<std::vector<float>> start; // the initial values, when not restored (freed once sent)
  in_graph_state in_graph;
  elastic_state elastic;
  stall_watch stall{std::chrono::milliseconds{0}}; // cluster.stall-warn
  silence_watch reports{0, {}};                    // per worker: its last progress report
  int64_t stalls = 0;                              // stall reports logged
  std::vector<uint64_t> stragglers;                // sync/ssp, per worker: steps that waited for it last
  std::vector<worker_hello> hellos;                // per worker: its latest registration (its devices)
  std::vector<std::vector<uint64_t>> memory_peaks; // per worker and device: the largest peak reported
  std::vector<std::optional<run_time>> shard_heard; // per shard: its last answer (the stall report)
  /// An embedding table's rows the validation and test sets name: the evaluation net's table
  /// holds those alone (by their local rows), and an evaluation pulls those alone; a whole read
  /// (the final evaluation, a best model to keep) takes them from the table read a chunk at a time.
  struct evaluation_rows {
    uint32_t variable = 0;
    row_exchange rows;  // the sets' ids renumbered to local rows
    row_reads asks{};   // (made once: actors/shard_reads.hpp)
    std::vector<float> local{}; // the rows read, by local row (distinct x cols)
    std::vector<std::pair<uint32_t, uint32_t>> by_row{}; // (table row, local row), by table row
    data_splits data{}; // the validation and test sets with their ids renumbered; the training set's size
  };
  std::optional<evaluation_rows> eval_rows;
  model_spec spec;                          // the run's model (the net's table may be eval_rows' alone)
  std::unique_ptr<staged_model> staged;     // the whole model last read, written for the kept models
  std::string swept_digest;                 // its weights digest, when asked for
  static inline const char* name = "chief";
};

using chief_pointer = chief_actor::stateful_pointer<chief_state>;

/// Carries out the controller's commands in order (stops after a quit or a failure).
void execute(chief_pointer self, run_commands cmds);

/// Whether a failing chief stops the shards and workers (not when its own start failed: they
/// may belong to a run another chief is running, e.g. one started twice by mistake).
enum class peers { stop, leave };

/// Ends the run with err: logs it, records it in the outcome, stops every peer (or leaves them)
/// and quits.
void fail_run(chief_pointer self, caf::error err, peers what = peers::stop);

/// Builds the evaluation model, the run log, the placement plan, the checkpoint store (and the
/// checkpoint to resume from) and the controller. Errors name the key or file.
caf::error prepare(chief_pointer self);

/// In-graph: creates the global data order and the step's rules (nothing otherwise).
void in_graph_prepare(chief_pointer self);

/// In-graph: begins the next step (or the one a stall or a lost shard interrupted).
void in_graph_step(chief_pointer self);

/// In-graph: worker j's process went down (its parts go to the others). (Its return and a lost
/// shard reach the driver through control/chief_commands.)
void in_graph_worker_down(chief_pointer self, uint32_t j);

/// Checks a worker's hello against the run: byte order, model, placement, shards. Errors name
/// the worker and the difference (protocol_error, wrong_cluster).
caf::error check_hello(chief_pointer self, const worker_hello& hello);

/// Elastic: creates the data ledger (the epochs continue from a resumed run's examples).
void elastic_prepare(chief_pointer self);

/// Elastic: a join, a lease request, a leave; what a worker's crash does to its leases.
caf::result<worker_welcome> on_join(chief_pointer self, const worker_hello& hello);
caf::result<data_lease> on_lease(chief_pointer self, const lease_request& req);
caf::result<data_lease> on_leave(chief_pointer self, const lease_request& req);
void elastic_worker_down(chief_pointer self, uint32_t j);

/// Records a join, leave or crash (a membership command) in metrics.jsonl.
void record_membership(chief_pointer self, const run_command& c);

/// Adds the elastic counters to summary.json's fields.
void describe_elastic(chief_pointer self, json_object& extra);

/// What a read of the model into the evaluation net takes: what an evaluation reads (an
/// embedding table's run: the table's rows its sets name), the whole model (the kept models'
/// staged file written on the way), or the last model (its weights digest too).
enum class model_read { rows, whole, last };

/// Reads the model into the evaluation net (actors/chief_reads.cpp), then calls next (not when
/// op is no longer wanted); failed names the first failure.
void pull_model_then(chief_pointer self, uint64_t op, model_read how, std::function<void()> next, failed_fn failed);

/// Writes a checkpoint (c.best: the best-validation one) without holding the model: every
/// shard keeps its snapshot and the chief reads it a chunk at a time into the files
/// (actors/chief_save.cpp); then run_control::saved, or shard_failed (a shard's answer) or
/// file_failed (a file) with the failure named.
void save_checkpoint(chief_pointer self, const run_command& c, failed_fn shard_failed, failed_fn file_failed);

/// The weights digest of the model the last model_read::last read.
caf::expected<std::string> final_digest(chief_state& st);

/// Sends every shard its setup (a shard that is already initialised keeps its values).
void init_shards(chief_pointer self);

/// Training began: the stall watch starts (cluster.stall-warn) and checks as each interval ends.
void watch_stalls(chief_pointer self);

/// Shard s answered (a setup, the counters, a stall question) at `now`.
void heard_from_shard(chief_pointer self, uint32_t s);

/// A stall check came due: logs whom the run waits for when no global step completed for the
/// interval (actors/chief_stall.cpp), then checks again while the run trains.
void check_stall(chief_pointer self);

/// After shard s went down: reconnects to its restart (blocking: the chief has its own thread)
/// and restores it from the newest checkpoint that verifies; tells the controller when done.
void restore_shard(chief_pointer self, uint32_t s);

/// With row links (chief_config::relink_rows): opens one to restored shard s.
void relink_rows(chief_pointer self, uint32_t s);

} // namespace actorps::detail
