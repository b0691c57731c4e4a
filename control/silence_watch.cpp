// The last time each worker was heard from, and who has been silent too long.
#include "control/silence_watch.hpp"

#include <algorithm>

namespace actorps {

silence_watch::silence_watch(uint32_t workers, time_point start) : start_(start), last_(workers, start) {
}

void silence_watch::note(uint32_t w, time_point now) {
  if (w >= last_.size())
    last_.resize(w + 1, start_);
  heard(w, now);
}

std::vector<int64_t> silence_watch::ages_ms(time_point now) const {
  std::vector<int64_t> out;
  for (auto t : last_)
    out.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(now - t).count());
  return out;
}

void silence_watch::heard(uint32_t w, time_point now) {
  if (w < last_.size())
    last_[w] = std::max(last_[w], now);
}

std::vector<uint32_t> silence_watch::silent(const std::vector<uint32_t>& among, time_point now, duration timeout) const {
  std::vector<uint32_t> out;
  for (auto w : among)
    if (w < last_.size() && now - last_[w] >= timeout)
      out.push_back(w);
  return out;
}

silence_watch::time_point silence_watch::next_deadline(const std::vector<uint32_t>& among, duration timeout) const {
  auto first = time_point::max();
  for (auto w : among)
    if (w < last_.size())
      first = std::min(first, last_[w] + timeout);
  return first;
}

} // namespace actorps
