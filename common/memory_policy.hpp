// How a training process keeps the memory it frees: tensors of a few hundred KiB to a few MiB
// are allocated and freed every step (messages, stream transfers, replies). glibc returns such
// chunks to the system (mmap for each large one, trimming the heap's top), so the next step's
// allocation faults every page in again: measured on 2 cores, a 1 MiB push + pull to a shard
// spent about half its time in page faults (docs/results.md). Keeping them costs the peak's
// memory, which a training process needs again at the next step anyway. And one arena for every
// thread: glibc gives other threads (CAF's network and scheduler threads) arenas of their own,
// whose heaps hold at most 64 MiB, so a message of cluster.max-message-bytes (64 MiB: the
// chief's pulls of a large table, snapshots) was mapped and unmapped each time, every page
// faulted in again: 43,000 faults per evaluation of a 2^20 x 32 table, and a quarter more
// examples/s for that cluster with one arena (docs/results.md).
#pragma once

#include <cstdint>
#include <optional>

namespace actorps {

/// Keeps freed memory in the process (no mmap per large chunk, no trimming), from now on.
void keep_freed_memory();

/// Returns the memory the kernel says can be had now without swapping (MemAvailable of
/// /proc/meminfo, bytes); nullopt where it cannot be read. What readers of crafted files check a
/// declared size against before allocating it.
std::optional<uint64_t> available_memory();

} // namespace actorps
