// ParameterShard: holds its share of the variables (the placement's round-robin share) and their
// optimizer slots, answers pulls and applies pushes. CPU only.
#pragma once

#include "messages/type_ids.hpp"
#include "observe/telemetry.hpp"

#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <chrono>
#include <cstdint>
#include <memory>

namespace actorps {

/// The shard's typed interface:
///
/// (init_atom, shard_setup) -> setup_reply
///   Initialises the shard from the chief's setup, once. A second setup (a restarted chief)
///   leaves the values untouched and answers already_initialized = true. An inconsistent setup
///   is an error (invalid_argument, unknown_variable, shape_mismatch, non_finite).
/// (init_atom, setup_piece) -> setup_reply
///   After a setup with `pieces`: one piece of the restored values and slots; the last makes the
///   shard serve (errors: messages/shard_protocol.hpp, setup_piece).
/// (pull_atom, pull_request) -> pull_reply
///   The requested ranges and the shard's version. Errors: not_initialized, unknown_worker,
///   unknown_variable, shape_mismatch.
/// (push_atom, push_request) -> push_reply
///   Async mode: applies the optimizer to the gradients at once, version + 1. Errors as for pull,
///   plus non_finite; a rejected push changes nothing.
/// (save_atom) -> shard_snapshot
///   Every variable, optimizer slot and the version, for the chief's checkpoints.
/// (save_atom, snapshot_read) -> snapshot_piece
///   The same snapshot kept on the shard and read a piece at a time (hold, read, drop:
///   messages/shard_protocol.hpp), for a chief that must not hold the model.
/// (stats_atom) -> shard_stats
///   Counters: version, lag histogram of async pushes (stale and waits come from a SyncAggregator).
/// (stop_atom)
///   Quits.
/// (tick_atom)
///   To itself: the setup deadline passed; quits with a timeout error if still uninitialised.
using parameter_shard_actor = caf::typed_actor<
  caf::replies_to<init_atom, shard_setup>::with<setup_reply>,
  caf::replies_to<init_atom, setup_piece>::with<setup_reply>,
  caf::replies_to<pull_atom, pull_request>::with<pull_reply>,
  caf::replies_to<push_atom, push_request>::with<push_reply>,
  caf::replies_to<stats_atom>::with<shard_stats>,
  caf::replies_to<save_atom>::with<shard_snapshot>,
  caf::replies_to<save_atom, snapshot_read>::with<snapshot_piece>,
  caf::reacts_to<stop_atom>, caf::reacts_to<tick_atom>>;

/// Settings of one shard.
class shard_core;

struct parameter_shard_config {
  uint32_t index = 0; ///< the shard's task index (ps job)
  std::chrono::milliseconds setup_timeout{0}; ///< quit if no setup arrives by then (0: wait forever)
  /// Its node's telemetry: updates, tensor bytes in and out (counters), the version (none: off).
  std::shared_ptr<telemetry> observed{};
  /// The store it serves, shared with the node's stream sessions (actors/shard_core.hpp); none:
  /// the shard makes its own.
  std::shared_ptr<shard_core> core{};
};

/// Spawns a shard.
parameter_shard_actor make_parameter_shard(caf::actor_system& sys, parameter_shard_config cfg);

} // namespace actorps
