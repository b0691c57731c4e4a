// An ssp aggregator's session without CAF: the ssp rule, the answers parked while their worker is
// more than `staleness` steps ahead of the slowest, and the silence check that lets go of a
// slowest worker silent for the step timeout while others wait on it. The SyncAggregator
// (actors/sync_aggregator_ssp.cpp) and the simulator's shards carry out what it returns, with
// times from their own clocks. Single-threaded.
#pragma once

#include "control/aggregator_counts.hpp"
#include "control/silence_watch.hpp"
#include "control/sync_rules.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace actorps {

template <class Ticket>
class ssp_session {
public:
  using time_point = std::chrono::steady_clock::time_point;

  /// What an input let go: answers to send now, the workers let go for silence, and when to
  /// check the silence next (a parked answer waits on the slowest).
  struct released {
    std::vector<std::pair<uint32_t, Ticket>> go; ///< (worker, its parked or new answer)
    std::vector<uint32_t> silent;                ///< let go: silent for the timeout while others waited
    std::optional<time_point> check_at;          ///< call tick() then (one check armed at a time)
    uint64_t ahead = 0;                          ///< finished(): how far the worker is ahead of the slowest
    bool parked = false;                         ///< finished(): its answer waits
  };

  ssp_session(ssp_rule rule, uint32_t workers, time_point start, std::chrono::nanoseconds silence_timeout)
    : rule_(std::move(rule)), silence_(workers, start), timeout_(silence_timeout), parked_(workers),
      counts_(workers) {}

  const ssp_rule& rule() const { return rule_; }
  const aggregator_counts& counts() const { return counts_; }
  /// A restored shard: each worker's staleness counts from its next push (ssp_rule::resume).
  void resume() { rule_.resume(); }

  /// Worker w pushed at `now` (heard from, whatever comes of the push).
  void heard(uint32_t w, time_point now) { silence_.heard(w, now); }

  /// Worker w's push of `step` was applied: its answer `t` goes now or is parked.
  released finished(uint32_t w, uint64_t step, Ticket t, time_point now) {
    released out;
    out.ahead = rule_.finished(w, step);
    counts_.lag(out.ahead);
    if (rule_.may_continue(w)) {
      out.go.emplace_back(w, std::move(t));
    } else {
      parked_.at(w) = std::move(t);
      out.parked = true;
      for (auto slow : rule_.slowest()) // (they held it up)
        ++counts_.waited_on.at(slow);
    }
    release(out, now);
    return out;
  }

  /// Worker w went down: it is no longer waited on.
  released lose(uint32_t w, time_point now) {
    released out;
    rule_.lose(w);
    if (w < parked_.size())
      parked_[w].reset();
    release(out, now);
    return out;
  }

  /// The silence check: lets go of the slowest workers silent for the timeout while an answer is
  /// parked, then releases whoever may go on.
  released tick(time_point now) {
    released out;
    armed_ = false;
    if (!any_parked())
      return out;
    out.silent = silence_.silent(rule_.slowest(), now, timeout_);
    for (auto w : out.silent)
      rule_.lose(w);
    release(out, now);
    return out;
  }

private:
  bool any_parked() const {
    for (auto& p : parked_)
      if (p)
        return true;
    return false;
  }

  // Releases every parked answer whose worker may go on; arms the silence check while one waits.
  void release(released& out, time_point now) {
    for (uint32_t w = 0; w < parked_.size(); ++w)
      if (parked_[w] && rule_.may_continue(w)) {
        out.go.emplace_back(w, std::move(*parked_[w]));
        parked_[w].reset();
      }
    if (armed_ || !any_parked())
      return;
    auto slowest = rule_.slowest(); // (only while an answer waits: not on every push)
    if (slowest.empty())
      return;
    armed_ = true;
    out.check_at = std::max(now, silence_.next_deadline(slowest, timeout_));
  }

  ssp_rule rule_;
  silence_watch silence_;
  std::chrono::nanoseconds timeout_;
  std::vector<std::optional<Ticket>> parked_; ///< per worker: its answer while it is too far ahead
  bool armed_ = false;
  aggregator_counts counts_;
};

} // namespace actorps
