// StreamSession: one worker's tensor stream on a ps node. It takes the worker link's typed
// pulls and pushes from the stream (message frames), receives a push's gradients from the stream
// straight into their tensors, serves them from its scope's store in place (actors/shard_core.hpp:
// pulls, and pushes where no aggregator decides) or else asks the node's container (as the worker
// would over BASP), and answers in band: the typed reply (or refusal), then the reply's tensors
// as frames. It stands for the worker on the ps node: it ends when its stream closes (a sync
// aggregator that watches the pushes' sender sees the worker go).
#pragma once

#include "actors/parameter_shard.hpp"
#include "actors/shard_core.hpp"
#include "control/stream_transfer.hpp"
#include "actors/stream_links.hpp"

#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <chrono>
#include <cstdint>
#include <memory>

namespace actorps {

/// (stream_atom, uint64_t token) -> bool
///   True once the stream whose first frame carried the token is attached (waits for it).
/// (stream_atom, shared_heap_offer) -> bool
///   The worker offers its process's shared heap: true once mapped (from then on its pushes may
///   name shared_fp32 tensors, and the values a push asks back are written where it set their
///   destinations aside); false where the stream came over TCP, this node does not allow
///   it (cluster.local-shared-memory) or the heap cannot be mapped (logged).
/// (stream_atom, stream_note)
///   From its stream (or, `accepted`, from the gateway: link `link` is this session's). A
///   message note is a pull or a push (stream_pull, stream_push); the push's gradients arrive as
///   frames of its transfer; the answer goes back on the stream: a stream_pull_reply or
///   stream_push_reply, the values as frames of the same transfer, or a stream_refusal (as the
///   container answers). A message that does not parse or fit closes the stream.
/// (tick_atom)
///   To itself: no stream arrived within the request timeout; quits.
using stream_session_actor = caf::typed_actor<
  caf::replies_to<stream_atom, uint64_t>::with<bool>, caf::replies_to<stream_atom, shared_heap_offer>::with<bool>,
  caf::reacts_to<stream_atom, stream_note>,
  caf::reacts_to<tick_atom>>;

struct stream_session_config {
  uint32_t shard = 0;                               ///< the ps task index (named in logs)
  uint32_t worker = 0;                              ///< who asked for it
  uint64_t token = 0;
  parameter_shard_actor shards;                     ///< the node's container
  std::shared_ptr<stream_links> links;              ///< where its stream waits to be claimed
  std::chrono::milliseconds request_timeout{60000}; ///< for requests to the container; and the stream's arrival
  stream_limits limits;                             ///< the most one push may carry; the least worth frames
  /// The node's scopes' stores: a pull, and a push where no aggregator decides, is served from
  /// the store in place instead of by a request to the container (none: always the container).
  std::shared_ptr<shard_directory> cores;
};

stream_session_actor make_stream_session(caf::actor_system& sys, stream_session_config cfg);

} // namespace actorps
