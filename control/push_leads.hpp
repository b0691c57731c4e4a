// How long backprop still runs after each part of a step's push is complete, measured over a
// worker's first steps: a part that goes out early (cluster.push-bucket-bytes) pays only where
// its exchange can travel while the layers below are computed; where backprop is almost over,
// the part's own exchange costs more than it hides (cluster.push-early-ms). Plain logic without
// CAF: the worker feeds it the times of its gradient callbacks and asks it when to stop.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace actorps {

class push_leads {
public:
  using time_point = std::chrono::steady_clock::time_point;

  /// Measures steps skip+1 .. skip+steps (the first ones warm caches and connections up).
  push_leads(int skip, int steps) : skip_(skip), steps_(steps) {}

  /// A step's backprop begins.
  void begin_step();

  /// Backprop has the gradient of every variable >= floor at t.
  void completed(uint32_t floor, time_point t);

  /// The step's backprop is over at t; returns true exactly once: when the last measured step
  /// ended (then ask lead()).
  bool end_step(time_point t);

  /// The least time backprop had left, over the measured steps, after every variable >=
  /// ready_after was complete (the first callback that completed them); zero where no callback
  /// came before the end.
  std::chrono::microseconds lead(uint32_t ready_after) const;

  /// Whether the measurement is over.
  bool done() const { return seen_ >= skip_ + steps_; }

private:
  int skip_;
  int steps_;
  int seen_ = 0;                                             // steps ended
  std::vector<std::pair<uint32_t, time_point>> step_;       // this step's callbacks
  std::map<uint32_t, std::chrono::microseconds> least_;      // per floor: its least lead so far
};

} // namespace actorps
