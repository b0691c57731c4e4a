// What one node reports while it runs: scalars, a histogram and text to its TensorBoard event
// file (runs/<name>/tensorboard/<node>/, train.tensorboard) and every scalar and counter to its
// metric registry, which node.metrics-port serves to Prometheus. A scalar's tag is TensorBoard's
// name ("validation/accuracy"); Prometheus sees it as prometheus_scalar(tag) (observe/metric_catalog). Rates
// of counters (a shard's updates/s) are written by a thread of its own every interval.
// Thread-safe; actors hold it through a shared_ptr (none: they report nothing).
#pragma once

#include "observe/event_file.hpp"
#include "observe/metric_registry.hpp"
#include "observe/summary_event.hpp"

#include <caf/expected.hpp>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace actorps {

struct telemetry_settings {
  std::string run;             ///< the run's name (label "run")
  std::string role;            ///< chief, worker, ps, trainer (label "role")
  uint32_t index = 0;          ///< label "index"
  std::string tensorboard_dir; ///< the node's event folder; "" writes no events
  std::chrono::milliseconds rate_interval{2000};
};

class telemetry {
public:
  /// Creates the event file (when tensorboard_dir is set). Errors: file_error naming the path.
  static caf::expected<std::shared_ptr<telemetry>> open(const telemetry_settings& s);

  ~telemetry();
  telemetry(const telemetry&) = delete;
  telemetry& operator=(const telemetry&) = delete;

  /// Scalars at `step`: one event, and each tag's gauge.
  void scalars(int64_t step, const std::vector<std::pair<std::string, double>>& values);

  /// A histogram at `step` (TensorBoard only).
  void histogram(int64_t step, const std::string& tag, const histogram_data& h);

  /// A text summary at step 0 (TensorBoard only).
  void text(const std::string& tag, const std::string& text);

  metric_registry& metrics() { return metrics_; }

  /// The event file's path ("" without one).
  std::string event_path() const { return events_ ? events_->path() : std::string{}; }

  /// From now on, every rate_interval: the rate per second of each counter (name, tag) since the
  /// last interval, as scalars at the step the gauge `step_gauge` holds (and once more as it stops).
  void write_rates(std::vector<std::pair<std::string, std::string>> counters, std::string step_gauge);

private:
  explicit telemetry(const telemetry_settings& s);
  void write(const std::string& event);
  void rate_loop(std::vector<std::pair<std::string, std::string>> counters, std::string step_gauge);

  telemetry_settings settings_;
  metric_registry metrics_;
  std::optional<event_file> events_;
  std::mutex mtx_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread rates_;
};

} // namespace actorps
