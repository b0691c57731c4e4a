// ResourceContainer: what a ps node publishes. It holds one ParameterShard (with a SyncAggregator
// in front in sync and ssp sessions) per variable scope (train.scope, TF's resource containers),
// spawned by the first session's setup of the scope, and routes every message to its scope's:
// pulls and pushes name their scope; setup, save, stats and stop come from a scope's chief. With
// keep_alive the scopes outlive their sessions: a chief's stop ends its session only, and a later
// session of the same scope attaches to the kept variables, slots and version.
#pragma once

#include "actors/parameter_shard.hpp"
#include "control/stream_transfer.hpp"
#include "control/stream_connection.hpp"

#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace actorps {

/// The shard's interface (see parameter_shard.hpp), routed by scope, and:
///
/// (init_atom, shard_setup) -> setup_reply
///   A new scope (setup.plan.scope) spawns its shard; an existing one answers already_initialized
///   when the setup's plan fits its variables, else shape_mismatch naming the first difference.
/// (pull_atom | push_atom, request) -> reply
///   Errors: unknown_scope (naming the scopes held), then as the scope's shard answers.
/// (save_atom), (save_atom, snapshot_read), (init_atom, setup_piece), (stats_atom)
///   For the scope whose chief asks (the only scope, for anyone else).
/// (stop_atom)
///   Without keep_alive: stops every scope and quits. With: the sender's sessions end (their
///   scopes are kept).
/// (scopes_atom) -> std::vector<scope_info>
///   Every scope held: phase, variables, bytes, version.
/// (drop_atom, std::string scope) -> scope_info
///   Drops a kept scope (its shard stops) and answers what it held. Errors: unknown_scope,
///   invalid_argument while a session trains it.
/// (stream_atom, uint32_t worker) -> stream_offer
///   A worker's link asks for a tensor stream (handed to the node's StreamGateway). Errors:
///   invalid_argument when the node has none (cluster.tensor-stream = false on the ps node).
/// (leave_atom)
///   SIGTERM on the ps node (its signal watch; ignored from another node): asks the chief of
///   every session in progress to end its run ((stop_atom, index) to the chief), keeps serving
///   until those runs stop it (at most cluster.request-timeout), then quits; with no session in
///   progress, or at a second SIGTERM, quits at once.
using resource_container_actor = parameter_shard_actor::extend<
  caf::replies_to<scopes_atom>::with<std::vector<scope_info>>,
  caf::replies_to<drop_atom, std::string>::with<scope_info>,
  caf::replies_to<stream_atom, uint32_t>::with<stream_offer>,
  caf::reacts_to<leave_atom>>;

/// Settings of one ps node's container.
struct resource_container_config {
  uint32_t index = 0;                               ///< the ps task index
  std::chrono::milliseconds setup_timeout{0};       ///< quit if no setup by then (0, or keep_alive: wait)
  std::chrono::milliseconds request_timeout{60000}; ///< deadline of requests to its shards
  bool keep_alive = false;                          ///< node.keep-alive
  std::shared_ptr<telemetry> observed{};            ///< its node's telemetry, for its shards (none: off)
  stream_listen stream_port{};                      ///< opens the tensor streams' port (none: no streams)
  stream_limits streams{};                          ///< what a stream transfer may and should carry
  /// The stream sessions serve pulls and async pushes from the scopes' stores in place
  /// (actors/shard_core.hpp); false: every request goes through the container and the shard
  /// (bench/transfer_bench.cpp measures both in one run).
  bool serve_in_place = true;
};

/// Spawns a container.
resource_container_actor make_resource_container(caf::actor_system& sys, resource_container_config cfg);

} // namespace actorps
