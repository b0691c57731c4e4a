// Stall timing and the stall line.
#include "control/stall_watch.hpp"

#include "common/log.hpp"

#include <algorithm>
#include <cstdio>

namespace actorps {

namespace {

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f s", s);
  return buf;
}

} // namespace

void stall_watch::observe(int64_t step, time_point now) {
  if (step == step_)
    return;
  step_ = step;
  since_ = now;
  reported_ = now;
}

bool stall_watch::due(time_point now) {
  if (!on() || step_ < 0 || now - since_ < warn_after_ || now - reported_ < warn_after_)
    return false;
  reported_ = now;
  return true;
}

double stall_watch::stalled_seconds(time_point now) const {
  return std::chrono::duration<double>(now - since_).count();
}

std::chrono::milliseconds stall_watch::next_check(time_point now) const {
  auto at = std::max(since_, reported_) + warn_after_;
  return std::max(std::chrono::milliseconds(100), std::chrono::ceil<std::chrono::milliseconds>(at - now));
}

std::string stall_report(double stalled_seconds, int64_t step, double warn_after_seconds,
                         const std::vector<stall_worker>& workers, const std::vector<stall_shard>& shards) {
  const bool any_answer = std::any_of(shards.begin(), shards.end(), [](const stall_shard& s) { return s.answered; });
  const bool any_pending = std::any_of(workers.begin(), workers.end(), [](const stall_worker& w) { return w.pending; });
  std::string named;
  for (auto& w : workers) {
    bool culprit = any_pending ? w.pending
                   : any_answer ? (!w.push_age || *w.push_age >= warn_after_seconds)
                                : w.report_age >= warn_after_seconds;
    if (!culprit)
      continue;
    named += cat(named.empty() ? "" : "; ", w.name, " (last push ", w.push_age ? seconds(*w.push_age) + " ago" : "unknown",
                 ", last report ", seconds(w.report_age), " ago", w.pending ? ", its gradient is missing from the open step" : "",
                 ")");
  }
  std::string silent;
  for (auto& s : shards)
    if (!s.answered)
      silent += cat(silent.empty() ? "" : ", ", s.name, " (no answer within ", seconds(warn_after_seconds),
                    s.answer_age ? cat(", last answer ", seconds(*s.answer_age), " ago)") : std::string{", never answered)"});
  auto out = cat("stall: no global step for ", seconds(stalled_seconds), " (at step ", step, "); ");
  if (!silent.empty()) // (a shard that does not answer holds every worker's push: it comes first)
    out += cat("waiting for ", silent, named.empty() ? "" : "; workers silent too: " + named);
  else if (!named.empty())
    out += cat("waiting for ", named);
  else
    out += "every worker pushed within the interval";
  return out;
}

} // namespace actorps
