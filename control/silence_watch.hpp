// When each worker was last heard from, on the owner's clock (time passed in): who has been
// silent for a timeout. The SyncAggregator's ssp sessions (and the simulator's shards) let go of
// a slowest worker that stays silent while others wait on it. Single-threaded.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

namespace actorps {

class silence_watch {
public:
  using time_point = std::chrono::steady_clock::time_point;
  using duration = std::chrono::steady_clock::duration;

  /// Workers 0..workers-1, each counted as heard at `start`.
  silence_watch(uint32_t workers, time_point start);

  /// Worker w was heard from at `now` (ids past the end are ignored).
  void heard(uint32_t w, time_point now);

  /// Like heard(), for an owner that learns the ids as they come (a shard): an id past the end
  /// extends the list, the ids added before it counted as heard at the start.
  void note(uint32_t w, time_point now);

  /// Per worker id: milliseconds since it was last heard from, at `now` (the stall report).
  std::vector<int64_t> ages_ms(time_point now) const;

  /// Returns those of `among` not heard from for at least `timeout` at `now`.
  std::vector<uint32_t> silent(const std::vector<uint32_t>& among, time_point now, duration timeout) const;

  /// Returns when the first of `among` will have been silent for `timeout` (to arm a timer).
  /// REQUIRES: `among` is not empty.
  time_point next_deadline(const std::vector<uint32_t>& among, duration timeout) const;

private:
  time_point start_;
  std::vector<time_point> last_;
};

} // namespace actorps
