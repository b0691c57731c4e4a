// Where a worker's step time goes, for TensorBoard and Prometheus: computing (the batch, forward,
// backward and the pushes backprop sends as it goes), pushing what is left after backprop, and
// waiting for the replies that carry the next step's values (TF's wait for the pull). Means over
// the steps since the last take(). Plain logic, single-threaded; time passed in.
#pragma once

#include <chrono>
#include <cstdint>

namespace actorps {

class step_timer {
public:
  using time_point = std::chrono::steady_clock::time_point;
  enum class phase { idle, computing, pushing, waiting };

  struct means {
    int64_t steps = 0;
    double compute_ms = 0.0;
    double push_ms = 0.0;
    double wait_ms = 0.0;
  };

  /// A step's compute begins (a wait for values, if one was running, ends).
  void compute_begins(time_point now);
  /// Its compute ended; the push of the rest follows.
  void compute_ends(time_point now);
  void push_begins(time_point now);
  /// The pushes are out; the wait for their replies begins.
  void push_ends(time_point now);

  phase at() const { return at_; }

  /// The means since the last take() (zeros without a step), and starts new sums.
  means take();

private:
  static double ms(time_point from, time_point to) { return std::chrono::duration<double, std::milli>(to - from).count(); }
  phase at_ = phase::idle;
  time_point since_{};
  means sums_;
};

} // namespace actorps
