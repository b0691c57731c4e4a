// What an aggregator's session counts for the shard's stats (shard_stats): pushes dropped as
// stale, steps that waited on each worker last, and each push's lag. Counted once, by
// sync_session and ssp_session, for the SyncAggregator and the simulator's shards alike.
#pragma once

#include "messages/shard_protocol.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace actorps {

struct aggregator_counts {
  uint64_t stale_dropped = 0;          ///< sync: pushes dropped as stale
  std::vector<uint64_t> waited_on;     ///< per worker: steps (sync) or parked answers (ssp) it held up last
  std::vector<uint64_t> lag_histogram; ///< per push: sync, steps behind; ssp, steps ahead of the slowest

  explicit aggregator_counts(uint32_t workers) : waited_on(workers, 0), lag_histogram(lag_buckets, 0) {}

  void lag(uint64_t steps) { ++lag_histogram[std::min<uint64_t>(steps, lag_buckets - 1)]; }
};

} // namespace actorps
