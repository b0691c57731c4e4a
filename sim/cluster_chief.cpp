// The simulated chief: its controller's commands carried out, its restart and its shard setups.
#include "sim/cluster_nodes.hpp"

#include "common/checkpoint_choice.hpp"
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
// The reads of evaluation `op` (begun at `start`) are in now, unless a shard is frozen: they
// wait for it to wake, and fail once they waited cluster.request-timeout, as the chief's requests
// do; the controller decides (run_control::failed: skipped, or the run fails).
void cluster::evaluation_read(uint64_t op, vtime start) {
  vtime wakes = now_;
  for (auto& sh : shards_)
    if (sh->alive)
      wakes = std::max(wakes, sh->frozen_until);
  if (wakes <= now_)
    return chief_execute(chief_->evaluated(op, false, clock()));
  if (sc_.request_timeout > 0 && wakes > start + sc_.request_timeout)
    return chief_at(std::max(now_, start + sc_.request_timeout), [this, op] {
      ++out_.evaluations_failed;
      chief_execute(chief_->failed(op, errc::timeout, "pulling the model from a frozen shard failed: request_timeout",
                                   clock()));
    });
  chief_at(wakes, [this, op, start] { evaluation_read(op, start); });
}

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
  auto found = restorable();
  if (!found) { // (as a real chief's restart: it fails by name)
    log("chief", cat("cannot restart: ", describe(found.error()), " (the run fails, as designed)"));
    no_checkpoint_ = true;
    over_ = true;
    return;
  }
  const std::optional<checkpoint>& ckpt = *found;
  log("chief", ckpt ? cat("restarts; resumes its checkpoint at global step ", ckpt->steps) : std::string{"restarts"});
  if (ckpt)
    chief_->resume(ckpt->steps, ckpt->examples, 0.0, ckpt->members);
  if (sc_.elastic) { // as the real chief: the checkpoint's data plan, else the first epoch whole
    desk_.emplace(sc_.train_rows, sc_.lease_rows, sc_.seed);
    if (ckpt)
      if (auto err = desk_->ledger().load(ckpt->data_plan))
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
        auto found = restorable();
        if (!found || !*found) {
          log("chief", cat("cannot set up shard ", s, ": it lost its variables and ",
                           found ? std::string{"there is no checkpoint"} : describe(found.error())));
          no_checkpoint_ = true;
          over_ = true;
          return;
        }
        sh.noticed = true; // (the loss its predecessor may not have heard of)
        set_up_again(s, (**found).versions[s]);
        log(cat("shard ", s), cat("set up from the checkpoint at version ", sh.version));
        auto version = sh.version; // (the snapshot's: the updates it holds count)
        return to_chief(shard_id(s), [this, s, version] { chief_execute(chief_->shard_ready(s, clock(), version)); });
      }
      auto version = sh.version;
      to_chief(shard_id(s), [this, s, version] { chief_execute(chief_->shard_ready(s, clock(), version)); });
    }, lost);
  });
}

// The simulated chief's primitives for run_control's commands, whose meaning is
// control/chief_commands' (the chief actor's too).
class cluster::chief_host final : public chief_command_host {
public:
  explicit chief_host(cluster& c) : c_(c) {
  }
  bool ended() override {
    return c_.over_;
  }
  void log(const run_command& c) override {
    c_.log("chief", c.text);
  }
  void membership(const run_command& c) override {
    c_.log("chief", cat("membership: ", c.text, " of worker ", c.index));
  }
  void tick_after(std::chrono::milliseconds after) override {
    auto& c = c_;
    c_.chief_at(c_.now_ + std::chrono::duration_cast<std::chrono::microseconds>(after).count(),
                [&c] {
                  const bool stopping = c.chief_->phase() == run_phase::stopping;
                  c.chief_execute(c.chief_->tick(c.clock()));
                  if (stopping && c.chief_->phase() != run_phase::stopping) // (it finishes without a final report)
                    c.unreported_ = true;
                });
  }
  void start_workers() override {
    for (uint32_t j = 0; j < c_.workers_.size(); ++j)
      start_worker(j);
  }
  void start_worker(uint32_t j) override {
    auto& c = c_;
    if (auto inc = c_.workers_[j]->known; inc > 0) // (to the process it registered)
      c_.to_worker(c_.chief_id(), j, inc, [&c, j](worker_node& w) { c.worker_execute(j, w.ctl->start()); });
  }
  void step_soon() override {
    auto& c = c_;
    c_.chief_at(c_.now_, [&c] { c.in_graph_step(); });
  }
  void grant(uint32_t j, int64_t steps) override {
    auto& c = c_;
    c_.log("chief", cat("grants worker ", j, " ", steps, " steps"));
    c_.to_worker(c_.chief_id(), j, c_.workers_[j]->known,
                 [&c, j, steps](worker_node& w) { c.worker_execute(j, w.ctl->granted(steps)); });
  }
  void stop_worker(uint32_t j) override {
    auto& c = c_;
    if (auto inc = c_.workers_[j]->known; inc > 0)
      c_.to_worker(c_.chief_id(), j, inc, [&c, j](worker_node& w) { c.worker_execute(j, w.ctl->stop()); });
  }
  void evaluate(const run_command& cmd) override {
    auto& c = c_;
    c.chief_at(c.now_ + c.sc_.eval_time, [&c, op = cmd.op, start = c.now_] { c.evaluation_read(op, start); });
  }
  void save(const run_command& cmd) override { // the manifest: the global step, examples and every shard's snapshot
    auto& c = c_;
    checkpoint taken{c.chief_->steps(), c.chief_->examples(), {}, {}, {}, {}};
    if (c.desk_) {
      taken.data_plan = c.desk_->ledger().save();
      taken.members = c.chief_->members();
    }
    for (auto& sh : c.shards_) {
      taken.versions.push_back(sh->version);
      taken.incarnations.push_back(sh->alive && sh->restored ? sh->incarnation : 0);
    }
    c.chief_at(c.now_ + 1'000, [&c, op = cmd.op, taken] {
      bool intact = true; // (a shard lost meanwhile: the snapshot was never written)
      for (uint32_t s = 0; s < c.sc_.shards; ++s)
        intact = intact && taken.incarnations[s] == c.shards_[s]->incarnation && c.shards_[s]->alive;
      if (intact && c.chief_->wanted(op)) {
        c.ckpts_.push_back({taken, storage::intact});
        if (c.ckpts_.size() > checkpoints_kept) // (checkpoint.keep: the oldest goes)
          c.ckpts_.erase(c.ckpts_.begin());
      }
      c.chief_execute(c.chief_->saved(op));
    });
  }
  void finish(const run_command& cmd) override {
    auto& c = c_;
    c.finish_summary();
    c.chief_at(c.now_ + 1'000, [&c, op = cmd.op] { c.chief_execute(c.chief_->finished(op)); });
  }
  void restore_shard(uint32_t s) override {
    c_.ig_.open.clear(); // (in-graph: the dropped step's part requests are answered by nobody now)
    c_.restore_shard(s);
  }
  void quit() override {
    c_.log("chief", "quit");
    c_.wind_down(); // (the shards stop, and its exit reaches every worker still running)
    c_.over_ = true;
    c_.check_end();
  }
  void fail(errc code, const std::string& text) override {
    c_.log("chief", cat("failed: ", to_string(code), ": ", text));
    auto found = c_.restorable(false);
    if (c_.shard_crashes_ > 0 && (!found || !*found) && code == errc::peer_unreachable) { // (by design: nothing to restore from)
      c_.log("simulator", "a shard was lost before any checkpoint: the run fails, as designed");
      c_.no_checkpoint_ = true;
      c_.over_ = true;
      return;
    }
    c_.violate(cat("the run failed: ", text));
  }

private:
  cluster& c_;
};

void cluster::chief_execute(run_commands cmds) {
  chief_host host{*this};
  carry_out(cmds, *chief_, host, ig_.driver.get());
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
    out_.stale_dropped += sh->sync ? sh->sync->counts().stale_dropped : 0;
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
    auto found = restorable();
    if (!found || !*found) {
      log("chief", cat("cannot restore shard ", s, ": ", found ? std::string{"no checkpoint yet"} : describe(found.error()),
                       " (the run fails, as a real chief's does)"));
      no_checkpoint_ = true;
      over_ = true;
      return;
    }
    // As the real chief: the values from the checkpoint, the update count the other shards are at
    // (sync: their step), the checkpoint's when there is no other shard or the shards are still
    // being set up (the restore is the setup).
    sh.chief_seen = chief_inc_;
    uint64_t version = (**found).versions[s];
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

caf::expected<std::optional<cluster::checkpoint>> cluster::restorable(bool say) {
  auto found = newest_readable<checkpoint>(ckpts_.size(), [this](size_t i) -> caf::expected<checkpoint> {
    const auto& saved = ckpts_[i];
    const auto name = cat("ckpt-", saved.c.steps);
    switch (saved.state) {
      case storage::intact: return saved.c;
      case storage::missing: return caf::make_error(errc::corrupt_data, cat(name, ": missing"));
      case storage::truncated: return caf::make_error(errc::corrupt_data, cat(name, ": truncated"));
      case storage::bad_checksum: return caf::make_error(errc::corrupt_data, cat(name, ": checksum mismatch"));
    }
    return caf::make_error(errc::corrupt_data, name);
  });
  if (!found)
    return std::move(found.error());
  if (!*found)
    return std::optional<checkpoint>{};
  if (say) // (as the real chief logs them)
    for (auto& why : (**found).skipped)
      log("chief", cat("skipping a checkpoint that does not verify: ", why));
  return std::optional<checkpoint>{std::move((**found).value)};
}

} // namespace actorps::sim
