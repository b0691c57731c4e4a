// The leads of a push's parts (see push_leads.hpp).
#include "control/push_leads.hpp"

#include <algorithm>

namespace actorps {

void push_leads::begin_step() {
  step_.clear();
}

void push_leads::completed(uint32_t floor, time_point t) {
  if (!done())
    step_.emplace_back(floor, t);
}

bool push_leads::end_step(time_point t) {
  if (done())
    return false;
  if (++seen_ > skip_)
    for (auto& [floor, at] : step_) {
      const auto left = std::chrono::duration_cast<std::chrono::microseconds>(t - at);
      auto it = least_.find(floor);
      // (a floor a step did not reach counts as no lead: never more than the least seen)
      if (it == least_.end())
        least_.emplace(floor, seen_ == skip_ + 1 ? left : std::chrono::microseconds{0});
      else
        it->second = std::min(it->second, left);
    }
  if (seen_ > skip_ + 1) // floors another step reached but this one did not: no lead
    for (auto& [floor, least] : least_)
      if (std::none_of(step_.begin(), step_.end(), [f = floor](const auto& c) { return c.first == f; }))
        least = std::chrono::microseconds{0};
  step_.clear();
  return done();
}

std::chrono::microseconds push_leads::lead(uint32_t ready_after) const {
  // the first callback that completes ready_after: the largest floor at or below it
  auto it = least_.upper_bound(ready_after);
  if (it == least_.begin())
    return std::chrono::microseconds{0};
  return std::prev(it)->second;
}

} // namespace actorps
