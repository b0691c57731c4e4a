// The conversation between workers and the Chief: registration, progress, start and stop, and
// in-graph replication's gradient requests.
// Message by message in docs/protocol.md.
#pragma once

#include "messages/equality.hpp"
#include "messages/shard_protocol.hpp"
#include "messages/tensor.hpp"

#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace actorps {

/// The float every node writes into worker_hello::byte_order_probe; the chief refuses a worker
/// whose probe does not read back as this value (raw float copies need one byte order).
constexpr float byte_order_probe_value = 1.5f;

/// worker_hello::model of a model whose variables (each with name, rows and cols, in creation
/// order) are `vars`: "name RxC, ...". Chief and worker compare their models by it.
template <class Variables>
std::string model_signature(const Variables& vars) {
  std::string out;
  for (auto& v : vars)
    out += (out.empty() ? "" : ", ") + v.name + " " + std::to_string(v.rows) + "x" + std::to_string(v.cols);
  return out;
}

/// worker_hello::worker of a worker that joins a running elastic job: the chief assigns its id.
constexpr uint32_t joining_worker = UINT32_MAX;

/// Worker -> chief: (register_atom, worker_hello) -> worker_welcome, and (join_atom,
/// worker_hello) -> worker_welcome for an elastic joiner (worker = joining_worker).
struct worker_hello {
  uint32_t worker = 0;          ///< the worker's task index (or joining_worker)
  std::string host{};           ///< where it runs, for log lines
  tensor_buffer byte_order_probe{};
  /// The worker's model, variable by variable ("name rows x cols", joined by ", "), and its
  /// cluster.placement and shard count: the chief refuses a worker of another cluster by name.
  std::string model{};
  std::string placement{};
  uint32_t shards = 0;
  /// The devices it computes on, with TensorFlow's names ("/job:worker/task:0/device:GPU:1"):
  /// one, or a tower each (compute.devices). Empty from a joiner asking for its id.
  std::vector<std::string> devices{};
};

/// The chief's answer: where every variable lives and how many workers train.
struct worker_welcome {
  placement_plan plan{};
  uint32_t workers = 0;
  uint32_t index = 0; ///< the worker's id (a joiner's, assigned by the chief)
  /// >= 0 when this worker's steps are the global steps (the only async/ssp worker, or a slice
  /// of the only model-parallel group) and train.max-steps is set: the worker stops by itself
  /// after this many more steps, so such runs end at exactly train.max-steps. -1 otherwise.
  int64_t steps_left = -1;
  /// With steps_left >= 0: the chief grants more steps ((grant_atom, int64_t)) as the worker
  /// reports; a worker at zero waits for a grant or the stop (async with train.max-steps and
  /// several workers: the run ends at exactly train.max-steps, and a frozen chief stops them).
  bool more = false;
};

/// Worker -> chief: (progress_atom, progress_report), every cluster.report-every steps and at the end.
struct progress_report {
  uint32_t worker = 0;
  int64_t steps = 0;     ///< steps since the previous report
  int64_t examples = 0;  ///< examples since the previous report
  double loss_sum = 0.0; ///< sum of per-example training losses since the previous report
  bool final = false;    ///< the worker stopped after this report
  int64_t global_step = 0; ///< sync: the step the worker is at (elastic sync counts steps by it)
  uint64_t bytes_sent = 0;     ///< tensor payload bytes pushed to shards since the previous report
  uint64_t bytes_received = 0; ///< tensor payload bytes received from shards since the previous report
  int64_t stale_steps = 0; ///< sync: steps every shard dropped as stale since the previous report
  int64_t split_steps = 0; ///< sync: steps some shards took and others dropped as stale since then
  std::vector<uint64_t> memory_peak{}; ///< per device of worker_hello::devices: the most bytes its buffers held
};

/// Chief -> worker, in-graph replication: (compute_atom, gradient_request) -> gradient_reply.
/// The worker pulls the parameters of `step` (the shards' values once the chief's previous
/// step is applied; pulled once per step however many parts it is given), computes the
/// gradient of these training rows and answers with it.
struct gradient_request {
  uint64_t step = 0;
  uint32_t part = 0;              ///< which part of the step's global batch
  std::vector<int32_t> rows{};    ///< training-set indices of the part's examples
  uint64_t augment_seed = 0;      ///< seeds data.augment for these rows
};

/// The worker's answer: the mean gradient over the part's rows, whole variables in plan order.
struct gradient_reply {
  uint64_t step = 0;
  uint32_t part = 0;
  int32_t rows = 0;
  double loss_sum = 0.0;                ///< sum of the rows' training losses
  std::vector<variable_slice> grads{};  ///< one per variable, offset 0, the whole variable
};

/// A worker's account of one data lease: it trained the first `done` examples.
struct lease_report {
  uint64_t id = 0;
  int32_t done = 0;
};

/// Elastic worker -> chief: (lease_atom, lease_request) -> data_lease, the next lease (reporting
/// the finished ones); (leave_atom, lease_request) -> data_lease (empty): the worker leaves,
/// reporting how far it got; the rest of its leases goes to others.
struct lease_request {
  uint32_t worker = 0;
  std::vector<lease_report> finished{};
};

/// A piece of an epoch's seeded example order (empty with wait_ms > 0: training is paused,
/// ask again after wait_ms).
struct data_lease {
  uint64_t id = 0;
  int64_t epoch = 0;
  std::vector<int32_t> rows{};   ///< training-set indices, in order
  uint64_t augment_seed = 0;     ///< seeds data.augment for these rows
  int32_t wait_ms = 0;
  uint32_t workers = 0;          ///< live workers now (async, ssp: the worker scales its gradients by it)
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, lease_report& x) {
  return f(caf::meta::type_name("lease_report"), x.id, x.done);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, lease_request& x) {
  return f(caf::meta::type_name("lease_request"), x.worker, x.finished);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, data_lease& x) {
  return f(caf::meta::type_name("data_lease"), x.id, x.epoch, x.rows, x.augment_seed, x.wait_ms, x.workers);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, gradient_request& x) {
  return f(caf::meta::type_name("gradient_request"), x.step, x.part, x.rows, x.augment_seed);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, gradient_reply& x) {
  return f(caf::meta::type_name("gradient_reply"), x.step, x.part, x.rows, x.loss_sum, x.grads);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, worker_hello& x) {
  return f(caf::meta::type_name("worker_hello"), x.worker, x.host, x.byte_order_probe, x.model, x.placement,
           x.shards, x.devices);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, worker_welcome& x) {
  return f(caf::meta::type_name("worker_welcome"), x.plan, x.workers, x.index, x.steps_left, x.more);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, progress_report& x) {
  return f(caf::meta::type_name("progress_report"), x.worker, x.steps, x.examples, x.loss_sum,
           x.final, x.global_step, x.bytes_sent, x.bytes_received, x.stale_steps, x.split_steps, x.memory_peak);
}

ACTORPS_FIELDWISE_EQ(gradient_request, v.step, v.part, v.rows, v.augment_seed)
ACTORPS_FIELDWISE_EQ(gradient_reply, v.step, v.part, v.rows, v.loss_sum, v.grads)
ACTORPS_FIELDWISE_EQ(worker_hello, v.worker, v.host, v.byte_order_probe, v.model, v.placement, v.shards, v.devices)
ACTORPS_FIELDWISE_EQ(worker_welcome, v.plan, v.workers, v.index, v.steps_left, v.more)
ACTORPS_FIELDWISE_EQ(lease_report, v.id, v.done)
ACTORPS_FIELDWISE_EQ(lease_request, v.worker, v.finished)
ACTORPS_FIELDWISE_EQ(data_lease, v.id, v.epoch, v.rows, v.augment_seed, v.wait_ms, v.workers)
ACTORPS_FIELDWISE_EQ(progress_report, v.worker, v.steps, v.examples, v.loss_sum, v.final, v.global_step,
                     v.bytes_sent, v.bytes_received, v.stale_steps, v.split_steps, v.memory_peak)

} // namespace actorps
