// The worker's state machine: one method per input, each returning what the actor does next.
#include "control/replica_control.hpp"

#include "common/log.hpp"

#include <algorithm>

namespace actorps {

const char* to_string(replica_phase p) {
  switch (p) {
    case replica_phase::registering:
      return "registering";
    case replica_phase::waiting_start:
      return "waiting_start";
    case replica_phase::in_round:
      return "in_round";
    case replica_phase::recovering:
      return "recovering";
    case replica_phase::paused:
      return "paused";
    case replica_phase::awaiting_grant:
      return "awaiting_grant";
    case replica_phase::serving:
      return "serving";
    case replica_phase::stopping:
      return "stopping";
    case replica_phase::done:
      break;
  }
  return "done";
}

namespace {

replica_command command(replica_command::kind k) {
  return replica_command{k};
}

void append(replica_commands& out, replica_commands more) {
  for (auto& c : more)
    out.push_back(std::move(c));
}

} // namespace

replica_control::replica_control(replica_control_config cfg) : cfg_(std::move(cfg)) {
  if (cfg_.leased)
    leases_ = std::make_unique<lease_queue>();
}

replica_commands replica_control::fail(errc code, std::string text) {
  phase_ = replica_phase::done;
  replica_command c{replica_command::kind::fail};
  c.code = code;
  c.text = std::move(text);
  return {std::move(c)};
}

void replica_control::failed() {
  phase_ = replica_phase::done;
}

void replica_control::register_now(replica_time now, replica_commands& out) {
  phase_ = replica_phase::registering;
  deadline_ = now + cfg_.startup_timeout;
  out.push_back(command(replica_command::kind::register_hello));
  replica_command tick{replica_command::kind::tick_after};
  tick.after = cfg_.startup_timeout;
  out.push_back(std::move(tick));
}

replica_commands replica_control::begin(replica_time now) {
  replica_commands out;
  register_now(now, out);
  return out;
}

replica_commands replica_control::registered(int64_t steps_left, bool more, uint32_t shards) {
  if (phase_ != replica_phase::registering)
    return {};
  if (versions_.empty()) { // (a round in flight across a re-registration keeps its accounting)
    versions_.assign(shards, 0);
    computed_on_.assign(shards, 0);
    round_.in_flight.assign(shards, 0);
    round_.epoch.assign(shards, 0);
    round_.stale_from.assign(shards, false);
  }
  steps_left_ = steps_left >= 0 ? steps_left + early_grants_ : steps_left;
  early_grants_ = 0;
  more_grants_ = more;
  phase_ = replica_phase::waiting_start;
  replica_commands out{replica_command::log("registered with the chief; waiting for start")};
  if (start_early_) {
    start_early_ = false;
    append(out, begin_training());
  }
  return out;
}

replica_commands replica_control::start() {
  if (phase_ == replica_phase::registering)
    start_early_ = true;
  if (phase_ != replica_phase::waiting_start)
    return {};
  return begin_training();
}

replica_commands replica_control::begin_training() {
  if (cfg_.in_graph) { // no loop of its own: the chief's requests come (a round is never begun)
    phase_ = replica_phase::serving;
    return {replica_command::log("training in-graph: computing the parts of the chief's steps")};
  }
  replica_commands out{replica_command::log("training")};
  if (steps_left_ == 0 && !more_grants_) { // restored at train.max-steps: nothing left to do
    phase_ = replica_phase::stopping;
    append(out, finish_if_idle());
    return out;
  }
  phase_ = steps_left_ == 0 ? replica_phase::awaiting_grant : replica_phase::in_round;
  if (round_.at == stage::none) { // the first step's parameters (after a pause: fresh ones), also
    round_.at = stage::pulls;     // while the first grant is awaited: the grant begins a step on them
    out.push_back(command(replica_command::kind::pull));
  } // (a round still in flight from before a pause goes on by itself)
  return out;
}

replica_commands replica_control::granted(int64_t steps) {
  if (phase_ == replica_phase::done || steps <= 0)
    return {};
  if (phase_ == replica_phase::registering) { // it overtook the welcome (sent before the answer)
    early_grants_ += steps;
    return {};
  }
  steps_left_ = std::max<int64_t>(steps_left_, 0) + steps;
  if (phase_ != replica_phase::awaiting_grant)
    return {};
  phase_ = replica_phase::in_round;
  if (round_.at != stage::none) // (a round in flight across a chief restart: its end begins the next step)
    return {};
  return next_step();
}

replica_commands replica_control::stop() {
  if (phase_ == replica_phase::done)
    return {};
  phase_ = replica_phase::stopping;
  return finish_if_idle();
}

replica_commands replica_control::leave() {
  switch (phase_) {
    case replica_phase::done:
      return {};
    case replica_phase::registering: // not a member (yet, or of the chief being restarted): just go
    case replica_phase::paused:
      phase_ = replica_phase::done;
      return {replica_command::log("leaving before registering with the chief"), command(replica_command::kind::quit)};
    default:
      ending_ = ending::leave;
      phase_ = replica_phase::stopping;
      return finish_if_idle();
  }
}

replica_commands replica_control::tick(replica_time now) {
  if (now + std::chrono::milliseconds(1) < deadline_)
    return {}; // armed for an earlier registration
  if (phase_ == replica_phase::registering || phase_ == replica_phase::waiting_start
      || phase_ == replica_phase::paused)
    return fail(errc::timeout, "waiting for the chief: no start within cluster.startup-timeout");
  return {};
}

uint64_t replica_control::requested(uint32_t s) {
  ++round_.pending;
  ++round_.in_flight.at(s);
  return round_.epoch.at(s);
}

bool replica_control::answers(uint32_t s, uint64_t epoch) {
  if (phase_ == replica_phase::done || s >= round_.epoch.size() || round_.epoch[s] != epoch)
    return false;
  --round_.in_flight[s];
  --round_.pending;
  return true;
}

replica_commands replica_control::pulled(uint32_t s, uint64_t version) {
  versions_.at(s) = version;
  return settle();
}

replica_commands replica_control::pushed(uint32_t s, uint64_t version, uint64_t next_step, bool stale) {
  versions_.at(s) = version;
  if (stale)
    round_.stale_from.at(s) = true;
  round_.next_step = std::min(round_.next_step, next_step);
  return settle();
}

replica_commands replica_control::settle() {
  if (round_.pending > 0 || round_.at == stage::computing || round_.at == stage::reconnecting
      || !round_.unsettled.empty())
    return {}; // (reconnecting: a shard lost meanwhile is reached after the ones being reached)
  if (round_.broken) {
    replica_commands out;
    // Model-parallel: the group's exchange took the step; it is spent wherever its push went
    // (else this slice would need a step more than the others of its group take).
    if (round_.at == stage::pushes && cfg_.mode == train_mode::model_parallel) {
      spend_step(out);
      ++step_;
    }
    round_.broken = false;
    round_.at = stage::none;
    drop_ahead(); // (computed on values the worker pulls afresh)
    round_.stale_from.assign(round_.stale_from.size(), false);
    round_.next_step = UINT64_MAX;
    if (phase_ == replica_phase::stopping) { // told to stop: the run is over, nothing to reach again
      round_.lost.clear();
      append(out, finish_if_idle());
    } else {
      append(out, round_.lost.empty() ? after_recovery() : reconnect());
    }
    return out;
  }
  if (round_.at == stage::pulls)
    return round_complete();
  if (round_.at == stage::pushes)
    return step_complete();
  return {};
}

replica_commands replica_control::round_complete() {
  round_.at = stage::none;
  if (resync_step_) { // sync: a shard's version is the number of steps applied; from the lowest,
    // a shard ahead drops the push as stale and names its step (one behind would refuse it)
    step_ = static_cast<int64_t>(*std::min_element(versions_.begin(), versions_.end()));
    resync_step_ = false;
    stop_at_sync_limit();
  }
  return next_step();
}

replica_commands replica_control::step_status(step_state s, int rows) {
  if (phase_ == replica_phase::done)
    return {};
  if (ahead_busy())
    return ahead_status(s, rows); // (the compute begun last is the step ahead)
  if (round_.at != stage::computing)
    return {};
  switch (s) {
    case step_state::waiting:
      return {};
    case step_state::ready:
      return push_step(rows);
    case step_state::stopped: // another slice of the group stopped: so do I
      round_.at = stage::none;
      phase_ = replica_phase::stopping;
      return finish_if_idle();
  }
  return {};
}

replica_commands replica_control::step_abandoned() {
  if (phase_ == replica_phase::done)
    return {};
  if (ahead_busy()) // (the step computed ahead never began: its rows are given up)
    return ahead_status(step_state::stopped, 0);
  if (round_.at != stage::computing)
    return {};
  round_.broken = true;
  round_.at = stage::pulls; // (its requests are answered first; then the broken round recovers)
  return settle();
}

float replica_control::push_weight() const {
  if (cfg_.mode == train_mode::sync || lease_workers() == 0)
    return 1.0f;
  return static_cast<float>(cfg_.scaling_workers) / static_cast<float>(lease_workers());
}

bool replica_control::overlaps() const {
  return cfg_.overlap_steps > 0 && (cfg_.mode == train_mode::async || cfg_.mode == train_mode::ssp) && !cfg_.in_graph
         && !leases_;
}

// Overlap: the next step computes on the values the worker holds while this step's pushes
// travel, unless this step may be the last.
void replica_control::compute_ahead(replica_commands& out) {
  if (!overlaps() || phase_ != replica_phase::in_round || (steps_left_ >= 0 && steps_left_ < 2))
    return;
  ahead_ = ahead_step::computing;
  ahead_on_ = versions_;
  out.push_back(command(replica_command::kind::compute));
}

// A break, a stop or a pause: the step computed ahead is not pushed.
void replica_control::drop_ahead() {
  if (ahead_ == ahead_step::computing)
    ahead_ = ahead_step::dropped;
  else if (ahead_ == ahead_step::ready)
    ahead_ = ahead_step::none;
}

// The step computed ahead ended: it waits for the replies of the step before (or, dropped, is
// thrown away and the worker goes on where the round stands).
replica_commands replica_control::ahead_status(step_state s, int rows) {
  if (s == step_state::waiting)
    return {};
  if (ahead_ == ahead_step::dropped || s == step_state::stopped) {
    ahead_ = ahead_step::none;
  } else {
    ahead_ = ahead_step::ready;
    ahead_rows_ = rows;
  }
  return round_.at == stage::none ? next_step() : replica_commands{};
}

// A computed step of `rows` examples: its push, and (overlap) the next step computing ahead.
replica_commands replica_control::push_step(int rows) {
  report_examples_ += rows;
  round_.at = stage::pushes;
  replica_commands out{command(replica_command::kind::push)};
  compute_ahead(out);
  return out;
}

replica_commands replica_control::step_complete() {
  replica_commands out;
  round_.at = stage::none;
  auto dropped = std::count(round_.stale_from.begin(), round_.stale_from.end(), true);
  if (dropped > 0 && dropped == static_cast<long>(round_.stale_from.size())) {
    ++stale_steps_;
    ++report_stale_;
  } else if (dropped > 0) { // (not this worker's fresh step: the shards' step moved on without it)
    ++split_steps_;
    ++report_split_;
  } else {
    spend_step(out);
  }
  // The shards name the next step: the worker's own + 1, or in sync mode the global step (which
  // a worker whose gradients were dropped as stale catches up to). In sync mode every worker
  // stops at exactly train.max-steps, which makes seeded sync runs repeatable to the bit.
  step_ = static_cast<int64_t>(round_.next_step);
  round_.stale_from.assign(round_.stale_from.size(), false);
  round_.next_step = UINT64_MAX;
  stop_at_sync_limit();
  if (phase_ != replica_phase::stopping && report_steps_ >= cfg_.report_every)
    out.push_back(report(false));
  append(out, next_step());
  return out;
}

// A fresh step: counted for the next report and taken from the steps left (at none, the worker
// stops, or with grants reports and waits for more). One completed while the chief is reached
// again (a push in flight when it went down) was applied before its restart read the shards'
// versions, which count it: it is neither reported nor taken from the restart's grant.
void replica_control::spend_step(replica_commands& out) {
  if (phase_ == replica_phase::paused || phase_ == replica_phase::registering || phase_ == replica_phase::waiting_start)
    return;
  ++report_steps_;
  if (steps_left_ > 0 && --steps_left_ == 0) {
    if (!more_grants_) {
      phase_ = replica_phase::stopping; // its steps are the global steps
    } else if (phase_ != replica_phase::paused) { // the chief counts these steps, then grants more
      if (phase_ == replica_phase::in_round) // (waiting for the start: a round from before a chief restart)
        phase_ = replica_phase::awaiting_grant;
      out.push_back(report(false));
    }
  }
}

// Sync: every worker stops at the global step limit, whether a push reply or the shards'
// versions after a recovery name it.
void replica_control::stop_at_sync_limit() {
  if (cfg_.mode == train_mode::sync && cfg_.max_steps > 0 && step_ >= cfg_.max_steps)
    phase_ = replica_phase::stopping;
}

replica_commands replica_control::next_step() {
  if (phase_ == replica_phase::stopping) {
    drop_ahead();
    return finish_if_idle();
  }
  if (phase_ != replica_phase::in_round) {
    drop_ahead();
    return {}; // paused, out of steps: the start or the grant goes on
  }
  if (ahead_busy())
    return {}; // (its end goes on)
  if (ahead_ == ahead_step::ready) { // computed while the last step's exchange travelled: push it
    ahead_ = ahead_step::none;
    computed_on_ = ahead_on_;
    return push_step(ahead_rows_);
  }
  replica_command c{replica_command::kind::compute};
  if (leases_) {
    if (!leases_->ready()) { // the next lease's answer goes on
      feed_ = feed::starving;
      return ask_more();
    }
    feed_ = feed::flowing;
    c.batch = leases_->take(cfg_.batch_size);
  }
  round_.at = stage::computing;
  computed_on_ = versions_;
  replica_commands out{std::move(c)};
  if (leases_)
    append(out, ask_more()); // the next lease before it is needed
  return out;
}

// After a stop: quits once no request is in flight and (model-parallel) not inside a step: a
// slice that left a step half done would drop its columns' update while the slices that had
// finished the step pushed theirs. (Every slice waited on in the step is either still in it or
// has announced its stop, so the step ends either way.)
replica_commands replica_control::finish_if_idle() {
  if (phase_ != replica_phase::stopping || round_.pending > 0 || round_.at == stage::computing || ahead_busy())
    return {};
  phase_ = replica_phase::done;
  const bool leaving = ending_ == ending::leave;
  replica_commands out{report(!leaving), command(replica_command::kind::announce_stop)};
  out.push_back(replica_command::log(
    cat(leaving ? "leaving the job " : "stopped ",
        cfg_.in_graph ? cat("after computing ", parts_, " in-graph parts")
                      : cat("at step ", step_, stale_steps_ + split_steps_ > 0
                                                             ? cat(" (", stale_steps_, " steps dropped as stale",
                                                                   split_steps_ > 0 ? cat(", ", split_steps_, " taken by some shards only") : "", ")")
                                                             : ""))));
  replica_command last{leaving ? replica_command::kind::leave : replica_command::kind::quit};
  if (leaving)
    last.lease = leases_ ? leases_->leave(cfg_.index) : lease_request{cfg_.index, {}};
  out.push_back(std::move(last));
  return out;
}

replica_command replica_control::report(bool final) {
  replica_command c{replica_command::kind::report};
  c.steps = cfg_.speaks_for_group ? report_steps_ : 0;
  c.examples = cfg_.speaks_for_group ? report_examples_ : 0;
  c.final = final;
  c.stale_steps = report_stale_;
  c.split_steps = report_split_;
  report_steps_ = 0;
  report_examples_ = 0;
  report_stale_ = 0;
  report_split_ = 0;
  return c;
}

} // namespace actorps
