// The simulated cluster: the controllers' commands carried out as events in virtual time.
#include "sim/cluster.hpp"

#include "common/log.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace actorps::sim {

uint64_t rng::next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

namespace {

constexpr size_t transcript_lines = 150;
constexpr int batch_rows = 50;

std::string stamp(vtime t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%10.3f ms", static_cast<double>(t) / 1000.0);
  return buf;
}

} // namespace

struct cluster::worker_node {
  std::unique_ptr<replica_control> ctl;
  uint64_t incarnation = 0;
  bool alive = false; ///< its process runs (not crashed, not exited)
  uint64_t chief = 1; ///< the chief process it is connected to (its loss is noticed only then)
  vtime frozen_until = 0;
  double slow = 1.0;
};

struct cluster::shard_node {
  bool alive = true;        ///< its process runs
  bool restored = true;     ///< set up (a restarted shard waits for the chief's restore)
  uint64_t incarnation = 1; ///< messages to an older process are lost
  uint64_t lost_updates = 0; ///< lost with its crashes (applied after the restored checkpoint)
  uint64_t crashes = 0;
  uint64_t restores = 0;
  uint64_t version = 0;
  std::optional<sync_rule> sync;
  std::optional<ssp_rule> ssp;
  /// A push waiting for its reply: sync, until its step applies; ssp, parked.
  struct held {
    uint64_t incarnation;
    uint64_t epoch;
    uint64_t version = 0;
    uint64_t next_step = 0;
  };
  std::vector<std::optional<held>> pending; // per worker
  std::vector<uint64_t> seen;               // per worker: the incarnation it monitors (0: none)
  std::vector<bool> lost;                   // per worker: its down notification arrived
  std::vector<int64_t> finished;            // ssp: steps applied per worker (the simulator's own count)
  std::optional<silence_watch> silence;     // ssp: when each worker last pushed (the aggregator's rule)
  bool check_armed = false;                 // ssp: a silence check is scheduled
  uint64_t stale_dropped = 0;
};

cluster::cluster(scenario sc) : sc_(std::move(sc)), rng_(rng(sc_.seed).next()) {
  const uint32_t nodes = 1 + sc_.shards + sc_.workers;
  link_last_.assign(static_cast<size_t>(nodes) * nodes, 0);
  if (sc_.replicas_to_aggregate == 0 || sc_.replicas_to_aggregate > sc_.workers)
    sc_.replicas_to_aggregate = sc_.workers;
  run_control_config rc;
  rc.workers = sc_.workers;
  rc.shards = sc_.shards;
  rc.mode = sc_.mode;
  rc.replicas_to_aggregate = sc_.mode == train_mode::sync ? sc_.replicas_to_aggregate : 1;
  rc.max_steps = sc_.max_steps;
  rc.grant_steps = grant_steps_for(sc_.mode, sc_.max_steps, sc_.workers, false, sc_.report_every);
  rc.train_rows = 55'000;
  rc.progress_every = std::max<int64_t>(1, sc_.max_steps / 4);
  rc.eval_every_epochs = 0;
  rc.startup_timeout = std::chrono::seconds(60);
  rc.request_timeout = std::chrono::hours(1);
  rc.checkpoints = sc_.checkpoint_every > 0;
  rc.shards_recoverable = rc.checkpoints;
  rc.checkpoint_every_steps = sc_.checkpoint_every;
  rc_ = rc;
  chief_ = std::make_unique<run_control>(std::move(rc));
  for (uint32_t j = 0; j < sc_.workers; ++j)
    workers_.push_back(std::make_unique<worker_node>());
  for (uint32_t s = 0; s < sc_.shards; ++s) {
    auto sh = std::make_unique<shard_node>();
    if (sc_.mode == train_mode::sync)
      sh->sync.emplace(sc_.workers, sc_.replicas_to_aggregate);
    else if (sc_.mode == train_mode::ssp) {
      sh->ssp.emplace(sc_.workers, sc_.staleness);
      sh->silence.emplace(sc_.workers, run_time{});
    }
    sh->pending.resize(sc_.workers);
    sh->seen.assign(sc_.workers, 0);
    sh->lost.assign(sc_.workers, false);
    sh->finished.assign(sc_.workers, 0);
    shards_.push_back(std::move(sh));
  }
}

cluster::~cluster() = default;

void cluster::at(vtime t, std::function<void()> fn) {
  queue_.push(event{std::max(t, now_), seq_++, std::move(fn)});
}

// Delivers after the link's delay, never before an earlier message on the same link (TCP).
void cluster::send(uint32_t from, uint32_t to, std::function<void()> fn) {
  const uint32_t nodes = 1 + sc_.shards + sc_.workers;
  auto& last = link_last_[static_cast<size_t>(from) * nodes + to];
  vtime t = now_ + sc_.latency + static_cast<vtime>(rng_.below(static_cast<uint64_t>(sc_.latency) + 1));
  t = std::max(t, last);
  last = t;
  at(t, std::move(fn));
}

// A message to incarnation `incarnation` of worker j: dropped when that process is gone, held
// while it is frozen (a stopped process reads nothing), handled in order otherwise.
void cluster::to_worker(uint32_t from, uint32_t j, uint64_t incarnation, std::function<void(worker_node&)> fn) {
  auto deliver = std::make_shared<std::function<void()>>();
  *deliver = [this, j, incarnation, fn, deliver] {
    auto& w = *workers_[j];
    if (!w.alive || w.incarnation != incarnation)
      return;
    if (now_ < w.frozen_until)
      return at(w.frozen_until, *deliver);
    fn(w);
  };
  if (from == worker_id(j))
    at(now_, *deliver); // (its own timers)
  else
    send(from, worker_id(j), *deliver);
}

// A message to the chief process running when it was sent: lost when that process is gone.
void cluster::to_chief(uint32_t from, std::function<void()> fn) {
  send(from, chief_id(), [this, inc = chief_inc_, fn = std::move(fn)] {
    if (chief_alive_ && chief_inc_ == inc)
      fn();
  });
}

// A timer of the chief process running now.
void cluster::chief_at(vtime t, std::function<void()> fn) {
  at(t, [this, inc = chief_inc_, fn = std::move(fn)] {
    if (chief_alive_ && chief_inc_ == inc && !over_)
      fn();
  });
}

// A worker's hello: a process started while the chief is down connects once it is back.
void cluster::send_hello(uint32_t j, uint64_t inc) {
  if (chief_alive_) {
    workers_[j]->chief = chief_inc_;
    return to_chief(worker_id(j), [this, j, inc] { on_hello(j, inc); });
  }
  at(now_ + 10 * sc_.latency, [this, j, inc] {
    if (workers_[j]->alive && workers_[j]->incarnation == inc && !over_)
      send_hello(j, inc);
  });
}

// A paused worker reaching the restarted chief (the node retries its address until it answers).
void cluster::reach_chief(uint32_t j, uint64_t inc) {
  at(now_ + 10 * sc_.latency, [this, j, inc] {
    auto& w = *workers_[j];
    if (!w.alive || w.incarnation != inc || over_)
      return;
    if (!chief_alive_)
      return reach_chief(j, inc);
    to_worker(worker_id(j), j, inc, [this, j](worker_node& w) {
      if (!chief_alive_) // (lost again before it got through: keep trying)
        return reach_chief(j, w.incarnation);
      w.chief = chief_inc_;
      worker_execute(j, w.ctl->chief_reconnected(clock()));
    });
  });
}

// The chief's process starts again: it resumes its last checkpoint, and the shards, which kept
// their variables, answer its setup with their versions.
void cluster::restart_chief() {
  if (over_ || chief_alive_)
    return;
  chief_ = std::make_unique<run_control>(rc_);
  chief_alive_ = true;
  log("chief", ckpt_ ? cat("restarts; resumes its checkpoint at global step ", ckpt_->steps) : std::string{"restarts"});
  if (ckpt_)
    chief_->resume(ckpt_->steps, ckpt_->examples);
  chief_execute(chief_->begin(clock()));
  for (uint32_t s = 0; s < sc_.shards; ++s)
    setup_shard(s);
}

// A restarted chief's setup of shard s: it connects once the shard runs; a shard that kept its
// variables answers with its version, one that lost them (restarted meanwhile) is set up from the
// chief's checkpoint (the lost one's restore comes with the setup; the chief's notice of its loss
// was lost with the previous chief).
void cluster::setup_shard(uint32_t s) {
  chief_at(now_ + 10 * sc_.latency, [this, s] {
    auto& sh = *shards_[s];
    if (!sh.alive)
      return setup_shard(s);
    send(chief_id(), shard_id(s), [this, s] {
      auto& sh = *shards_[s];
      if (!sh.restored) {
        if (!ckpt_) {
          log("chief", cat("cannot set up shard ", s, ": it lost its variables and there is no checkpoint"));
          no_checkpoint_ = true;
          over_ = true;
          return;
        }
        sh.version = ckpt_->versions[s];
        sh.lost_updates += crashed_at_[s] > sh.version ? crashed_at_[s] - sh.version : 0;
        sh.restored = true;
        ++sh.restores;
        if (sc_.mode == train_mode::sync) {
          sh.sync.emplace(sc_.workers, sc_.replicas_to_aggregate);
          sh.sync->resume_at(sh.version);
        } else if (sc_.mode == train_mode::ssp) {
          sh.ssp.emplace(sc_.workers, sc_.staleness);
          sh.ssp->resume();
          sh.silence.emplace(sc_.workers, clock());
          sh.check_armed = false;
        }
        log(cat("shard ", s), cat("set up from the checkpoint at version ", sh.version));
        return to_chief(shard_id(s), [this, s] { chief_execute(chief_->shard_ready(s, clock(), 0)); });
      }
      auto version = sh.version;
      to_chief(shard_id(s), [this, s, version] { chief_execute(chief_->shard_ready(s, clock(), version)); });
    });
  });
}

void cluster::log(const std::string& who, const std::string& text) {
  transcript_.push_back(cat(stamp(now_), "  ", who, ": ", text));
  if (transcript_.size() > transcript_lines)
    transcript_.pop_front();
}

void cluster::violate(const std::string& what) {
  if (!out_.ok)
    return;
  out_.ok = false;
  out_.violation = what;
  log("simulator", cat("VIOLATION: ", what));
  log_state();
  over_ = true;
}

// Where every node stands (after a violation): the chief's phase, each worker's, each shard's rule.
void cluster::log_state() {
  log("state", cat("chief ", to_string(chief_->phase()), " at global step ", chief_->steps()));
  std::string ws;
  for (uint32_t j = 0; j < sc_.workers; ++j) {
    auto& w = *workers_[j];
    ws += cat(j == 0 ? "" : ", ", j, ":", !w.alive ? "gone" : to_string(w.ctl->phase()), "@", w.alive ? w.ctl->step() : 0,
              w.alive && w.ctl->steps_left() >= 0 ? cat("(", w.ctl->steps_left(), " left)") : "",
              chief_->granted(j) > 0 ? cat("[chief: ", chief_->granted(j), " granted]") : "");
  }
  log("state", cat("workers ", ws));
  for (uint32_t s = 0; s < sc_.shards; ++s) {
    auto& sh = *shards_[s];
    std::string held;
    for (uint32_t j = 0; j < sc_.workers; ++j)
      if (sh.pending[j])
        held += cat(held.empty() ? "" : " ", j);
    std::string rule;
    if (sh.sync) {
      std::string missing;
      for (auto j : sh.sync->missing())
        missing += cat(missing.empty() ? "" : " ", j);
      rule = cat("sync step ", sh.sync->step(), ", waits for [", missing, "]");
    } else if (sh.ssp) {
      std::string slow;
      for (auto j : sh.ssp->slowest())
        slow += cat(slow.empty() ? "" : " ", j);
      rule = cat("ssp slowest [", slow, "]");
    }
    log("state", cat("shard ", s, " version ", sh.version, ", holds replies of [", held, "]", rule.empty() ? "" : ", ", rule));
  }
}

// -- the chief ---------------------------------------------------------------------------------

void cluster::chief_execute(run_commands cmds) {
  using kind = run_command::kind;
  for (auto& c : cmds) {
    if (over_)
      return;
    switch (c.what) {
      case kind::log:
        log("chief", c.text);
        break;
      case kind::membership:
        log("chief", cat("membership: ", c.text, " of worker ", c.index));
        break;
      case kind::tick:
        chief_at(now_ + std::chrono::duration_cast<std::chrono::microseconds>(c.after).count(),
                 [this] { chief_execute(chief_->tick(clock())); });
        break;
      case kind::start_workers:
      case kind::start_worker:
        for (uint32_t j = 0; j < sc_.workers; ++j)
          if (c.what == kind::start_workers || j == c.index)
            if (auto inc = workers_[j]->incarnation; inc > 0)
              to_worker(chief_id(), j, inc, [this, j](worker_node& w) { worker_execute(j, w.ctl->start()); });
        break;
      case kind::grant:
        log("chief", cat("grants worker ", c.index, " ", c.step, " steps"));
        to_worker(chief_id(), c.index, workers_[c.index]->incarnation,
                  [this, j = c.index, n = c.step](worker_node& w) { worker_execute(j, w.ctl->granted(n)); });
        break;
      case kind::stop_workers:
      case kind::stop_worker:
        for (uint32_t j = 0; j < sc_.workers; ++j)
          if ((c.what == kind::stop_workers || j == c.index) && chief_->status(j) == member::training)
            to_worker(chief_id(), j, workers_[j]->incarnation,
                      [this, j](worker_node& w) { worker_execute(j, w.ctl->stop()); });
        break;
      case kind::evaluate:
        chief_at(now_ + 1'000, [this, op = c.op] { chief_execute(chief_->evaluated(op, false, clock())); });
        break;
      case kind::save: { // the manifest: the global step, examples and every shard's snapshot
        checkpoint taken{chief_->steps(), chief_->examples(), {}, {}};
        for (auto& sh : shards_) {
          taken.versions.push_back(sh->version);
          taken.incarnations.push_back(sh->alive && sh->restored ? sh->incarnation : 0);
        }
        chief_at(now_ + 1'000, [this, op = c.op, taken] {
          bool intact = true; // (a shard lost meanwhile: the snapshot was never written)
          for (uint32_t s = 0; s < sc_.shards; ++s)
            intact = intact && taken.incarnations[s] == shards_[s]->incarnation && shards_[s]->alive;
          if (intact && chief_->wanted(op))
            ckpt_ = taken;
          chief_execute(chief_->saved(op));
        });
        break;
      }
      case kind::restore_shard:
        restore_shard(c.index);
        break;
      case kind::finish:
        finish_summary();
        chief_at(now_ + 1'000, [this, op = c.op] { chief_execute(chief_->finished(op)); });
        break;
      case kind::quit:
        log("chief", "quit");
        for (uint32_t j = 0; j < sc_.workers; ++j) // its exit reaches every worker still running
          if (auto& w = *workers_[j]; w.alive)
            worker_execute(j, w.ctl->chief_down("the chief quit", true));
        over_ = true;
        check_end();
        return;
      case kind::fail:
        log("chief", cat("failed: ", to_string(c.code), ": ", c.text));
        violate(cat("the run failed: ", c.text));
        return;
      case kind::in_graph_step:
        violate("the simulator does not model in-graph steps yet");
        return;
    }
  }
}

void cluster::on_hello(uint32_t j, uint64_t incarnation) {
  auto adm = chief_->worker_registered(j, clock());
  if (adm.code != errc::none) {
    log("chief", cat("refused worker ", j, ": ", adm.text));
    to_worker(chief_id(), j, incarnation, [this, j, code = adm.code, text = adm.text](worker_node& w) {
      w.ctl->failed();
      worker_execute(j, {});
      worker_gone(j, true, cat("refused: ", to_string(code), ": ", text));
    });
    return;
  }
  // The welcome is the answer, sent after the handler's own messages (a start may overtake it).
  chief_execute(std::move(adm.then));
  log("chief", cat("welcomes worker ", j, adm.steps_left >= 0 ? cat(" with ", adm.steps_left, " steps") : std::string{}));
  to_worker(chief_id(), j, incarnation, [this, j, left = adm.steps_left, more = adm.more](worker_node& w) {
    worker_execute(j, w.ctl->registered(left, more, sc_.shards));
  });
}

void cluster::finish_summary() {
  if (summarized_)
    return;
  summarized_ = true;
  out_.steps = chief_->steps();
  out_.worker_steps = chief_->worker_steps();
  out_.stale_steps = chief_->stale_steps();
  out_.split_steps = chief_->split_steps();
  out_.stop_reason = chief_->stop_reason();
  out_.versions.clear();
  out_.stale_dropped = 0;
  for (auto& sh : shards_) {
    out_.versions.push_back(sh->version);
    out_.stale_dropped += sh->stale_dropped;
  }
}

// -- workers -----------------------------------------------------------------------------------

void cluster::start_worker(uint32_t j) {
  auto& w = *workers_[j];
  replica_control_config c;
  c.mode = sc_.mode;
  c.max_steps = sc_.max_steps;
  c.report_every = sc_.report_every;
  c.chief_recoverable = true; // (its restart is reached again: the fault drills' chief case)
  c.shards_recoverable = sc_.checkpoint_every > 0; // (and a shard's: the shard case)
  c.startup_timeout = std::chrono::hours(1);
  w.ctl = std::make_unique<replica_control>(c);
  ++w.incarnation;
  w.alive = true;
  w.frozen_until = 0;
  log(cat("worker ", j), cat("starts (incarnation ", w.incarnation, ")"));
  worker_execute(j, w.ctl->begin(clock()));
}

void cluster::worker_execute(uint32_t j, replica_commands cmds) {
  using kind = replica_command::kind;
  auto& w = *workers_[j];
  const std::string who = cat("worker ", j);
  const uint64_t inc = w.incarnation;
  for (auto& c : cmds) {
    if (over_ || !w.alive || w.incarnation != inc)
      return;
    switch (c.what) {
      case kind::register_hello:
        send_hello(j, inc);
        break;
      case kind::reconnect_chief:
        reach_chief(j, inc);
        break;
      case kind::pull:
        worker_pull(j);
        break;
      case kind::compute:
        worker_compute(j);
        break;
      case kind::push:
        worker_push(j);
        break;
      case kind::report:
        to_chief(worker_id(j), [this, j, c, step = w.ctl->step()] {
          log("chief", cat("report of worker ", j, ": ", c.steps, " steps", c.final ? " (final)" : ""));
          chief_execute(chief_->progress(j, c.steps, c.examples, static_cast<double>(c.examples), c.final, clock(), step,
                                         c.stale_steps, c.split_steps));
        });
        break;
      case kind::reconnect_shards:
        reach_shards(j, inc, c.shards);
        break;
      case kind::retry_after:
        at(now_ + std::chrono::duration_cast<std::chrono::microseconds>(c.after).count(), [this, j, inc] {
          if (workers_[j]->alive && workers_[j]->incarnation == inc)
            worker_execute(j, workers_[j]->ctl->retry());
        });
        break;
      case kind::tick_after:
        at(now_ + std::chrono::duration_cast<std::chrono::microseconds>(c.after).count(), [this, j, inc] {
          if (workers_[j]->alive && workers_[j]->incarnation == inc)
            worker_execute(j, workers_[j]->ctl->tick(clock()));
        });
        break;
      case kind::announce_stop:
        break;
      case kind::leave:
        to_chief(worker_id(j), [this, j] { chief_execute(chief_->worker_left(j, clock())); });
        worker_gone(j, false, "left");
        return;
      case kind::quit:
        log(who, cat("quits at step ", w.ctl->step()));
        worker_gone(j, false, "");
        return;
      case kind::fail:
        log(who, cat("fails: ", to_string(c.code), ": ", c.text));
        worker_gone(j, true, c.text);
        return;
      case kind::log:
        log(who, c.text);
        break;
    }
  }
}

void cluster::worker_pull(uint32_t j) {
  auto& w = *workers_[j];
  const uint64_t inc = w.incarnation;
  for (uint32_t s = 0; s < sc_.shards; ++s) {
    const uint64_t epoch = w.ctl->requested(s);
    to_shard(
      worker_id(j), s,
      [this, s, j, inc, epoch] {
        if (!shards_[s]->restored)
          return shard_refuse(s, j, inc, epoch);
        const uint64_t version = shards_[s]->version;
        to_worker(shard_id(s), j, inc, [this, s, j, epoch, version](worker_node& w) {
          if (w.ctl->answers(s, epoch))
            worker_execute(j, w.ctl->pulled(s, version));
        });
      },
      request_lost(s, j, inc, epoch));
  }
}

void cluster::worker_compute(uint32_t j) {
  auto& w = *workers_[j];
  const auto span = static_cast<vtime>(static_cast<double>(sc_.compute) * w.slow);
  const vtime took = span + static_cast<vtime>(rng_.below(static_cast<uint64_t>(span / 2) + 1));
  auto done = [this, j](worker_node& w) { worker_execute(j, w.ctl->step_status(replica_control::step_state::ready, batch_rows)); };
  at(now_ + took, [this, j, inc = w.incarnation, done] { to_worker(worker_id(j), j, inc, done); });
}

void cluster::worker_push(uint32_t j) {
  auto& w = *workers_[j];
  const uint64_t inc = w.incarnation;
  const auto step = static_cast<uint64_t>(w.ctl->step());
  ++rounds_pushed_;
  for (uint32_t s = 0; s < sc_.shards; ++s) {
    const uint64_t epoch = w.ctl->requested(s);
    to_shard(
      worker_id(j), s,
      [this, s, j, inc, epoch, step] {
        if (!shards_[s]->restored)
          return shard_refuse(s, j, inc, epoch);
        shard_push(s, j, inc, epoch, step);
      },
      request_lost(s, j, inc, epoch));
  }
}

// The process of worker j ended (crashed: killed or failed; else it quit): its peers' monitors
// fire after the messages it sent before.
void cluster::worker_gone(uint32_t j, bool crashed, const std::string& why) {
  auto& w = *workers_[j];
  if (!w.alive)
    return;
  w.alive = false;
  const uint64_t inc = w.incarnation;
  to_chief(worker_id(j), [this, j, inc, crashed, why] {
    if (workers_[j]->incarnation == inc) // (a restart's hello may be on its way: same link, after)
      chief_execute(chief_->worker_down(j, crashed ? why : "exited", clock()));
    else if (crashed)
      chief_execute(chief_->worker_down(j, why, clock()));
  });
  for (uint32_t s = 0; s < sc_.shards; ++s)
    if (shards_[s]->seen[j] == inc)
      to_shard(worker_id(j), s, [this, s, j, inc] {
        if (shards_[s]->seen[j] == inc)
          shard_lose(s, j);
      });
}

// -- shards ------------------------------------------------------------------------------------

// A message to the shard process running when it was sent: lost when that process is gone.
void cluster::to_shard(uint32_t from, uint32_t s, std::function<void()> fn, std::function<void()> lost) {
  send(from, shard_id(s), [this, s, inc = shards_[s]->incarnation, fn = std::move(fn), lost = std::move(lost)] {
    if (shards_[s]->alive && shards_[s]->incarnation == inc)
      fn();
    else if (lost)
      lost(); // (the connection is gone: the request fails)
  });
}

// A request of worker j to a shard process that is gone fails as a lost connection.
std::function<void()> cluster::request_lost(uint32_t s, uint32_t j, uint64_t incarnation, uint64_t epoch) {
  return [this, s, j, incarnation, epoch] {
    to_worker(shard_id(s), j, incarnation, [this, s, j, epoch](worker_node& w) {
      if (w.ctl->answers(s, epoch))
        worker_execute(j, w.ctl->request_failed(s, request_failure::lost, errc::peer_unreachable,
                                                cat("shard ", s, " is unreachable")));
    });
  };
}

// A restarted shard not restored yet answers not_initialized (the worker tries again).
void cluster::shard_refuse(uint32_t s, uint32_t j, uint64_t incarnation, uint64_t epoch) {
  to_worker(shard_id(s), j, incarnation, [this, s, j, epoch](worker_node& w) {
    if (w.ctl->answers(s, epoch))
      worker_execute(j, w.ctl->request_failed(s, request_failure::not_ready, errc::not_initialized,
                                              cat("shard ", s, " is not restored yet")));
  });
}

// A worker reaching restarted shards (the node retries their addresses until they answer).
void cluster::reach_shards(uint32_t j, uint64_t inc, std::vector<uint32_t> lost) {
  at(now_ + 10 * sc_.latency, [this, j, inc, lost] {
    auto& w = *workers_[j];
    if (!w.alive || w.incarnation != inc || over_)
      return;
    for (auto s : lost)
      if (!shards_[s]->alive)
        return reach_shards(j, inc, lost);
    to_worker(worker_id(j), j, inc, [this, j](worker_node& w) { worker_execute(j, w.ctl->shards_reconnected()); });
  });
}

// The chief reaches shard s's restart and restores it from its last checkpoint (its version and,
// sync and ssp, a fresh rule resuming at it), then tells its controller.
void cluster::restore_shard(uint32_t s) {
  chief_at(now_ + 10 * sc_.latency, [this, s] {
    auto& sh = *shards_[s];
    if (!sh.alive)
      return restore_shard(s);
    if (!ckpt_) {
      log("chief", cat("cannot restore shard ", s, ": no checkpoint yet (the run fails, as a real chief's does)"));
      no_checkpoint_ = true;
      over_ = true;
      return;
    }
    // As the real chief: the values from the checkpoint, the update count the other shards are at
    // (sync: their step), the checkpoint's when there is no other shard.
    uint64_t version = ckpt_->versions[s];
    for (uint32_t o = 0; o < sc_.shards; ++o)
      if (o != s && shards_[o]->alive && shards_[o]->restored)
        version = std::max(version, shards_[o]->version);
    send(chief_id(), shard_id(s), [this, s, version] {
      auto& sh = *shards_[s];
      sh.lost_updates += crashed_at_[s] > version ? crashed_at_[s] - version : 0; // (one shard: the checkpoint's)
      sh.version = version;
      sh.restored = true;
      ++sh.restores;
      if (sc_.mode == train_mode::sync) {
        sh.sync.emplace(sc_.workers, sc_.replicas_to_aggregate);
        sh.sync->resume_at(version);
      } else if (sc_.mode == train_mode::ssp) {
        sh.ssp.emplace(sc_.workers, sc_.staleness);
        sh.ssp->resume();
        sh.silence.emplace(sc_.workers, clock());
        sh.check_armed = false;
      }
      log(cat("shard ", s), cat("restored at version ", version));
      to_chief(shard_id(s), [this, s] { chief_execute(chief_->shard_restored(s)); });
    });
  });
}

void cluster::shard_reply(uint32_t s, uint32_t j, uint64_t incarnation, uint64_t epoch, uint64_t version,
                          uint64_t next_step, bool stale) {
  to_worker(shard_id(s), j, incarnation, [this, s, j, epoch, version, next_step, stale](worker_node& w) {
    if (w.ctl->answers(s, epoch))
      worker_execute(j, w.ctl->pushed(s, version, next_step, stale));
  });
}

void cluster::shard_push(uint32_t s, uint32_t j, uint64_t incarnation, uint64_t epoch, uint64_t step) {
  auto& sh = *shards_[s];
  if (sh.seen[j] != incarnation) { // a new sender: monitored from now on
    sh.seen[j] = incarnation;
    sh.lost[j] = false;
    sh.finished[j] = 0;
  }
  if (sc_.mode == train_mode::async) {
    ++sh.version;
    return shard_reply(s, j, incarnation, epoch, sh.version, step + 1, false);
  }
  if (sc_.mode == train_mode::ssp) {
    ++sh.version;
    sh.silence->heard(j, clock());
    sh.lost[j] = false;
    if (std::getenv("ACTORPS_SIM_DEBUG"))
      log(cat("shard ", s), cat("push of worker ", j, " step ", step, " (count ", sh.finished[j] + 1, ")"));
    sh.ssp->finished(j, step);
    ++sh.finished[j];
    sh.pending[j] = shard_node::held{incarnation, epoch, sh.version, step + 1};
    return shard_release_parked(s);
  }
  // sync: every gradient is the constant of its step tag, so an update that averaged anything
  // but fresh gradients of its step shows in its value
  const bool first = sh.sync->missing().size() == sh.sync->live_workers();
  variable_slice grad{0, 0, tensor_copy(std::vector<float>{static_cast<float>(step)}.data(), 1)};
  auto verdict = sh.sync->offer(j, step, {grad});
  if (!verdict) {
    violate(cat("shard ", s, " refused worker ", j, "'s push of step ", step, ": ", describe(verdict.error())));
    return;
  }
  if (*verdict == sync_rule::verdict::stale) {
    ++sh.stale_dropped;
    return shard_reply(s, j, incarnation, epoch, sh.version, sh.sync->step(), true);
  }
  sh.pending[j] = shard_node::held{incarnation, epoch};
  if (first)
    at(now_ + sc_.step_timeout, [this, s, at_step = sh.sync->step()] { shard_step_timer(s, at_step); });
  if (sh.sync->ready())
    shard_apply_sync(s);
}

void cluster::shard_apply_sync(uint32_t s) {
  auto& sh = *shards_[s];
  const uint32_t needed = std::min(sc_.replicas_to_aggregate, std::max<uint32_t>(1, sh.sync->live_workers()));
  auto done = sh.sync->complete();
  if (done.released.size() != needed)
    violate(cat("shard ", s, " applied step ", done.step, " with ", done.released.size(), " gradients, not ", needed));
  if (done.average.size() != 1 || done.average[0].data.values.size() != 1
      || std::fabs(done.average[0].data.values[0] - static_cast<float>(done.step)) > 1e-5f * (1.0f + done.step))
    violate(cat("shard ", s, " applied step ", done.step, " from gradients of other steps"));
  ++sh.version;
  if (sh.version != done.step + 1)
    violate(cat("shard ", s, " is at version ", sh.version, " after applying step ", done.step));
  for (auto w : done.released)
    if (auto& h = sh.pending[w]) {
      shard_reply(s, w, h->incarnation, h->epoch, sh.version, done.step + 1, false);
      h.reset();
    }
}

void cluster::shard_step_timer(uint32_t s, uint64_t step) {
  auto& sh = *shards_[s];
  if (!sh.sync || sh.sync->step() != step || sh.sync->ready())
    return;
  for (auto w : sh.sync->missing()) {
    log(cat("shard ", s), cat("step ", step, " no longer waits for worker ", w, " (silent for the step timeout)"));
    if (sh.sync->lose(w))
      return shard_apply_sync(s);
  }
}

void cluster::shard_lose(uint32_t s, uint32_t j) {
  auto& sh = *shards_[s];
  sh.lost[j] = true;
  if (sh.sync) {
    if (sh.sync->lose(j))
      shard_apply_sync(s);
  } else if (sh.ssp) {
    sh.ssp->lose(j);
    shard_release_parked(s);
  }
}

void cluster::shard_release_parked(uint32_t s) {
  auto& sh = *shards_[s];
  bool parked = false;
  for (uint32_t w = 0; w < sc_.workers; ++w)
    if (sh.pending[w] && sh.ssp->may_continue(w)) {
      auto h = *sh.pending[w];
      sh.pending[w].reset();
      check_ssp(s, w);
      shard_reply(s, w, h.incarnation, h.epoch, h.version, h.next_step, false);
    } else if (sh.pending[w]) {
      parked = true;
    }
  auto slowest = sh.ssp->slowest();
  if (!parked || sh.check_armed || slowest.empty())
    return;
  sh.check_armed = true; // as the aggregator: at the slowest workers' silence deadline
  auto due = sh.silence->next_deadline(slowest, std::chrono::microseconds(sc_.step_timeout));
  at(std::chrono::duration_cast<std::chrono::microseconds>(due - run_time{}).count(), [this, s] { shard_silence_check(s); });
}

// ssp: a slowest worker silent for the step timeout while others wait is let go (the aggregator's
// rule: it died before its first push, froze, or stopped without one).
void cluster::shard_silence_check(uint32_t s) {
  auto& sh = *shards_[s];
  sh.check_armed = false;
  for (auto w : sh.silence->silent(sh.ssp->slowest(), clock(), std::chrono::microseconds(sc_.step_timeout))) {
    log(cat("shard ", s), cat("no longer waiting for worker ", w, " (silent for the step timeout)"));
    ++silenced_;
    sh.ssp->lose(w);
    sh.lost[w] = true;
  }
  shard_release_parked(s);
}

// A worker released by an ssp shard starts its next step: at most `staleness` steps ahead of
// the slowest worker this shard still counts (checked while no worker ever crashed: a restarted
// worker enters at the slowest count by the rule's own convention).
void cluster::check_ssp(uint32_t s, uint32_t j) {
  if (crashes_ > 0 || silenced_ > 0 || shard_crashes_ > 0) // (a restored ssp rule forgets the counts)
    return;
  auto& sh = *shards_[s];
  int64_t slowest = INT64_MAX;
  for (uint32_t k = 0; k < sc_.workers; ++k)
    if (sh.seen[k] > 0 && !sh.lost[k])
      slowest = std::min(slowest, sh.finished[k]);
  if (slowest != INT64_MAX && sh.finished[j] - slowest > static_cast<int64_t>(sc_.staleness))
    violate(cat("ssp: shard ", s, " released worker ", j, " at ", sh.finished[j], " steps while the slowest is at ",
                slowest, " (staleness ", sc_.staleness, ")"));
}

// -- faults and the end ------------------------------------------------------------------------

void cluster::inject(const fault& f) {
  auto& w = *workers_[f.what == fault::kind::crash_chief || f.what == fault::kind::crash_shard ? 0 : f.node];
  const std::string who = cat("worker ", f.node);
  switch (f.what) {
    case fault::kind::crash_worker:
      if (!w.alive)
        return;
      ++crashes_;
      log(who, f.duration > 0 ? cat("killed; restarts in ", stamp(f.duration)) : std::string{"killed"});
      worker_gone(f.node, true, "killed");
      if (f.duration > 0)
        at(now_ + f.duration, [this, j = f.node] {
          if (!over_ && !workers_[j]->alive)
            start_worker(j);
        });
      break;
    case fault::kind::freeze_worker:
      log(who, cat("frozen for ", stamp(f.duration)));
      w.frozen_until = std::max(w.frozen_until, now_ + f.duration);
      break;
    case fault::kind::slow_worker:
      log(who, cat("computes ", f.factor, "x slower"));
      w.slow = f.factor;
      break;
    case fault::kind::crash_shard: {
      auto& sh = *shards_[f.node];
      if (!sh.alive || !sh.restored || chief_->phase() == run_phase::done)
        return;
      sh.alive = false;
      sh.restored = false;
      ++sh.incarnation;
      ++sh.crashes;
      ++shard_crashes_;
      crashed_at_[f.node] = sh.version;
      for (auto& p : sh.pending)
        p.reset();
      log(cat("shard ", f.node), cat("killed; restarts in ", stamp(f.duration)));
      to_chief(shard_id(f.node), [this, s = f.node] { chief_execute(chief_->shard_down(s, "killed")); });
      for (uint32_t j = 0; j < sc_.workers; ++j)
        if (workers_[j]->alive)
          to_worker(shard_id(f.node), j, workers_[j]->incarnation, [this, j, s = f.node](worker_node& w) {
            worker_execute(j, w.ctl->shard_down(s, cat("shard ", s, " went down (killed)")));
          });
      at(now_ + f.duration, [this, s = f.node] {
        auto& sh = *shards_[s];
        sh.alive = true; // (a new process: set up by the chief's restore)
        log(cat("shard ", s), "restarts, waiting for the chief's restore");
      });
      last_fault_heals_ = std::max(last_fault_heals_, now_ + f.duration);
      return;
    }
    case fault::kind::crash_chief:
      if (!chief_alive_ || chief_->phase() == run_phase::done)
        return;
      chief_alive_ = false;
      ++chief_inc_; // its messages in flight, timers and work die with it
      ++chief_crashes_;
      log("chief", cat("killed; restarts in ", stamp(f.duration)));
      for (uint32_t j = 0; j < sc_.workers; ++j)
        if (workers_[j]->alive && workers_[j]->chief == chief_inc_ - 1)
          to_worker(chief_id(), j, workers_[j]->incarnation,
                    [this, j](worker_node& w) { worker_execute(j, w.ctl->chief_down("the chief went down (killed)")); });
      at(now_ + f.duration, [this] { restart_chief(); });
      break;
  }
  last_fault_heals_ = std::max(last_fault_heals_, now_ + f.duration);
}

void cluster::check_end() {
  finish_summary();
  const bool at_limit = out_.stop_reason.rfind("max steps", 0) == 0;
  if (!at_limit)
    violate(cat("the run stopped for another reason than its step limit: \"", out_.stop_reason, "\""));
  // Async and ssp count the workers' reports: a worker killed between its pushes and its report
  // leaves applied updates nobody counted (open: count from the shards' versions), at most its
  // grant's worth. Without kills, and in sync always, the counts agree exactly.
  // A chief restart adds the rounds in flight when it read the shards' versions (async shards
  // are a few updates apart).
  // A round broken by a lost shard is no step, but the other shards applied its pushes (async,
  // ssp): one per worker and shard crash.
  const int64_t slack = sc_.mode == train_mode::sync
                          ? 0
                          : static_cast<int64_t>(crashes_) * (2 * sc_.report_every + 1)
                              + static_cast<int64_t>(chief_crashes_ + shard_crashes_) * sc_.workers;
  // A round in flight when a restarted chief read the shards' versions, applied before and
  // reported after, is counted twice: up to one step per worker and chief restart (async, ssp).
  const int64_t over = sc_.mode == train_mode::sync ? 0 : static_cast<int64_t>(chief_crashes_) * sc_.workers;
  // (a restarted chief adopts the shards' step, which holds a killed worker's unreported updates)
  const int64_t adopted = chief_crashes_ > 0 ? slack : 0;
  if (out_.steps > sc_.max_steps + over + adopted || out_.steps < sc_.max_steps - (sc_.mode == train_mode::ssp ? slack : 0))
    violate(cat("the run stopped at global step ", out_.steps, ", not at max-steps ", sc_.max_steps));
  for (uint32_t s = 0; s < sc_.shards; ++s) {
    auto& sh = *shards_[s];
    if (sh.restores != sh.crashes)
      violate(cat("shard ", s, " was lost ", sh.crashes, " times and restored ", sh.restores, " times"));
    // updates after a lost shard's last checkpoint are lost with it; none other is
    auto v = static_cast<int64_t>(out_.versions[s] + sh.lost_updates);
    if (v < out_.steps - over || v > out_.steps + slack)
      violate(cat("shard ", s, " applied ", v, " updates but the summary counts ", out_.steps, " global steps"));
  }
  // Every round a worker pushed is reported as fresh, stale or split (workers finish their round
  // before they stop; a killed one takes its unreported rounds with it).
  if (crashes_ == 0 && chief_crashes_ == 0 && shard_crashes_ == 0 && out_.worker_steps + out_.stale_steps + out_.split_steps != rounds_pushed_)
    violate(cat("the workers pushed ", rounds_pushed_, " rounds but reported ", out_.worker_steps, " fresh, ",
                out_.stale_steps, " stale and ", out_.split_steps, " split steps"));
  for (uint32_t j = 0; j < sc_.workers; ++j) // (a restart still registering finds no chief and exits)
    if (auto& w = *workers_[j]; w.alive && w.ctl->phase() != replica_phase::registering)
      violate(cat("worker ", j, " is still running (", to_string(w.ctl->phase()), ") after the chief quit"));
}

outcome cluster::run() {
  log("simulator", cat("scenario: ", sc_.replay()));
  for (auto& f : sc_.faults)
    at(f.at, [this, f] { inject(f); });
  chief_execute(chief_->begin(clock()));
  for (uint32_t s = 0; s < sc_.shards; ++s) // every shard answers its setup
    send(chief_id(), shard_id(s), [this, s] {
      send(shard_id(s), chief_id(), [this, s] { chief_execute(chief_->shard_ready(s, clock())); });
    });
  for (uint32_t j = 0; j < sc_.workers; ++j)
    start_worker(j);
  while (!over_ && !queue_.empty()) {
    auto ev = queue_.top();
    queue_.pop();
    now_ = ev.at;
    ++out_.events;
    ev.fn();
    if (!over_ && now_ > last_fault_heals_ + sc_.bound)
      violate(cat("the run did not end within ", stamp(sc_.bound), " of virtual time after its last fault healed"));
  }
  if (!over_)
    violate(cat("the run stalled: nothing left to happen, the chief in phase ", to_string(chief_->phase()),
                " at global step ", chief_->steps()));
  out_.end = now_;
  out_.transcript.assign(transcript_.begin(), transcript_.end());
  if (!out_.ok)
    out_.transcript.push_back(cat("reproduce with: ", sc_.replay()));
  return out_;
}

outcome simulate(const scenario& sc) {
  cluster c(sc);
  return c.run();
}

} // namespace actorps::sim
