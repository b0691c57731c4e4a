// The one place that declares actorps's atoms and message type IDs (CAF's type-ID block).
// Every node and test registers exactly this block through register_types().
#pragma once

#include "messages/chief_protocol.hpp"
#include "messages/shard_protocol.hpp"
#include "messages/slice_protocol.hpp"
#include "messages/stream_protocol.hpp"

#include <caf/atom.hpp>
#include <caf/type_id.hpp>

CAF_BEGIN_TYPE_ID_BLOCK(actorps, caf::first_custom_type_id)

  // Atoms: at most 10 characters.
  CAF_ADD_ATOM(actorps, actorps, init_atom, "init")
  CAF_ADD_ATOM(actorps, actorps, pull_atom, "pull")
  CAF_ADD_ATOM(actorps, actorps, push_atom, "push")
  CAF_ADD_ATOM(actorps, actorps, register_atom, "register")
  CAF_ADD_ATOM(actorps, actorps, progress_atom, "progress")
  CAF_ADD_ATOM(actorps, actorps, start_atom, "start")
  CAF_ADD_ATOM(actorps, actorps, stop_atom, "stop")
  CAF_ADD_ATOM(actorps, actorps, step_atom, "step")
  CAF_ADD_ATOM(actorps, actorps, eval_atom, "eval")
  CAF_ADD_ATOM(actorps, actorps, tick_atom, "tick")
  CAF_ADD_ATOM(actorps, actorps, stats_atom, "stats")
  CAF_ADD_ATOM(actorps, actorps, slice_atom, "slice")
  CAF_ADD_ATOM(actorps, actorps, save_atom, "save")
  CAF_ADD_ATOM(actorps, actorps, grant_atom, "grant")
  CAF_ADD_ATOM(actorps, actorps, scopes_atom, "scopes")
  CAF_ADD_ATOM(actorps, actorps, drop_atom, "drop")
  CAF_ADD_ATOM(actorps, actorps, compute_atom, "compute")
  CAF_ADD_ATOM(actorps, actorps, join_atom, "join")
  CAF_ADD_ATOM(actorps, actorps, lease_atom, "lease")
  CAF_ADD_ATOM(actorps, actorps, leave_atom, "leave")
  CAF_ADD_ATOM(actorps, actorps, stall_atom, "stall")
  CAF_ADD_ATOM(actorps, actorps, stream_atom, "stream")

  // Message types: every top-level element of a message that crosses the network.
  CAF_ADD_TYPE_ID(actorps, (actorps::shard_setup))
  CAF_ADD_TYPE_ID(actorps, (actorps::setup_reply))
  CAF_ADD_TYPE_ID(actorps, (actorps::pull_request))
  CAF_ADD_TYPE_ID(actorps, (actorps::pull_reply))
  CAF_ADD_TYPE_ID(actorps, (actorps::push_request))
  CAF_ADD_TYPE_ID(actorps, (actorps::push_reply))
  CAF_ADD_TYPE_ID(actorps, (actorps::worker_hello))
  CAF_ADD_TYPE_ID(actorps, (actorps::worker_welcome))
  CAF_ADD_TYPE_ID(actorps, (actorps::progress_report))
  CAF_ADD_TYPE_ID(actorps, (actorps::gradient_request))
  CAF_ADD_TYPE_ID(actorps, (actorps::gradient_reply))
  CAF_ADD_TYPE_ID(actorps, (actorps::lease_request))
  CAF_ADD_TYPE_ID(actorps, (actorps::data_lease))
  CAF_ADD_TYPE_ID(actorps, (actorps::shard_stats))
  CAF_ADD_TYPE_ID(actorps, (actorps::slice_group))
  CAF_ADD_TYPE_ID(actorps, (actorps::layer_part))
  CAF_ADD_TYPE_ID(actorps, (actorps::shard_snapshot))
  CAF_ADD_TYPE_ID(actorps, (actorps::snapshot_read))
  CAF_ADD_TYPE_ID(actorps, (actorps::snapshot_piece))
  CAF_ADD_TYPE_ID(actorps, (actorps::setup_piece))
  CAF_ADD_TYPE_ID(actorps, (actorps::scope_info))
  CAF_ADD_TYPE_ID(actorps, (std::vector<actorps::scope_info>))
  CAF_ADD_TYPE_ID(actorps, (actorps::stream_offer))
  CAF_ADD_TYPE_ID(actorps, (actorps::stream_push))
  CAF_ADD_TYPE_ID(actorps, (actorps::stream_push_reply))
  CAF_ADD_TYPE_ID(actorps, (actorps::stream_pull))
  CAF_ADD_TYPE_ID(actorps, (actorps::stream_pull_reply))
  CAF_ADD_TYPE_ID(actorps, (actorps::stream_note))
  CAF_ADD_TYPE_ID(actorps, (actorps::shared_heap_offer))

CAF_END_TYPE_ID_BLOCK(actorps)
