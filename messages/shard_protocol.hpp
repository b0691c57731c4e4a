// The conversation between workers / the chief and a ParameterShard: set-up, pull, push.
// Message by message in docs/protocol.md.
#pragma once

#include "messages/equality.hpp"
#include "messages/row_ids.hpp"
#include "messages/tensor.hpp"

#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace actorps {

/// One variable of the model, as the placement plan lists it.
struct variable_info {
  std::string name{};
  int32_t rows = 0;
  int32_t cols = 0;
  float moving_decay = 0.0f; ///< a batchnorm's moving statistic: its layer's decay (0 < d < 1); else 0
  bool table = false;        ///< an embedding table: workers pull and push it by rows (row slices)
};

/// Rows [row_begin, row_begin + rows) of a variable and the shard holding them. A variable is
/// one part unless cluster.partitioner splits it (TF's partitioned variables); on the wire a part
/// is the range [row_begin * cols, (row_begin + rows) * cols) of the whole variable.
struct variable_part {
  uint32_t variable = 0;
  int32_t row_begin = 0;
  int32_t rows = 0;
  uint32_t shard = 0;
};

/// Where every variable lives: variables in creation order, each covered by its parts (in row
/// order, a variable's parts after the previous variable's).
struct placement_plan {
  std::string strategy{}; ///< "round-robin" or "balanced"
  uint32_t shards = 0;
  std::vector<variable_info> variables{};
  std::vector<variable_part> parts{};
  std::string partitioner = "none"; ///< cluster.partitioner: none, fixed:K or max-bytes:B
  std::string scope{};              ///< train.scope: the variables' scope on the shards ("": none)
  /// cluster.table-partition: how an embedding table's rows map to its parts (one per shard):
  /// "div" (contiguous ranges) or "mod" (row r in part r mod shards; control/placement).
  std::string table_partition = "div";
};

/// How a session's pushes reach its scope's shard: the chief's train.mode, or in-graph (the
/// chief pushes each step's averaged gradient straight to the shard, no aggregator; workers only
/// pull). Travels as its number; a number outside the enum is refused by the ps node by name.
enum class session_kind : uint8_t { async = 0, sync = 1, ssp = 2, model_parallel = 3, in_graph = 4 };

/// "async", "sync", "ssp", "model-parallel", "in-graph"; nullptr outside the enum.
inline const char* to_string(session_kind k) {
  switch (k) {
    case session_kind::async: return "async";
    case session_kind::sync: return "sync";
    case session_kind::ssp: return "ssp";
    case session_kind::model_parallel: return "model-parallel";
    case session_kind::in_graph: return "in-graph";
  }
  return nullptr;
}

struct session_mode {
  session_kind mode = session_kind::async;
  uint32_t replicas_to_aggregate = 1; ///< sync
  uint32_t staleness = 0;             ///< ssp
  int64_t step_timeout_ms = 30000;    ///< sync: a step goes on without a silent worker after this
  /// Worker ids live from the start (the configured workers); ids above, up to shard_setup::workers,
  /// are elastic joiners that count from their first push. 0: every id.
  uint32_t live_at_start = 0;
  /// Sync: a step applies the sum of its gradients divided by this (0: by their count, the
  /// average). Elastic sync with every live worker aggregated divides by the configured worker
  /// count, so an epoch moves the model as far whatever the membership (linear lr scaling).
  uint32_t sum_over = 0;
};

/// The optimizer a shard applies (names as in the config: sgd, momentum, adam).
struct optimizer_config {
  std::string kind = "momentum";
  float learning_rate = 0.01f;
  float momentum = 0.95f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-8f;
  float decay_rate = 1.0f;
  int64_t decay_steps = 10000;
  float rho = 0.9f;
  float initial_accumulator = 0.1f;
  float weight_decay = 0.0f;
  std::string schedule = "constant";
  bool staircase = false;
  std::vector<int64_t> boundaries{};
  std::vector<float> values{};
  float cosine_alpha = 0.0f;
};

/// values of variable[offset, offset + data.size()) -- a whole variable or one chunk of it; or,
/// with rows (an embedding table's row slice, TF's IndexedSlices), rows.size() rows of the
/// variable, row j of data being the variable's row rows[j], all in the part that starts at
/// offset. A worker pulls and pushes a table only so; a shard answers a pushed row slice with
/// no values (the worker's next batch names other rows).
struct variable_slice {
  uint32_t variable = 0;
  uint32_t offset = 0;
  tensor_buffer data{};
  bool delta = false; ///< data is a difference to add to what the receiver holds (value-compression)
  row_ids rows{};

  bool by_rows() const { return !rows.empty(); }
};

/// A range of a variable to pull; with rows, those rows of the part starting at offset (count:
/// rows x the variable's columns).
struct slice_ref {
  uint32_t variable = 0;
  uint32_t offset = 0;
  uint32_t count = 0;
  row_ids rows{};

  bool by_rows() const { return !rows.empty(); }
};

/// Chief -> shard: (init_atom, shard_setup) -> setup_reply. Initialises the shard once; a shard
/// that is already initialised keeps its values and says so.
struct shard_setup {
  uint32_t shard = 0;
  placement_plan plan{};
  optimizer_config optimizer{};
  uint32_t workers = 0;                 ///< worker ids 0 .. workers-1 may push
  std::vector<variable_slice> initial{}; ///< initial values of every variable this shard holds
  // Restoring from a checkpoint (all empty / 0 for a fresh start):
  std::vector<variable_slice> slot0{};  ///< optimizer slot 0 of every variable (momentum, Adam m)
  std::vector<variable_slice> slot1{};  ///< optimizer slot 1 (Adam v)
  uint64_t version = 0;               ///< updates applied before the checkpoint
  session_mode session{};             ///< how pushes are applied (read by the shard node)
  /// Embedding tables whose parts the shard makes itself (no initial slice: TF1 runs a
  /// variable's initializer on its ps task), from table_seed (model/init's table_rows_initial).
  std::vector<uint32_t> generated{};
  uint64_t table_seed = 0;
  /// A restore too large for one message: the values and optimizer slots of the shard's parts
  /// come after this setup as setup_pieces (initial, slot0 and slot1 then stay empty).
  bool pieces = false;
};

/// Chief -> shard: (init_atom, setup_piece) -> setup_reply. After a setup with `pieces`: values
/// (which 0) or an optimizer slot (1, 2) of one of the shard's parts, each array from its part's
/// start on, in order; the piece with `last` (no values) ends the restore, and the shard answers
/// pulls and pushes from then on. Errors: not_initialized (no setup with pieces), unknown_variable
/// (a variable the shard does not hold), shape_mismatch (a piece out of its part, place or
/// order, or `last` with a part's values missing), non_finite; a refused piece changes nothing.
struct setup_piece {
  uint32_t which = 0;
  variable_slice slice{};
  bool last = false;
};

/// Chief -> shard: (save_atom) -> shard_snapshot. Everything the shard holds, for a checkpoint.
struct shard_snapshot {
  uint64_t version = 0;
  std::vector<variable_slice> values{}; ///< whole variables, in creation order
  std::vector<variable_slice> slot0{};  ///< same variables (empty without slots)
  std::vector<variable_slice> slot1{};
};

/// Chief -> shard: (save_atom, snapshot_read) -> snapshot_piece. A checkpoint read a piece at a
/// time, for a chief that must not hold the model (an embedding table of gigabytes): `hold` takes
/// the shard's snapshot (shard_snapshot's values) and keeps it as save `id`, and answers its version and
/// the range of each slice it holds (values, slot0, slot1: no values); `read` answers `range` of
/// slot `which` (0: values, 1: slot0, 2: slot1) of save `id`'s snapshot as `piece`; `drop`
/// releases it. A shard keeps one: a hold first releases any kept before (a save the chief gave
/// up, or one of a chief that went down mid-save). The hold copies nothing: the store keeps each
/// block a push writes as it was (control/snapshot_overlay). Errors: not_initialized; protocol_error
/// for a read of a snapshot not kept or of a slot above 2; unknown_variable for a range no kept
/// slice holds whole.
enum class snapshot_op : uint8_t { hold = 0, read = 1, drop = 2 };

struct snapshot_read {
  snapshot_op op = snapshot_op::hold;
  uint64_t id = 0;
  uint32_t which = 0;
  slice_ref range{};
};

struct snapshot_piece {
  uint64_t version = 0;
  std::vector<slice_ref> values{}; ///< hold: the kept slices' ranges (no rows)
  std::vector<slice_ref> slot0{};
  std::vector<slice_ref> slot1{};
  variable_slice piece{};          ///< read: the range's values
};

struct setup_reply {
  bool already_initialized = false;
  uint64_t version = 0; ///< updates applied so far
};

/// Worker -> shard: (pull_atom, pull_request) -> pull_reply.
struct pull_request {
  uint32_t worker = 0;
  std::vector<slice_ref> ranges{};
  bool keep_view = false; ///< value-compression: the shard remembers these values as the worker's
  std::string scope{};    ///< the plan's scope

  /// Worker `worker` asks for `ranges` of scope `scope` (no view kept).
  static pull_request of(uint32_t worker, std::vector<slice_ref> ranges, std::string scope = {}) {
    return pull_request{worker, std::move(ranges), false, std::move(scope)};
  }
};

struct pull_reply {
  uint64_t version = 0;
  std::vector<variable_slice> slices{}; ///< in the order of the request's ranges
};

/// Worker -> shard: (push_atom, push_request) -> push_reply. Async mode applies at once.
struct push_request {
  uint32_t worker = 0;
  uint64_t step = 0;                  ///< the step the gradients were computed at
  std::vector<variable_slice> grads{};  ///< gradients of the mean loss of one batch
  bool return_values = false;         ///< answer with the updated values of the same ranges
  uint64_t base_version = 0;          ///< the shard version the worker's parameters came from
  /// The precision the reply's values travel in (cluster.wire-precision; the shard keeps fp32).
  wire_precision reply_precision = wire_precision::fp32;
  /// value-compression: > 0 asks for the top-k (this share) of the change since the worker's
  /// last values instead of the values (slices marked delta); 0: the values.
  double reply_topk = 0.0;
  std::string scope{}; ///< the plan's scope
  /// The step's gradients for this shard come in `parts` pushes, sent as backprop completes them
  /// (cluster.push-bucket-bytes); this is part `part`. A shard counts the step (its version)
  /// once, at the last part; a sync aggregator waits for every part before the step counts.
  uint32_t part = 0;
  uint32_t parts = 1;
  /// An embedding table (cluster.rows-with-push): rows of the worker's next batch held here,
  /// read after this push's update (sync: once its step is applied; ssp: as its answer goes)
  /// and returned in the reply's values as row slices (one round trip a step less than a pull
  /// before the step). Row ranges only, on a push's last part.
  std::vector<slice_ref> reads{};

  /// Worker `worker`'s gradients of `step` (the other fields at their defaults).
  static push_request of(uint32_t worker, uint64_t step, std::vector<variable_slice> grads = {}) {
    push_request r;
    r.worker = worker;
    r.step = step;
    r.grads = std::move(grads);
    return r;
  }
};

struct push_reply {
  uint64_t version = 0;                ///< updates applied after this one
  std::vector<variable_slice> values{};  ///< the pushed ranges after the update, if asked for; then the reads' rows
  uint64_t next_step = 0;              ///< the step the worker computes next
  bool stale = false;                  ///< sync: the gradients came too late and were dropped

  /// The gradients were applied: version `version`, the worker computes `next_step` next.
  static push_reply applied(uint64_t version, uint64_t next_step, std::vector<variable_slice> values = {}) {
    return push_reply{version, std::move(values), next_step, false};
  }
  /// Sync: the gradients came too late and were dropped; `values` are the shard's current ones.
  static push_reply dropped_stale(uint64_t version, uint64_t next_step, std::vector<variable_slice> values) {
    return push_reply{version, std::move(values), next_step, true};
  }
};

/// What a ps node holds of one scope (train.scope), for the scope admin command.
struct scope_info {
  std::string name{};
  std::string phase{};    ///< "in session" (a chief trains it) or "kept" (between sessions)
  uint32_t variables = 0; ///< variables (or parts) held on this shard
  uint64_t bytes = 0;     ///< their values' bytes (optimizer slots come on top)
  uint64_t version = 0;   ///< updates applied
};

/// Rounds the values of a slice to precision p and marks it to travel in it (values a shard
/// sends to a worker with cluster.wire-precision = bf16 or fp16).
inline void set_wire_precision(variable_slice& slice, wire_precision p) {
  round_to_precision(p, slice.data.values.data(), slice.data.values.size());
  slice.data.precision = p;
}

/// Tensor payload bytes of slices on the wire (see payload_bytes).
inline uint64_t payload_bytes(const std::vector<variable_slice>& slices) {
  uint64_t n = 0;
  for (auto& s : slices)
    n += payload_bytes(s.data);
  return n;
}

/// Buckets of shard_stats::lag_histogram: lags 0 .. lag_buckets - 2, and one for larger lags.
constexpr uint64_t lag_buckets = 17;

/// Anyone -> shard: (stats_atom) -> shard_stats. Counters since the shard started.
struct shard_stats {
  uint64_t version = 0;                ///< updates applied
  uint64_t stale_dropped = 0;          ///< sync: late gradients dropped
  std::vector<uint64_t> waited_on{};   ///< sync/ssp: per worker, steps that waited for it last
  std::vector<uint64_t> lag_histogram{}; ///< per push: updates between the worker's parameters
                                       ///< and its push (async) or steps ahead of the slowest
                                       ///< (ssp); bucket i = lag i, the last = that or more
  std::vector<uint32_t> pending{};     ///< sync: the workers whose gradient the open step lacks
  std::vector<int64_t> push_age_ms{};  ///< per worker id: milliseconds since its last push here
                                       ///< (since the shard started, when it never pushed)
};

// -- inspection ----------------------------------------------------------------

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, variable_info& x) {
  return f(caf::meta::type_name("variable_info"), x.name, x.rows, x.cols, x.moving_decay, x.table);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, variable_part& x) {
  return f(caf::meta::type_name("variable_part"), x.variable, x.row_begin, x.rows, x.shard);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, placement_plan& x) {
  return f(caf::meta::type_name("placement_plan"), x.strategy, x.shards, x.variables, x.parts, x.partitioner,
           x.scope, x.table_partition);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, session_mode& x) {
  return f(caf::meta::type_name("session_mode"), x.mode, x.replicas_to_aggregate, x.staleness, x.step_timeout_ms,
           x.live_at_start, x.sum_over);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, scope_info& x) {
  return f(caf::meta::type_name("scope_info"), x.name, x.phase, x.variables, x.bytes, x.version);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, optimizer_config& x) {
  return f(caf::meta::type_name("optimizer_config"), x.kind, x.learning_rate, x.momentum, x.beta1,
           x.beta2, x.epsilon, x.decay_rate, x.decay_steps, x.rho, x.initial_accumulator,
           x.weight_decay, x.schedule, x.staircase, x.boundaries, x.values, x.cosine_alpha);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, variable_slice& x) {
  return f(caf::meta::type_name("variable_slice"), x.variable, x.offset, x.data, x.delta, x.rows);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, slice_ref& x) {
  return f(caf::meta::type_name("slice_ref"), x.variable, x.offset, x.count, x.rows);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, shard_setup& x) {
  return f(caf::meta::type_name("shard_setup"), x.shard, x.plan, x.optimizer, x.workers, x.initial, x.slot0,
           x.slot1, x.version, x.session, x.generated, x.table_seed, x.pieces);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, setup_piece& x) {
  return f(caf::meta::type_name("setup_piece"), x.which, x.slice, x.last);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, shard_snapshot& x) {
  return f(caf::meta::type_name("shard_snapshot"), x.version, x.values, x.slot0, x.slot1);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, snapshot_read& x) {
  return f(caf::meta::type_name("snapshot_read"), x.op, x.id, x.which, x.range);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, snapshot_piece& x) {
  return f(caf::meta::type_name("snapshot_piece"), x.version, x.values, x.slot0, x.slot1, x.piece);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, setup_reply& x) {
  return f(caf::meta::type_name("setup_reply"), x.already_initialized, x.version);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, pull_request& x) {
  return f(caf::meta::type_name("pull_request"), x.worker, x.ranges, x.keep_view, x.scope);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, pull_reply& x) {
  return f(caf::meta::type_name("pull_reply"), x.version, x.slices);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, push_request& x) {
  return f(caf::meta::type_name("push_request"), x.worker, x.step, x.grads, x.return_values,
           x.base_version, x.reply_precision, x.reply_topk, x.scope, x.part, x.parts, x.reads);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, push_reply& x) {
  return f(caf::meta::type_name("push_reply"), x.version, x.values, x.next_step, x.stale);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, shard_stats& x) {
  return f(caf::meta::type_name("shard_stats"), x.version, x.stale_dropped, x.waited_on, x.pending, x.push_age_ms,
           x.lag_histogram);
}

// -- equality (tests compare round trips) ------------------------------------------

ACTORPS_FIELDWISE_EQ(variable_info, v.name, v.rows, v.cols, v.moving_decay, v.table)
ACTORPS_FIELDWISE_EQ(variable_part, v.variable, v.row_begin, v.rows, v.shard)
ACTORPS_FIELDWISE_EQ(placement_plan, v.strategy, v.shards, v.variables, v.parts, v.partitioner, v.scope,
                     v.table_partition)
ACTORPS_FIELDWISE_EQ(session_mode, v.mode, v.replicas_to_aggregate, v.staleness, v.step_timeout_ms, v.live_at_start,
                     v.sum_over)
ACTORPS_FIELDWISE_EQ(scope_info, v.name, v.phase, v.variables, v.bytes, v.version)
ACTORPS_FIELDWISE_EQ(optimizer_config, v.kind, v.learning_rate, v.momentum, v.beta1, v.beta2,
                     v.epsilon, v.decay_rate, v.decay_steps, v.rho, v.initial_accumulator,
                     v.weight_decay, v.schedule, v.staircase, v.boundaries, v.values, v.cosine_alpha)
ACTORPS_FIELDWISE_EQ(variable_slice, v.variable, v.offset, v.data, v.delta, v.rows)
ACTORPS_FIELDWISE_EQ(slice_ref, v.variable, v.offset, v.count, v.rows)
ACTORPS_FIELDWISE_EQ(shard_setup, v.shard, v.plan, v.optimizer, v.workers, v.initial, v.slot0, v.slot1, v.version,
                     v.session, v.generated, v.table_seed, v.pieces)
ACTORPS_FIELDWISE_EQ(setup_piece, v.which, v.slice, v.last)
ACTORPS_FIELDWISE_EQ(shard_snapshot, v.version, v.values, v.slot0, v.slot1)
ACTORPS_FIELDWISE_EQ(snapshot_read, v.op, v.id, v.which, v.range)
ACTORPS_FIELDWISE_EQ(snapshot_piece, v.version, v.values, v.slot0, v.slot1, v.piece)
ACTORPS_FIELDWISE_EQ(setup_reply, v.already_initialized, v.version)
ACTORPS_FIELDWISE_EQ(pull_request, v.worker, v.ranges, v.keep_view, v.scope)
ACTORPS_FIELDWISE_EQ(pull_reply, v.version, v.slices)
ACTORPS_FIELDWISE_EQ(push_request, v.worker, v.step, v.grads, v.return_values, v.base_version, v.reply_precision, v.reply_topk, v.scope, v.part, v.parts)
ACTORPS_FIELDWISE_EQ(push_reply, v.version, v.values, v.next_step, v.stale)
ACTORPS_FIELDWISE_EQ(shard_stats, v.version, v.stale_dropped, v.waited_on, v.lag_histogram, v.pending, v.push_age_ms)

} // namespace actorps
