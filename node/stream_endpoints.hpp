// The tensor stream's ends on a node (cluster.tensor-stream): a ps node's stream port (accepting
// plain TCP, or TLS 1.3 with the node's files under cluster.tls), and a worker's link to a shard
// (asks the ps node for an offer, connects to the offered port at the shard's host, or to its
// local socket where the shard shares this host (cluster.local-streams), presents the token, and
// waits until the ps node has attached the stream).
#pragma once

#include "actors/parameter_shard.hpp"
#include "config/cluster_options.hpp"
#include "control/stream_connection.hpp"
#include "control/stream_transfer.hpp"

#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include <cstdint>
#include <string>

namespace actorps {

/// What a stream transfer may carry: at most a message's worth of values
/// (cluster.max-message-bytes), doubled for sparse encodings' indices; at least
/// cluster.stream-min-bytes (smaller ones travel inside their typed message).
stream_limits stream_limits_of(const cluster_settings& cluster);

/// Opens the stream port of ps node `index` at its cluster.ps host: its port plus
/// cluster.stream-port-offset, or any free port (offset 0).
stream_listen stream_port_at(caf::actor_system& sys, const cluster_settings& cluster, uint32_t index);

/// A socket connected to shard s's stream: the offer's local socket where it names one, both ends
/// allow it, the shard shares this host and its listener runs as this process's user; else TCP
/// to the offered port at the shard's host. `peer` names what it connected to, for log lines;
/// *local (if given) says whether it is the local socket.
caf::expected<int> connect_stream_socket(const cluster_settings& cluster, uint32_t s, const stream_offer& offer,
                                         std::string& peer, bool* local = nullptr);

/// Replaces shard s's handle by a link over a tensor stream for worker `worker`; errors name
/// the shard and what failed (the offer, the connection, the token's acknowledgement).
caf::expected<parameter_shard_actor> open_shard_link(caf::actor_system& sys, const cluster_settings& cluster,
                                                     const parameter_shard_actor& remote, uint32_t s, uint32_t worker,
                                                     const std::string& who);

} // namespace actorps
