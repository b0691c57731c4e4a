// A budget for one kind of log line that a stranger can provoke at will (a refused connection, an
// expired one): at most `burst` lines per `window`; the rest are counted, and the next line let
// through says how many were not logged. Plain logic, time passed in.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace actorps {

class log_throttle {
public:
  using clock = std::chrono::steady_clock;

  log_throttle(uint64_t burst, clock::duration window) : burst_(burst), window_(window) {}

  /// Returns nullopt when a line at `now` is over the budget (it is counted); otherwise how many
  /// lines were not logged since the last one let through (0: none), which the caller says.
  std::optional<uint64_t> admit(clock::time_point now);

private:
  uint64_t burst_;
  clock::duration window_;
  clock::time_point window_start_{};
  uint64_t in_window_ = 0;
  uint64_t dropped_ = 0;
};

} // namespace actorps
