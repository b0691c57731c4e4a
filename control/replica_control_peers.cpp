// The worker's inputs around its peers: failed requests, lost shards reached again, the chief's
// restart, and an elastic worker's data leases -- the inputs that come back from commands the
// actor carries out later (a reconnect, a lease request) while other inputs arrive meanwhile.
#include "control/replica_control.hpp"

#include "common/log.hpp"

#include <algorithm>

namespace actorps {

// A broken connection, or a restarted shard not restored yet, is survivable when the worker can
// reconnect: the round is dropped and the worker pulls afresh once its other replies are in.
// A broken connection says nothing of why: the shard's down message, which follows on the
// shard's own connection, does (a frozen worker woken after the run's end read its requests fail
// as the shards closed their connections before it read their normal exits, and set out to
// reach them again). Only a shard known to be down already is lost now.
replica_commands replica_control::request_failed(uint32_t s, request_failure how, errc code, std::string text) {
  if (phase_ == replica_phase::done)
    return {};
  if (code == errc::non_finite) // the shard refused this worker's own gradients
    return fail(code, cat("training diverged at step ", step_, ": ", text, "; lower train.learning-rate"));
  const bool known_down = down_.count(s) > 0;
  if (how == request_failure::lost && !known_down) {
    round_.unsettled.insert(s);
    round_.broken = true;
    return settle();
  }
  if (how == request_failure::refused || (!cfg_.shards_recoverable && how != request_failure::timed_out))
    return fail(code, std::move(text));
  if (how == request_failure::lost)
    round_.lost.insert(s);
  round_.broken = true;
  return settle();
}

// Shard s's outstanding requests will never be answered; the round is dropped.
replica_commands replica_control::shard_down(uint32_t s, std::string why, bool ended) {
  if (phase_ == replica_phase::done)
    return {};
  down_.insert(s);
  if (s >= round_.epoch.size())
    return {}; // (before the plan: the first pull finds out)
  round_.unsettled.erase(s);
  replica_commands out;
  if (ended && phase_ != replica_phase::stopping) { // stopped on purpose: the run is over
    out.push_back(replica_command::log(cat(why, ": the run is over; stopping")));
    phase_ = replica_phase::stopping;
  } else if (!cfg_.shards_recoverable && phase_ != replica_phase::stopping) {
    return fail(errc::peer_unreachable, cat("lost a shard: ", why));
  }
  ++round_.epoch[s];
  round_.pending -= round_.in_flight[s];
  round_.in_flight[s] = 0;
  round_.lost.insert(s);
  round_.broken = true;
  for (auto& c : settle())
    out.push_back(std::move(c));
  return out;
}

// The actor reaches the lost shards without blocking: other inputs (a stop, a grant, another
// shard lost) come meanwhile; the round stays at `reconnecting` until the result is in.
replica_commands replica_control::reconnect() {
  round_.at = stage::reconnecting;
  round_.reaching = round_.lost;
  replica_command c{replica_command::kind::reconnect_shards};
  c.shards.assign(round_.lost.begin(), round_.lost.end());
  return {std::move(c)};
}

replica_commands replica_control::shards_reconnected() {
  if (phase_ == replica_phase::done || round_.at != stage::reconnecting)
    return {};
  round_.at = stage::none;
  for (auto s : round_.reaching) {
    round_.lost.erase(s);
    down_.erase(s);
  }
  round_.reaching.clear();
  resync_step_ = cfg_.mode == train_mode::sync;
  if (phase_ == replica_phase::stopping) {
    round_.lost.clear();
    return finish_if_idle();
  }
  if (!round_.lost.empty()) // lost while the others were reached
    return reconnect();
  return after_recovery();
}

replica_commands replica_control::after_recovery() {
  if (phase_ == replica_phase::stopping)
    return finish_if_idle();
  if (phase_ == replica_phase::awaiting_grant && round_.at == stage::none) { // started while a shard was
    round_.at = stage::pulls; // reached again: fresh values now, for the grant to begin a step on
    return {replica_command{replica_command::kind::pull}};
  }
  if (phase_ != replica_phase::in_round && phase_ != replica_phase::recovering)
    return {}; // (paused or not started: the start pulls)
  phase_ = replica_phase::recovering;
  replica_command c{replica_command::kind::retry_after};
  c.after = cfg_.retry_after;
  return {std::move(c)};
}

replica_commands replica_control::retry() {
  if (phase_ != replica_phase::recovering || round_.at != stage::none)
    return {};
  phase_ = replica_phase::in_round;
  round_.at = stage::pulls; // a restarted shard answers not_initialized until restored: repeats
  return {replica_command{replica_command::kind::pull}};
}

replica_commands replica_control::ask_more() {
  if (!leases_->wants_more())
    return {};
  replica_command c{replica_command::kind::ask_lease};
  c.lease = leases_->request(cfg_.index);
  c.epoch = lease_epoch_;
  return {std::move(c)};
}

replica_commands replica_control::lease_answered(uint64_t epoch, data_lease lease) {
  if (phase_ == replica_phase::done || !leases_ || epoch != lease_epoch_)
    return {}; // (the answer of a chief that went down since: its successor hands out its own)
  const auto wait = std::chrono::milliseconds{lease.rows.empty() ? std::max(lease.wait_ms, 1) : 0};
  leases_->answered(std::move(lease));
  if (wait.count() > 0) { // training is paused: ask again then
    replica_command c{replica_command::kind::lease_after};
    c.after = wait;
    return {std::move(c)};
  }
  return starving() ? next_step() : replica_commands{};
}

replica_commands replica_control::lease_failed(uint64_t epoch, errc code, std::string text) {
  if (phase_ == replica_phase::done || !leases_ || epoch != lease_epoch_)
    return {};
  if (!cfg_.chief_recoverable)
    return fail(code, cat("asking the chief for data failed: ", text));
  leases_->request_failed(); // the chief may be restarting: ask again soon
  replica_command c{replica_command::kind::lease_after};
  c.after = cfg_.lease_retry;
  return {std::move(c)};
}

replica_commands replica_control::lease_wait_over() {
  if (phase_ == replica_phase::done || !leases_)
    return {};
  leases_->wait_over();
  return starving() ? next_step() : ask_more();
}

replica_commands replica_control::chief_down(std::string why, bool ended) {
  if (phase_ == replica_phase::done)
    return {};
  if (ended) { // the chief quits normally only once the run is over: no one to report to
    phase_ = replica_phase::done;
    return {replica_command::log(cat(why, " after the end of the run; stopping at step ", step_)),
            replica_command{replica_command::kind::quit}};
  }
  // (stopping for the chief's stop: its restart decides again; leaving the job: the leave is lost)
  if (!cfg_.chief_recoverable || (phase_ == replica_phase::stopping && ending_ == ending::leave))
    return fail(errc::peer_unreachable, cat("lost the chief: ", why));
  phase_ = replica_phase::paused;
  start_early_ = false;
  // its restart counts the steps so far from the shards (or its checkpoint): the steps not yet
  // reported are not reported again
  report_steps_ = report_examples_ = report_stale_ = report_split_ = 0;
  return {replica_command::log(cat(why, "; pausing at step ", step_,
                                   " and waiting up to cluster.connect-timeout for it to restart")),
          replica_command{replica_command::kind::reconnect_chief}};
}

replica_commands replica_control::chief_reconnected(replica_time now) {
  if (phase_ != replica_phase::paused)
    return {};
  replica_commands out{replica_command::log("reconnected to the chief; registering again")};
  if (leases_) { // the restarted chief hands out its own leases; the data of ours is trained again
    leases_ = std::make_unique<lease_queue>();
    ++lease_epoch_;
    feed_ = feed::flowing;
  }
  register_now(now, out);
  return out;
}

} // namespace actorps
