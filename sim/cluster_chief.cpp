// The simulated chief: its controller's commands carried out, its restart and its shard setups.
#include "sim/cluster_nodes.hpp"

#include "common/log.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>

namespace actorps::sim {

// A message to the chief process running when it was sent (or to process `incarnation`, the one
// a worker is connected to): lost when that process is gone.
void cluster::to_chief(uint32_t from, std::function<void()> fn, uint64_t incarnation) {
  send(from, chief_id(), [this, inc = incarnation > 0 ? incarnation : chief_inc_, fn = std::move(fn)] {
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
  if (sc_.in_graph) // its driver starts afresh (the old one's requests died with it)
    make_in_graph_driver();
  log("chief", ckpt_ ? cat("restarts; resumes its checkpoint at global step ", ckpt_->steps) : std::string{"restarts"});
  if (ckpt_)
    chief_->resume(ckpt_->steps, ckpt_->examples, 0.0, ckpt_->members);
  if (sc_.elastic) { // as the real chief: the checkpoint's data plan, else the first epoch whole
    desk_.emplace(sc_.train_rows, sc_.lease_rows, sc_.seed);
    if (ckpt_)
      if (auto err = desk_->ledger().load(ckpt_->data_plan))
        return violate(cat("the restarted chief cannot load its checkpoint's data plan: ", describe(err)));
  }
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
      return setup_shard(s); // (the connect retries until the node is up)
    sh.chief_seen = chief_inc_;
    auto lost = [this, s] { // the request to that process fails (its restore answers in its place)
      to_chief(shard_id(s), [this, s] {
        chief_execute(chief_->setup_failed(s, errc::peer_unreachable, cat("initialising shard ", s, " failed")));
      });
    };
    to_shard(chief_id(), s, [this, s] {
      auto& sh = *shards_[s];
      if (!sh.restored) {
        if (!ckpt_) {
          log("chief", cat("cannot set up shard ", s, ": it lost its variables and there is no checkpoint"));
          no_checkpoint_ = true;
          over_ = true;
          return;
        }
        sh.noticed = true; // (the loss its predecessor may not have heard of)
        set_up_again(s, ckpt_->versions[s]);
        log(cat("shard ", s), cat("set up from the checkpoint at version ", sh.version));
        auto version = sh.version; // (the snapshot's: the updates it holds count)
        return to_chief(shard_id(s), [this, s, version] { chief_execute(chief_->shard_ready(s, clock(), version)); });
      }
      auto version = sh.version;
      to_chief(shard_id(s), [this, s, version] { chief_execute(chief_->shard_ready(s, clock(), version)); });
    }, lost);
  });
}

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
        if (c.what == kind::start_worker && ig_.driver) // (a restarted worker takes parts again)
          ig_.driver->worker_back(c.index);
        for (uint32_t j = 0; j < workers_.size(); ++j)
          if (c.what == kind::start_workers || j == c.index)
            if (auto inc = workers_[j]->known; inc > 0) // (to the process it registered)
              to_worker(chief_id(), j, inc, [this, j](worker_node& w) { worker_execute(j, w.ctl->start()); });
        break;
      case kind::grant:
        log("chief", cat("grants worker ", c.index, " ", c.step, " steps"));
        to_worker(chief_id(), c.index, workers_[c.index]->known,
                  [this, j = c.index, n = c.step](worker_node& w) { worker_execute(j, w.ctl->granted(n)); });
        break;
      case kind::stop_workers:
      case kind::stop_worker:
        for (uint32_t j = 0; j < workers_.size(); ++j)
          if ((c.what == kind::stop_workers || j == c.index) && chief_->status(j) == member::training)
            to_worker(chief_id(), j, workers_[j]->known,
                      [this, j](worker_node& w) { worker_execute(j, w.ctl->stop()); });
        break;
      case kind::evaluate:
        chief_at(now_ + 1'000, [this, op = c.op] { chief_execute(chief_->evaluated(op, false, clock())); });
        break;
      case kind::save: { // the manifest: the global step, examples and every shard's snapshot
        checkpoint taken{chief_->steps(), chief_->examples(), {}, {}, {}, {}};
        if (desk_) {
          taken.data_plan = desk_->ledger().save();
          taken.members = chief_->members();
        }
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
        if (ig_.driver && ig_.driver->at() == in_graph_driver::phase::computing) { // (the step runs again once it is back)
          ig_.driver->abandon();
          ig_.open.clear();
        }
        restore_shard(c.index);
        break;
      case kind::finish:
        finish_summary();
        chief_at(now_ + 1'000, [this, op = c.op] { chief_execute(chief_->finished(op)); });
        break;
      case kind::quit:
        log("chief", "quit");
        for (uint32_t j = 0; j < workers_.size(); ++j) // its exit reaches every worker still running
          if (auto& w = *workers_[j]; w.alive)
            worker_execute(j, w.ctl->chief_down("the chief quit", true));
        over_ = true;
        check_end();
        return;
      case kind::fail:
        log("chief", cat("failed: ", to_string(c.code), ": ", c.text));
        if (shard_crashes_ > 0 && !ckpt_ && c.code == errc::peer_unreachable) { // (by design: nothing to restore from)
          log("simulator", "a shard was lost before any checkpoint: the run fails, as designed");
          no_checkpoint_ = true;
          over_ = true;
          return;
        }
        violate(cat("the run failed: ", c.text));
        return;
      case kind::in_graph_step: // by message: a welcome being answered goes out first
        chief_at(now_, [this] { in_graph_step(); });
        break;
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
  workers_[j]->known = incarnation;
  chief_execute(std::move(adm.then));
  log("chief", cat("welcomes worker ", j, adm.steps_left >= 0 ? cat(" with ", adm.steps_left, " steps") : std::string{}));
  to_worker(chief_id(), j, incarnation, [this, j, left = adm.steps_left, more = adm.more](worker_node& w) {
    worker_execute(j, w.ctl->registered(left, more, sc_.shards));
  });
}

// A new worker process asks to join: the chief gives it the next id, and it starts as that worker
// (its node slot is the id's: the scenario counts the joins).
void cluster::on_join() {
  auto adm = chief_->worker_joining(clock());
  if (adm.code != errc::none)
    return log("chief", cat("refused a joiner: ", to_string(adm.code), ": ", adm.text));
  if (adm.index >= workers_.size())
    return violate(cat("the chief gave a joiner id ", adm.index, ", beyond the ", workers_.size(), " worker ids of the run"));
  chief_execute(std::move(adm.then));
  log("chief", cat("admits a joiner as worker ", adm.index));
  at(now_ + sc_.latency, [this, j = adm.index] {
    if (!over_ && !workers_[j]->alive)
      start_worker(j);
  });
}

// Applies a worker's lease reports to the ledger; every epoch it closes must have used each
// example exactly once.
bool cluster::settle_leases(uint32_t j, const lease_request& req) {
  if (auto err = desk_->settle(req)) {
    violate(cat("the chief refused worker ", j, "'s lease report: ", describe(err)));
    return false;
  }
  for (auto& t : desk_->take_completed()) {
    log("chief", cat("epoch ", t.epoch, " used ", t.examples, " examples (", t.duplicates, " twice, ", t.reissued,
                     " handed out again)"));
    if (t.examples != sc_.train_rows || t.duplicates != 0) {
      violate(cat("epoch ", t.epoch, " used ", t.examples, " of ", sc_.train_rows, " examples, ", t.duplicates,
                  " of them twice"));
      return false;
    }
    ++out_.epochs;
  }
  return true;
}

// A lease request of worker j: its reports settled, then a lease or a wait (the real chief's
// rule: control/lease_desk).
void cluster::on_lease(uint32_t j, uint64_t incarnation, uint64_t epoch, const lease_request& req) {
  if (!settle_leases(j, req))
    return;
  auto lease = desk_->answer(j, chief_->may_train(j), chief_->live());
  to_worker(chief_id(), j, incarnation, [this, j, epoch, lease](worker_node& w) {
    worker_execute(j, w.ctl->lease_answered(epoch, lease));
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
    // (sync: their step), the checkpoint's when there is no other shard or the shards are still
    // being set up (the restore is the setup).
    sh.chief_seen = chief_inc_;
    uint64_t version = ckpt_->versions[s];
    if (chief_->phase() != run_phase::init_shards)
      for (uint32_t o = 0; o < sc_.shards; ++o)
        if (o != s && shards_[o]->alive && shards_[o]->restored)
          version = std::max(version, shards_[o]->version);
    send(chief_id(), shard_id(s), [this, s, version] {
      set_up_again(s, version);
      log(cat("shard ", s), cat("restored at version ", version));
      to_chief(shard_id(s), [this, s, version] { chief_execute(chief_->shard_restored(s, version, clock())); });
    });
  });
}

} // namespace actorps::sim
