// See log_throttle.hpp.
#include "control/log_throttle.hpp"

namespace actorps {

std::optional<uint64_t> log_throttle::admit(clock::time_point now) {
  if (in_window_ == 0 || now - window_start_ >= window_) {
    window_start_ = now;
    in_window_ = 0;
  }
  if (in_window_ >= burst_) {
    ++dropped_;
    return std::nullopt;
  }
  ++in_window_;
  const uint64_t said = dropped_;
  dropped_ = 0;
  return said;
}

} // namespace actorps
