// Before CAF's TLS connect: does the peer at an endpoint speak TLS at all within a deadline?
// CAF 0.17.6's openssl module runs the client handshake in a blocking loop inside the
// multiplexer, so a peer that accepts the connection and stays silent would stall every
// connection of the node, for as long as the peer lives. The probe sends a ClientHello and waits
// for the peer's first bytes (any answer, even a refusal, shows it speaks TLS).
#pragma once

#include "config/cluster_options.hpp"

#include <caf/error.hpp>

#include <chrono>
#include <string>

namespace actorps {

/// none: the peer answered a TLS ClientHello within `deadline`. Fails with timeout when it
/// accepted the connection and said nothing; with peer_unreachable when it could not be reached
/// (refused, unknown host): a caller retries that.
caf::error probe_tls_peer(const endpoint& ep, std::chrono::milliseconds deadline);

/// This node's TLS identity (CAF's openssl.* settings).
struct tls_identity {
  std::string certificate, key, cafile, passphrase;
};

/// After CAF's TLS handshake with ep failed (CAF says only "disconnect_during_handshake"): a
/// handshake of our own with the same identity, and OpenSSL's reason, e.g. "the peer refused this
/// node's certificate (tlsv1 alert unknown ca)" or "this node does not accept the peer's
/// certificate (self-signed certificate in certificate chain)". Empty when it cannot tell.
std::string explain_tls_refusal(const endpoint& ep, const tls_identity& id, std::chrono::milliseconds deadline);

} // namespace actorps
