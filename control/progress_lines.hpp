// The chief's progress lines: every `progress_every` global steps a line with the epoch, the
// examples per second and the mean training loss since the previous line (and TensorBoard's
// figures for it). One job of run_control, which logs what it returns.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace actorps {

/// The figures of a progress line (TensorBoard's examples/sec, global_step/sec and loss).
struct progress_figures {
  int64_t step = 0;
  double examples_per_sec = 0.0;
  double steps_per_sec = 0.0;
  double loss = 0.0;
};

class progress_lines {
public:
  using time_point = std::chrono::steady_clock::time_point;

  struct line {
    std::string text;
    std::optional<progress_figures> figures; ///< none when the reports since the last line span no time
  };

  /// A line every `every` global steps; `train_rows`: examples per epoch.
  progress_lines(int64_t every, int64_t train_rows);

  /// Training starts (or continues) at global step `step`.
  void start(int64_t step, time_point now);

  /// A report of `examples` examples and their losses' sum; the run is at global step `step` with
  /// `examples_total` examples trained. Returns the line when one is due.
  std::optional<line> add(int64_t step, int64_t examples_total, int64_t examples, double loss_sum, time_point now);

private:
  int64_t every_;
  int64_t train_rows_;
  double loss_ = 0.0;
  int64_t examples_ = 0;
  int64_t step_ = 0;      ///< the global step at the last line
  int64_t next_step_ = 0; ///< the global step the next line is due at
  time_point start_{};
};

} // namespace actorps
