// The payload's round trips through actorps' own code: the tensor stream's frames alone, and a
// push + pull to a ps node in a child process, over the stream (local socket or TCP) or BASP,
// plain or TLS, in three ways (actorps-bench-transfer's rows).
#pragma once

#include <string>

namespace actorps::bench {

// Round trips per second of a 1 MiB push frame answered by a 1 MiB pull frame, through
// tensor-stream sockets in each process's middleman (the child answers transfer k with k and
// announces k + 1 before answering); over TLS when certs names a folder of scripts/make-certs.sh;
// with `local` over the same host's local socket.
double tensor_stream(double seconds, const std::string& certs, bool local = false);

struct shard_rates {
  double sequential = 0; // push, wait for its ack, pull, wait for the values
  double pipelined = 0;  // push and pull sent together
  double exchange = 0;   // one push asking its values back (return_values), as an async worker's step does
};

// Round trips per second of push (1 MiB gradients) + pull (1 MiB values) to a ps node (its
// container) in a child, as a worker sends them: over BASP, or with stream through a ShardLink
// over the tensor stream (cluster.tensor-stream; with local, over the same-host local socket,
// else TCP; with in_place, served from the shard's store on the ps node's network thread, else
// through the container's and the shard's actors; with shared, on the plain local socket, the
// pushes' gradients and the values they ask back in the worker's shared heap, as a worker's are
// by default, else as frames: cluster.local-shared-memory); over TLS when certs names a folder of
// scripts/make-certs.sh. Each push sends the last reply's values back as its gradients, as the raw
// echoes send back what came (no byte written between the rounds); with fresh, each push's 1 MiB
// of gradients is written anew instead, as a worker's download writes them (about 90 µs a round here).
shard_rates shard_protocol(double seconds, const std::string& certs, bool stream, bool in_place = true,
                           bool local = true, bool shared = true, bool fresh = false);

} // namespace actorps::bench
