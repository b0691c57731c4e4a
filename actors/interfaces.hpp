// The typed interfaces of the Chief and the WorkerReplica, in one header because each sends to
// the other (the ParameterShard's is in parameter_shard.hpp). Protocol: docs/protocol.md.
#pragma once

#include "messages/type_ids.hpp"

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

namespace actorps {

/// WorkerReplica:
///
/// (start_atom)
///   From the chief once every worker registered and every shard is initialised: begin the
///   pull -> compute -> push loop.
/// (start_atom, slice_group)
///   Model-parallel: the same start, with the workers holding the group's slices.
/// (slice_atom, layer_part)
///   Model-parallel: another slice's part of a layer's outputs, its contribution to this slice's
///   gradient, or its stop before a step.
/// (grant_atom, int64_t steps)
///   From the chief (async with train.max-steps, several workers): `steps` more steps to take;
///   a worker whose grant is used up reports and waits for the next one or the stop.
/// (stop_atom)
///   From the chief: finish the step in flight, send a final progress_report, quit normally.
/// (step_atom)
///   To itself: run the next step.
/// (tick_atom)
///   To itself: the start deadline (cluster.startup-timeout) passed.
/// (leave_atom)
///   From its node on SIGTERM: leave the job cleanly -- finish the step in flight, report how
///   far its data leases got ((leave_atom, lease_request) to the chief), quit normally.
/// (lease_atom)
///   To itself, elastic: ask the chief for data again (after a pause, or a failed request).
/// (compute_atom, gradient_request) -> gradient_reply
///   In-graph replication, from the chief: the gradient of some rows of the step's global batch
///   with the step's parameters (pulled from the shards once per step). Errors: protocol_error
///   (not started in-graph, or from another sender), the pull's error.
using worker_replica_actor
  = caf::typed_actor<caf::reacts_to<start_atom>, caf::reacts_to<start_atom, slice_group>,
                     caf::reacts_to<slice_atom, layer_part>,
                     caf::reacts_to<grant_atom, int64_t>, caf::reacts_to<stop_atom>,
                     caf::reacts_to<step_atom>, caf::reacts_to<tick_atom>, caf::reacts_to<leave_atom>,
                     caf::reacts_to<lease_atom>,
                     caf::replies_to<compute_atom, gradient_request>::with<gradient_reply>>;

/// Chief:
///
/// (register_atom, worker_hello) -> worker_welcome
///   A worker registers: the chief checks its index, byte order, model, placement and shards,
///   monitors it and answers with the placement plan. Errors: unknown_worker, wrong_cluster,
///   protocol_error.
/// (join_atom, worker_hello) -> worker_welcome
///   Elastic: a worker outside cluster.workers asks for an id (welcome.index); it then registers
///   under it. Errors: unknown_worker (not elastic), cluster_full, wrong_cluster, protocol_error.
/// (lease_atom, lease_request) -> data_lease
///   Elastic: the worker's next data lease; its finished leases are reported in the request.
///   A lease with wait_ms > 0 and no rows: training is paused, ask again later.
/// (leave_atom, lease_request) -> data_lease
///   Elastic (and any between-graph job): the worker leaves; what its leases did not finish goes
///   to others. The answer is empty.
/// (progress_atom, progress_report)
///   A worker's steps, examples and training loss since its last report; drives the global step,
///   evaluation and the stop rule.
///   Accepted only from the worker registered under that index.
/// (tick_atom)
///   To itself: a deadline (workers' registration, final reports) passed. Ignored from any
///   other sender.
/// (step_atom)
///   To itself, in-graph: begin the step again after no worker could compute it. Ignored from
///   any other sender.
/// (stop_atom)
///   SIGTERM on the chief's node (its signal watch): the run ends as at its limit (workers
///   stopped, final evaluation, checkpoint and summary). Ignored from another node.
/// (stop_atom, uint32_t shard)
///   SIGTERM on shard `shard`'s node: the run ends the same way while the shard still serves
///   (the end stops it). Ignored unless it comes from that shard's node.
using chief_actor = caf::typed_actor<caf::replies_to<register_atom, worker_hello>::with<worker_welcome>,
                                     caf::replies_to<join_atom, worker_hello>::with<worker_welcome>,
                                     caf::replies_to<lease_atom, lease_request>::with<data_lease>,
                                     caf::replies_to<leave_atom, lease_request>::with<data_lease>,
                                     caf::reacts_to<progress_atom, progress_report>, caf::reacts_to<tick_atom>,
                                     caf::reacts_to<stall_atom>,
                                     caf::reacts_to<step_atom>, caf::reacts_to<stop_atom>,
                                     caf::reacts_to<stop_atom, uint32_t>>;

} // namespace actorps
