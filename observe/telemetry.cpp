// Events, gauges and the rate thread.
#include "observe/telemetry.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "observe/metric_catalog.hpp"

namespace actorps {

telemetry::telemetry(const telemetry_settings& s)
  : settings_(s), metrics_({{"run", s.run}, {"role", s.role}, {"index", std::to_string(s.index)}}) {
}

caf::expected<std::shared_ptr<telemetry>> telemetry::open(const telemetry_settings& s) {
  std::shared_ptr<telemetry> t{new telemetry(s)};
  if (!s.tensorboard_dir.empty()) {
    auto f = event_file::create(s.tensorboard_dir);
    if (!f)
      return std::move(f.error());
    t->events_.emplace(std::move(*f));
  }
  return t;
}

telemetry::~telemetry() {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    stopping_ = true;
  }
  wake_.notify_all();
  if (rates_.joinable())
    rates_.join();
}

void telemetry::write(const std::string& event) {
  if (!events_)
    return;
  if (auto err = events_->append(event))
    log_line(settings_.role, describe(err)); // (once: the file takes nothing after a failed write)
}

void telemetry::scalars(int64_t step, const std::vector<std::pair<std::string, double>>& values) {
  for (auto& [tag, v] : values)
    if (auto m = prometheus_scalar(tag))
      metrics_.set(m->name, v * m->scale);
  write(scalars_event(wall_time_now(), step, values));
}

void telemetry::histogram(int64_t step, const std::string& tag, const histogram_data& h) {
  write(histogram_event(wall_time_now(), step, tag, h));
}

void telemetry::text(const std::string& tag, const std::string& text) {
  write(text_event(wall_time_now(), 0, tag, text));
}

void telemetry::write_rates(std::vector<std::pair<std::string, std::string>> counters, std::string step_gauge) {
  if (rates_.joinable())
    return;
  rates_ = std::thread{[this, counters = std::move(counters), step_gauge = std::move(step_gauge)] {
    rate_loop(counters, step_gauge);
  }};
}

void telemetry::rate_loop(std::vector<std::pair<std::string, std::string>> counters, std::string step_gauge) {
  std::vector<double> last(counters.size(), 0.0);
  auto since = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock{mtx_};
  for (bool stopped = false; !stopped;) { // (one more sample as it stops: a short run still gets one)
    stopped = wake_.wait_for(lock, settings_.rate_interval, [this] { return stopping_; });
    lock.unlock();
    auto now = std::chrono::steady_clock::now();
    const double span = std::chrono::duration<double>(now - since).count();
    since = now;
    std::vector<std::pair<std::string, double>> values;
    for (size_t i = 0; i < counters.size(); ++i) {
      double v = metrics_.value(counters[i].first);
      values.emplace_back(counters[i].second, span > 0 ? (v - last[i]) / span : 0.0);
      last[i] = v;
    }
    scalars(static_cast<int64_t>(metrics_.value(step_gauge)), values);
    lock.lock();
  }
}

} // namespace actorps
