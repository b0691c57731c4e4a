// A step's exchange with one shard modelled in two processes, six ways (issue 48's item 3: which
// same-host designs pay), and the shared-memory rows of actorps-bench-transfer (BENCH_ONLY=shm).
#pragma once

namespace actorps::bench {

// A step's exchange with one shard, both ways, modelled in two processes with the costs every
// design pays: the worker's backward writes its gradients, the shard applies them to its store
// (w -= lr * g) and the worker takes the store's values into its model. `socket`: over a local
// socket with a same-host stream's buffers, the kernel copying the gradients and the values in
// and out; `shared`: the gradients and the store lie in a mapping both processes share, read
// where they lie (each side woken by a byte on a socket pair); `cross`: the shard reads the
// gradients out of the worker's memory and writes the values into the worker's reply buffer
// (process_vm_readv / process_vm_writev: one kernel copy each way instead of two), each side
// woken by a byte; `shared_grads`: the gradients in the shared mapping, read where they lie, the
// values back over the socket; `shared_store`: the gradients over the socket, the store in the
// mapping, its values copied out into a reply buffer (as a link would hand them on) and from
// there into the model; `socket_bell`: as `socket`, but each side sends its bytes whole before
// a byte on a second socket pair tells the other to read them (the reader woken once per message
// instead of once per buffer the kernel queues as the writer goes).
enum class exchange_mode { socket, shared, cross, shared_grads, shared_store, socket_bell };

/// Rounds per second of `mode`'s exchange (0: the mode is not allowed here).
double exchange_round(double seconds, exchange_mode mode);

// The shared-memory echoes beside the local socket's, one line each with the CPU time a round
// costs both processes together (BENCH_ONLY=shm).
void shared_memory_rows(double seconds);

} // namespace actorps::bench
