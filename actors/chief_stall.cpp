// The chief's stall report (cluster.stall-warn): as each interval since the last global step ends
// it checks whether a step completed; when none did for the interval it asks every shard whom it waits for (the open
// sync step's missing gradients, each worker's last push), gives each the interval to answer,
// and logs the line control/stall_watch composes. The count goes to summary.json, TensorBoard
// (stalls) and Prometheus (actorps_stalls_total).
#include "actors/chief_state.hpp"

#include "common/log.hpp"
#include "train/run_telemetry.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

namespace actorps {

using namespace detail;

namespace {

// What the shards answered (absent: no answer within the interval).
struct stall_answers {
  std::vector<std::optional<shard_stats>> shards;
  size_t left = 0;
};

void log_stall(chief_pointer self, const stall_answers& got, double stalled, int64_t step) {
  auto& st = self->state;
  const auto now = self->clock().now();
  const double interval = std::chrono::duration<double>(st.cfg.cluster.stall_warn).count();
  auto report_ages = st.reports.ages_ms(now);
  std::vector<stall_worker> workers;
  for (uint32_t j = 0; j < st.workers.size(); ++j) {
    if (!st.workers[j] || st.ctl->status(j) != member::training)
      continue;
    stall_worker w{st.ctl->worker_name(j), j < report_ages.size() ? report_ages[j] / 1000.0 : stalled, std::nullopt, false};
    for (auto& answer : got.shards) {
      if (!answer)
        continue;
      if (j < answer->push_age_ms.size()) {
        double age = answer->push_age_ms[j] / 1000.0;
        w.push_age = w.push_age ? std::min(*w.push_age, age) : age;
      }
      for (auto p : answer->pending)
        w.pending = w.pending || p == j;
    }
    workers.push_back(std::move(w));
  }
  std::vector<stall_shard> shards;
  for (uint32_t s = 0; s < got.shards.size(); ++s)
    shards.push_back({st.ctl->shard_name(s), got.shards[s].has_value(),
                      s < st.shard_heard.size() && st.shard_heard[s]
                        ? std::optional<double>{std::chrono::duration<double>(now - *st.shard_heard[s]).count()}
                        : std::nullopt});
  log_line("chief", stall_report(stalled, step, interval, workers, shards));
  ++st.stalls;
  if (st.cfg.observed) {
    st.cfg.observed->metrics().add("actorps_stalls_total", 1);
    st.cfg.observed->scalars(step, {{"stalls", static_cast<double>(st.stalls)}});
  }
}

void report_stall(chief_pointer self) {
  auto& st = self->state;
  const auto now = self->clock().now();
  const double stalled = st.stall.stalled_seconds(now);
  const int64_t step = st.stall.step();
  auto got = std::make_shared<stall_answers>();
  got->shards.resize(st.cfg.shards.size());
  got->left = st.cfg.shards.size();
  auto one_done = [=] {
    if (--got->left == 0)
      log_stall(self, *got, stalled, step);
  };
  const auto wait = std::min(st.cfg.cluster.stall_warn, st.cfg.cluster.request_timeout);
  for (uint32_t s = 0; s < st.cfg.shards.size(); ++s)
    self->request(st.cfg.shards[s], wait, stats_atom_v)
      .then([=](shard_stats& x) { got->shards[s] = std::move(x); heard_from_shard(self, s); one_done(); },
            [=](caf::error&) { one_done(); });
}

} // namespace

void detail::heard_from_shard(chief_pointer self, uint32_t s) {
  auto& heard = self->state.shard_heard;
  if (s >= heard.size())
    heard.resize(s + 1);
  heard[s] = self->clock().now();
}

void detail::watch_stalls(chief_pointer self) {
  auto& st = self->state;
  st.stall = stall_watch{st.cfg.cluster.stall_warn};
  st.reports = silence_watch{static_cast<uint32_t>(st.workers.size()), self->clock().now()};
  st.stall.observe(st.ctl->steps(), self->clock().now());
  if (st.stall.on())
    self->delayed_send(self, st.stall.next_check(self->clock().now()), stall_atom_v);
}

void detail::check_stall(chief_pointer self) {
  auto& st = self->state;
  const auto phase = st.ctl->phase();
  if (phase == run_phase::done || phase == run_phase::finishing || phase == run_phase::final_save)
    return;
  const auto now = self->clock().now();
  st.stall.observe(st.ctl->steps(), now);
  if (phase == run_phase::training && !st.ctl->paused() && st.stall.due(now))
    report_stall(self);
  self->delayed_send(self, st.stall.next_check(now), stall_atom_v);
}

} // namespace actorps
