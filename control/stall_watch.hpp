// The chief's stall report (cluster.stall-warn): when no global step completes for the interval,
// whom the run waits for. stall_watch says when a report is due; stall_report() names the
// culprits from what the chief and the shards know. Plain logic, single-threaded.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace actorps {

class stall_watch {
public:
  using time_point = std::chrono::steady_clock::time_point;

  /// warn_after 0: never due.
  explicit stall_watch(std::chrono::milliseconds warn_after) : warn_after_(warn_after) {}

  /// The global step at `now` (training began, or a report counted); a new step ends a stall.
  void observe(int64_t step, time_point now);

  /// Whether a report is due at `now`: no new step for warn_after since the last one and since
  /// the last report (a long stall is reported again every interval). Marks it reported.
  bool due(time_point now);

  /// Seconds since the last new step.
  double stalled_seconds(time_point now) const;

  int64_t step() const { return step_; }

  /// When the owner should call due() next: when the interval since the last step (or the last
  /// report) ends, at least 100 ms from now (so a stall is reported as its interval ends).
  std::chrono::milliseconds next_check(time_point now) const;

  bool on() const { return warn_after_.count() > 0; }

private:
  std::chrono::milliseconds warn_after_;
  int64_t step_ = -1;
  time_point since_{};
  time_point reported_{};
};

/// What the chief knows of a worker at a stall.
struct stall_worker {
  std::string name;                  ///< e.g. "worker 2 at 127.0.0.1:4012"
  double report_age = 0.0;           ///< seconds since its last progress report to the chief
  std::optional<double> push_age;    ///< seconds since its last push, the most recent over the shards that answered
  bool pending = false;              ///< sync: a shard's open step lacks its gradient
};

/// What a shard answered at a stall.
struct stall_shard {
  std::string name;
  bool answered = false;
  std::optional<double> answer_age; ///< seconds since the chief last had an answer from it (none: never)
};

/// The stall line: "no global step for 10.2 s (at step 340); waiting for worker 2 (...)". First
/// the shards that did not answer within the interval (with the seconds since their last answer),
/// then the workers: those a shard's open step waits for (sync), else those that pushed nothing
/// for the interval (or, when no shard answered, sent no report), each with the seconds since its
/// last push and report.
std::string stall_report(double stalled_seconds, int64_t step, double warn_after_seconds,
                         const std::vector<stall_worker>& workers, const std::vector<stall_shard>& shards);

} // namespace actorps
