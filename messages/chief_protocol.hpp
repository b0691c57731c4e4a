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

/// Worker -> chief: (register_atom, worker_hello) -> worker_welcome.
struct worker_hello {
  uint32_t worker = 0;          ///< the worker's task index
  std::string host;             ///< where it runs, for log lines
  tensor_buffer byte_order_probe;
};

/// The chief's answer: where every variable lives and how many workers train.
struct worker_welcome {
  placement_plan plan;
  uint32_t workers = 0;
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
  uint64_t bytes_sent = 0;     ///< tensor payload bytes pushed to shards since the previous report
  uint64_t bytes_received = 0; ///< tensor payload bytes received from shards since the previous report
};

/// Chief -> worker, in-graph replication: (compute_atom, gradient_request) -> gradient_reply.
/// The worker pulls the parameters of `step` (the shards' values once the chief's previous
/// step is applied; pulled once per step however many parts it is given), computes the
/// gradient of these training rows and answers with it.
struct gradient_request {
  uint64_t step = 0;
  uint32_t part = 0;              ///< which part of the step's global batch
  std::vector<int32_t> rows;      ///< training-set indices of the part's examples
  uint64_t augment_seed = 0;      ///< seeds data.augment for these rows
};

/// The worker's answer: the mean gradient over the part's rows, whole variables in plan order.
struct gradient_reply {
  uint64_t step = 0;
  uint32_t part = 0;
  int32_t rows = 0;
  double loss_sum = 0.0;                ///< sum of the rows' training losses
  std::vector<variable_slice> grads;    ///< one per variable, offset 0, the whole variable
};

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
  return f(caf::meta::type_name("worker_hello"), x.worker, x.host, x.byte_order_probe);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, worker_welcome& x) {
  return f(caf::meta::type_name("worker_welcome"), x.plan, x.workers, x.steps_left, x.more);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, progress_report& x) {
  return f(caf::meta::type_name("progress_report"), x.worker, x.steps, x.examples, x.loss_sum,
           x.final, x.bytes_sent, x.bytes_received);
}

ACTORPS_FIELDWISE_EQ(gradient_request, v.step, v.part, v.rows, v.augment_seed)
ACTORPS_FIELDWISE_EQ(gradient_reply, v.step, v.part, v.rows, v.loss_sum, v.grads)
ACTORPS_FIELDWISE_EQ(worker_hello, v.worker, v.host, v.byte_order_probe)
ACTORPS_FIELDWISE_EQ(worker_welcome, v.plan, v.workers, v.steps_left, v.more)
ACTORPS_FIELDWISE_EQ(progress_report, v.worker, v.steps, v.examples, v.loss_sum, v.final, v.bytes_sent,
                     v.bytes_received)

} // namespace actorps
