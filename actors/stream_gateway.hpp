// StreamGateway: a ps node's tensor streams. It listens at the stream port, gives every worker
// link that asks an offer (the port, a random token, a StreamSession of its own), and hands each
// accepted connection to the session whose token its first frame carries; a connection with
// another first frame is closed and its peer logged.
#pragma once

#include "actors/parameter_shard.hpp"
#include "actors/shard_core.hpp"
#include "control/stream_transfer.hpp"
#include "control/stream_connection.hpp"

#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <chrono>
#include <cstdint>

namespace actorps {

/// (stream_atom, uint32_t worker) -> stream_offer
///   A session for the worker's link and the token its stream must present.
/// (stream_atom, stream_note)
///   From an accepted connection, before a session claimed it.
using stream_gateway_actor = caf::typed_actor<
  caf::replies_to<stream_atom, uint32_t>::with<stream_offer>,
  caf::reacts_to<stream_atom, stream_note>>;

struct stream_gateway_config {
  uint32_t shard = 0;                               ///< the ps task index
  parameter_shard_actor shards;                     ///< the node's container
  stream_listen listen;                             ///< opens the stream port
  std::chrono::milliseconds request_timeout{60000};
  stream_limits limits;
  std::shared_ptr<shard_directory> cores;           ///< the node's scopes' stores (none: every request to `shards`)
};

/// Spawns the gateway; it quits with an error (peer_unreachable, naming the address) when it
/// cannot listen.
stream_gateway_actor make_stream_gateway(caf::actor_system& sys, stream_gateway_config cfg);

} // namespace actorps
