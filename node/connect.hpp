// Reaching a peer's published actor over CAF's middleman, retrying with backoff until a deadline
// and saying who waits for whom.
#pragma once

#include "actors/interfaces.hpp"
#include "actors/parameter_shard.hpp"
#include "actors/resource_container.hpp"
#include "config/cluster_options.hpp"

#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include <chrono>
#include <string>

namespace actorps {

/// Connects to the `what` (e.g. "shard 1") published at ep, retrying every 100 ms to 1 s and
/// logging "<who>: waiting for <what> at <ep>" every 5 s. Fails with peer_unreachable naming
/// the peer once `timeout` passed, or at once when the peer's interface is not Handle's; with
/// terminated naming it when a SIGTERM or SIGINT comes meanwhile (node/sigterm_watch.hpp) at a
/// node's start (`starting`; a running node's reconnects go on: its actors handle the stop).
/// Instantiated for parameter_shard_actor, resource_container_actor, chief_actor and
/// worker_replica_actor. With tls, over TLS (the openssl module must be loaded).
template <class Handle>
caf::expected<Handle> connect_to(caf::actor_system& sys, const endpoint& ep, const std::string& who,
                                 const std::string& what, std::chrono::milliseconds timeout,
                                 bool tls = false, bool starting = true);

/// Publishes hdl with its typed interface at ep (binding ep.host; port 0 picks a free one) and
/// returns the port; fails with peer_unreachable naming the port. With tls, over TLS.
/// Instantiated for parameter_shard_actor, resource_container_actor, chief_actor and
/// worker_replica_actor.
template <class Handle>
caf::expected<uint16_t> publish_at(caf::actor_system& sys, const Handle& hdl, const endpoint& ep,
                      const std::string& what, bool tls = false);

} // namespace actorps
