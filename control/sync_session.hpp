// A sync aggregator's session without CAF: the sync rule, the tickets of each step's contributors
// (the SyncAggregator's reply promises, or the simulator's held replies) and the step clock that
// lets go of the workers still silent a step timeout after the step's first push. The
// SyncAggregator (actors/sync_aggregator.cpp) and the simulator's shards (sim/) carry out what it
// returns, with times from their own clocks. Single-threaded.
#pragma once

#include "control/aggregator_counts.hpp"
#include "control/sync_rules.hpp"

#include <caf/error.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace actorps {

template <class Ticket>
class sync_session {
public:
  using time_point = std::chrono::steady_clock::time_point;

  /// A completed step: the rule's result and each released contributor's tickets (in the order
  /// of done.released).
  struct step_done {
    sync_rule::completed done;
    std::vector<std::vector<Ticket>> release;
  };
  /// What an offer did.
  struct offered {
    enum class kind { accepted, stale, refused };
    kind what = kind::accepted;
    caf::error error;                 ///< refused: why
    std::vector<Ticket> back;         ///< stale (answer with the current values) or refused (with the error)
    bool arm = false;                 ///< the step clock starts: call tick() after the step timeout
    std::optional<step_done> applied; ///< the step is complete: apply it and release its contributors
  };
  /// What the step clock found.
  struct ticked {
    std::vector<uint32_t> silent;                  ///< let go: silent for the step timeout
    std::optional<std::chrono::nanoseconds> again; ///< too early: tick again after this
    std::optional<step_done> applied;
  };

  sync_session(sync_rule rule, std::chrono::nanoseconds step_timeout)
    : rule_(std::move(rule)), timeout_(step_timeout), held_(rule_.workers()), counts_(rule_.workers()) {}

  const sync_rule& rule() const { return rule_; }
  const aggregator_counts& counts() const { return counts_; }
  /// A shard restored at `step` resumes there (sync_rule::resume_at).
  bool resume_at(uint64_t step) { return rule_.resume_at(step); }

  /// Worker w's gradients for `step`, with the tickets its answer goes to. A push offered in parts
  /// (late parts come one by one) counts once, where `counted` (its last part).
  offered offer(uint32_t w, uint64_t step, std::vector<variable_slice> grads, std::vector<Ticket> tickets,
                time_point now, bool counted = true) {
    offered out;
    const bool first = rule_.missing().size() == rule_.live_workers();
    const uint64_t now_step = rule_.step();
    auto verdict = rule_.offer(w, step, std::move(grads));
    if (!verdict) {
      out.what = offered::kind::refused;
      out.error = std::move(verdict.error());
      out.back = std::move(tickets);
      return out;
    }
    if (counted)
      counts_.lag(now_step - std::min(now_step, step));
    if (*verdict == sync_rule::verdict::stale) {
      counts_.stale_dropped += counted ? 1 : 0;
      out.what = offered::kind::stale;
      out.back = std::move(tickets);
      return out;
    }
    held_.at(w) = std::move(tickets);
    if (first) {
      started_ = now;
      out.arm = !armed_; // (one timer at a time: an armed one re-arms itself for this step)
      armed_ = true;
    }
    out.applied = take_ready(now);
    return out;
  }

  /// Stops waiting for worker w (its process died, or it stayed silent): the gradient and the
  /// tickets it holds are dropped.
  std::optional<step_done> lose(uint32_t w, time_point now) {
    rule_.lose(w);
    if (w < held_.size())
      held_[w].clear();
    return take_ready(now);
  }

  /// The step clock (the caller's one timer, armed by `arm` or `again`): lets go of every worker
  /// the step still waits for once a step timeout has passed since the step's first push (nothing
  /// while no push or every push is in).
  ticked tick(time_point now) {
    ticked out;
    armed_ = false;
    if (rule_.ready() || rule_.missing().size() == rule_.live_workers())
      return out; // (nothing waits: the next step's first push arms the clock again)
    if (auto since = now - started_; since < timeout_) {
      out.again = timeout_ - std::chrono::duration_cast<std::chrono::nanoseconds>(since);
      armed_ = true;
      return out;
    }
    out.silent = rule_.missing();
    for (auto w : out.silent) {
      rule_.lose(w);
      held_[w].clear();
    }
    out.applied = take_ready(now);
    return out;
  }

private:
  std::optional<step_done> take_ready(time_point now) {
    if (!rule_.ready())
      return std::nullopt;
    step_done out;
    out.done = rule_.complete();
    ++counts_.waited_on.at(out.done.waited_on);
    for (auto w : out.done.released)
      out.release.push_back(std::exchange(held_[w], {}));
    started_ = now; // (the next step's clock starts at its first push; until then, from here)
    return out;
  }

  sync_rule rule_;
  std::chrono::nanoseconds timeout_;
  std::vector<std::vector<Ticket>> held_; ///< per worker: its tickets in the current step
  time_point started_{};
  bool armed_ = false; ///< a tick() is due (the caller's one timer)
  aggregator_counts counts_;
};

} // namespace actorps
