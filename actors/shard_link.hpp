// ShardLink: a worker's tensor stream to one shard, standing in for the shard's handle. It
// speaks the shard's interface: pulls and pushes go to the ps node's StreamSession as typed
// messages without values, their tensors as frames on the stream (the gradients written from
// where they lie, the reply's values read straight into the tensors handed to the worker);
// everything else goes to the shard as it is. It ends when the stream or the shard does, with
// the reason, so the worker sees a lost shard as before.
#pragma once

#include "actors/parameter_shard.hpp"
#include "control/stream_transfer.hpp"
#include "control/stream_connection.hpp"

#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <chrono>
#include <cstdint>

namespace actorps {

/// The shard's interface, (stream_atom, stream_note) from its stream, and (stream_atom,
/// shared_heap_offer) once the session mapped this process's shared heap (common/shared_heap.hpp):
/// from then on, pushes whose gradients lie in it leave them there (shared_fp32 tensors) for the
/// ps node to read in place, each push sets its reply's destinations aside there for the ps node
/// to write (stream_push::reply_to), and the link keeps both until the answer.
using shard_link_actor =
  parameter_shard_actor::extend<caf::reacts_to<stream_atom, stream_note>, caf::reacts_to<stream_atom, shared_heap_offer>>;

struct shard_link_config {
  uint32_t shard = 0;
  parameter_shard_actor remote;                     ///< the shard (its node's container)
  stream_offer offer;                               ///< the session and token
  stream_opener open;                               ///< the connected stream
  std::chrono::milliseconds request_timeout{60000};
  stream_limits limits;                             ///< the most one reply may carry; the least worth frames
};

/// Spawns a link; its first frame carries the offer's token.
shard_link_actor make_shard_link(caf::actor_system& sys, shard_link_config cfg);

} // namespace actorps
