// The WorkerReplica actor's state and the functions its source files share: worker_replica.cpp
// (the behaviour, and carrying out replica_control's commands), worker_setup.cpp (the backend,
// the step, the data partition, the chief's plan and group) and worker_in_graph.cpp (in-graph
// replication's gradient requests). Included by those files only.
#pragma once

#include "control/push_leads.hpp"
#include "control/push_plan.hpp"
#include "control/row_exchange.hpp"
#include "control/row_batches.hpp"
#include "control/replica_control.hpp"
#include "control/step_timer.hpp"
#include "actors/replica_step.hpp"
#include "actors/worker_replica.hpp"
#include "data/batch_pipeline.hpp"
#include "wire/gradient_encoder.hpp"

#include <caf/duration.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <functional>
#include <optional>
#include <memory>
#include <string>
#include <vector>

namespace actorps::detail {

/// In-graph replication: which step's parameters the model holds.
struct in_graph_params {
  enum class phase { none, pulling, held };
  phase at = phase::none;
  uint64_t step = 0;
  std::vector<std::function<void(caf::error)>> waiting; // parts of `step` waiting for the pull
};

struct worker_state {
  worker_replica_config cfg;
  std::string tag;
  std::unique_ptr<replica_control> ctl;
  std::vector<std::unique_ptr<backend>> devices; // one, or a tower each (compute.devices)
  std::vector<std::string> device_names;         // TensorFlow's names of devices, in order
  std::string partition;                   // "[a, b) of n examples", for log lines
  std::unique_ptr<replica_step> step;      // the whole model, or one vertical slice
  std::vector<worker_replica_actor> peers; // model-parallel: the group's workers, by slice
  std::unique_ptr<batch_pipeline> batches;   // data.threads, data.prefetch-batches ahead
  std::vector<variable_spec> variables;     // the model's, as the plan lists them (an embedding's whole table)
  placement_plan plan;
  push_plan pushes;                             // per shard: the ranges this worker trains, in parts
  std::optional<push_leads> leads;              // cluster.push-early-ms: measured over the first steps, then gone
  std::vector<std::vector<pull_request>> pulls; // per shard
  std::vector<float> images;
  std::vector<float> labels;
  std::unique_ptr<gradient_encoder> encoder; // what of the gradients is sent (error feedback)
  std::vector<bool> statistics;              // per variable: a batch-norm moving statistic (sent as it is)
  std::vector<std::vector<float>> mirror;    // value-compression: the values as the shards see this worker's
  uint64_t bytes_sent = 0;                   // tensor payload bytes since the last report
  uint64_t bytes_received = 0;
  step_timer timing;                         // compute / push / wait per step, for the telemetry
  std::chrono::steady_clock::time_point reported_at{}; // the last progress report (examples/sec)
  in_graph_params params;                    // in-graph only
  // An embedding table (the model's first layer): the network holds the batch's rows alone,
  // fetched from the shards before each step computes (worker_rows.cpp).
  struct table_rows {
    uint32_t variable = 0;
    // A batch and its rows (a slot of `fetches`: the step's own, or one drawn ahead)
    struct batch {
      std::unique_ptr<row_exchange> exchange; // its ids renumbered to local rows, grouped by part
      batch_extras drawn;                     // the table rows it names (.listed: the pipeline's threads renumber ahead)
      float_vector values;                    // its rows, by local row, placed as they come (or a reply's own)
      std::vector<float> images, labels;      // its examples (swapped into the worker's as its step begins)
      int rows = 0;                           // its examples' count
    };
    std::vector<batch> batches;                // by slot of `fetches`
    // The step's batch and (cluster.rows-with-push, async) those drawn as steps push, whose rows
    // come back with the push replies: one ahead, two with cluster.overlap-steps (a step computed
    // ahead needs its rows by then); none: each step pulls its rows before it computes
    row_batches fetches;
    std::vector<size_t> order;                 // the step's gradient: its rows (local) ...
    std::vector<float> gradient;               // ... and their values (downloaded from a GPU) ...
    const float* gradient_at = nullptr;        // ... where they lie (the model's own on the CPU)
    bool gradient_ready = false;               // found for the step being pushed
    std::string layout; // the table's parts in the plan the exchanges were made for
    size_t table_size = 0; // the table's rows (ids are taken mod them)
    size_t max_slots = 0;  // a batch's id slots
    int tokens = 0;        // an example's id slots
    batch& current() { return batches[fetches.current()]; }
  };
  std::optional<table_rows> table;
  bool detached = true;                      // on a thread of its own (false in deterministic tests)
  static inline const char* name = "worker_replica";
};

using worker_pointer = worker_replica_actor::stateful_pointer<worker_state>;


/// Logs `what: err` and quits with err (once: nothing after the worker is done).
void fail(worker_pointer self, caf::error err, const std::string& what);

/// Creates the backend, the step and the batcher; returns an error naming what failed.
caf::error prepare(worker_pointer self);

/// Checks that the chief's plan describes this worker's model; prepares the pull requests.
caf::error accept_plan(worker_pointer self, placement_plan plan);

/// Uploads the values of a reply from shard s; fails the worker (and returns false) when they do
/// not fit.
bool upload(worker_pointer self, uint32_t s, const std::vector<variable_slice>& slices);

/// In-graph: the gradient of the request's rows with the parameters of its step (pulled from the
/// shards once per step). Errors: protocol_error for a request the worker cannot take.
caf::result<gradient_reply> compute_part(worker_pointer self, gradient_request req);

/// Loads the batch in st.images into the model and begins the step on it (worker_replica.cpp).
void compute_loaded(worker_pointer self, int rows);

// An embedding table's rows (worker_rows.cpp):
/// A fetch of a batch's rows: its slot among st.table->batches and its number (row_batches).
struct row_fetch_tag {
  size_t slot = 0;
  uint64_t fetch = 0;
};
/// Draws the step's batch (its ids renumbered to local rows by the pipeline's thread) and pulls
/// its rows from the shards; the step begins once every row is in (compute_loaded). A pull that
/// fails abandons the step.
void fetch_rows(worker_pointer self);
/// The step's batch was drawn ahead (its rows asked for with an earlier step's pushes): the step
/// begins once they are in, or pulls them anew where that failed.
void take_rows_ahead(worker_pointer self);
/// cluster.rows-with-push: draws batches until the depth ahead is full (one, two with
/// cluster.overlap-steps) and begins the fetch of each one's rows: the first's are asked back
/// with the pushes to the shards holding some (row_reads), the rest pulled (pull_rows_left).
/// Returns those fetches; none where the worker does not fetch ahead or is full already.
std::vector<row_fetch_tag> begin_rows_ahead(worker_pointer self);
/// The reads of shard s's rows of fetch `tag`'s batch (for the push to s).
std::vector<slice_ref> row_reads(worker_pointer self, const row_fetch_tag& tag, uint32_t s);
/// Pulls the rows of the batches begun ahead that no push asks back: the first's from the
/// shards not in `asked`, the others' from every shard holding some.
void pull_rows_left(worker_pointer self, const std::vector<row_fetch_tag>& begun, const std::vector<uint32_t>& asked);
/// A push that carried fetch `tag`'s reads was answered: places the reply's row slices (one
/// holding every row of the batch is taken, not copied) and returns what the fetch says next
/// (follow it after the controller's input); an error where they do not fit.
caf::expected<row_fetch::next> rows_pushed_back(worker_pointer self, const row_fetch_tag& tag,
                                                std::vector<variable_slice>& values);
/// A push that carried fetch `tag`'s reads failed.
void rows_not_pushed_back(worker_pointer self, const row_fetch_tag& tag);
/// Carries out what a fetch says (compute, give the step up, pull anew).
void follow_fetch(worker_pointer self, row_fetch::next next);
/// The fetches in flight are given up (a shard went down): the controller recovers the round.
void abandon_fetch(worker_pointer self);
/// The row slices for shard s of the step being pushed.
caf::expected<std::vector<variable_slice>> row_gradients(worker_pointer self, uint32_t s);

/// Model-parallel: keeps the group's workers, whom the step sends to.
caf::error join_group(worker_pointer self, const slice_group& group);

/// The controller's rules, from the worker's config.
replica_control_config control_config(const worker_replica_config& cfg);

/// Carries out the controller's commands (worker_replica.cpp).
void execute(worker_pointer self, replica_commands commands);

// The exchange with the shards (worker_shards.cpp):
/// The deadline of a pull or push to shard s: none of CAF's where the handle is this process's
/// ShardLink (the link fails its exchanges unanswered after cluster.request-timeout itself and
/// then ends, which the worker hears as shard s's down message), so a step sets no timer on CAF's
/// clock thread (each request's timer woke that thread twice); cluster.request-timeout for a
/// shard reached over BASP.
caf::duration shard_deadline(worker_pointer self, uint32_t s);
/// A request to shard s failed: the controller decides whether the worker survives it.
void on_request_error(worker_pointer self, uint32_t s, caf::error err, const std::string& what);
/// Pulls this worker's share of every shard (the first step, or a fresh start).
void send_pulls(worker_pointer self);
/// Pushes the parts of the step whose gradients are complete (every variable >= floor).
void push_due(worker_pointer self, size_t floor);
/// The step is over: pushes what backprop did not push already.
void push_gradients(worker_pointer self);
/// The measurement of push_leads is over: parts that backprop's rest would not hide join the
/// last push (cluster.push-early-ms).
void keep_early_parts(worker_pointer self);
/// Reaches every lost shard again (without blocking: the reconnects' results are inputs), then
/// tells the controller.
void reconnect_shards(worker_pointer self, std::vector<uint32_t> lost);

} // namespace actorps::detail
