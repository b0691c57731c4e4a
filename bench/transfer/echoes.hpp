// Echoes of the payload between two processes, the anchors of actorps-bench-transfer's rounds:
// over TCP, over the same host's local socket, and through a shared mapping (issue 48's item 3).
#pragma once

#include <cstddef>

namespace actorps::bench {

// Round trips per second of a 1 MiB echo over plain TCP (the child echoes), or with `local` over
// a Unix-domain socket with the buffers a same-host tensor stream asks for.
double raw_echo(double seconds, bool local = false);

// Round trips per second of the same echo through a shared mapping instead of a socket (issue
// 48's same-host path, measured before building it): each side copies its bytes into the mapping
// and the other copies them out (or, without `copy_out`, reads them where they lie, as a shard
// could apply a push), `chunk` bytes at a time. A chunk is announced by a counter in the
// mapping; the reader either sleeps on a local socket pair until a byte says more came (what a
// cluster's processes could afford) or, with `spin`, polls the counter (a core busy per waiting
// reader: the upper bound).
double shared_memory_echo(double seconds, size_t chunk, bool spin, bool copy_out = true);

} // namespace actorps::bench
