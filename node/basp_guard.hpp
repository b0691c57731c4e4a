// A bound on what a peer may make a node allocate before it completed CAF's BASP handshake.
// See basp_guard.cpp for why and how; the definitions are in the executable (an OBJECT library).
#pragma once

#include <cstdint>

namespace actorps {

/// Headers of peers that have not completed the handshake may announce at most `bytes` of
/// payload; a larger one closes the connection (logged with the peer's address). Thread-safe.
void set_handshake_bound(uint32_t bytes);

/// How many connections the guard closed since the process started.
uint64_t handshake_refusals();

} // namespace actorps
