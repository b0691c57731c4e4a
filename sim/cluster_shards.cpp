// The simulated shards: the update rules, held replies, restores, and the injected faults.
#include "sim/cluster_nodes.hpp"

#include "common/log.hpp"
#include "compute/dropout_mask.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>

namespace actorps::sim {

// A message to the shard process running when it was sent (or to process `incarnation`, the one
// a worker is connected to): lost when that process is gone.
void cluster::to_shard(uint32_t from, uint32_t s, std::function<void()> fn, std::function<void()> lost,
                       uint64_t incarnation) {
  auto deliver = std::make_shared<std::function<void()>>();
  *deliver = [this, s, inc = incarnation > 0 ? incarnation : shards_[s]->incarnation, fn = std::move(fn),
              lost = std::move(lost), deliver] {
    if (shards_[s]->alive && shards_[s]->incarnation == inc && now_ < shards_[s]->frozen_until)
      return at(shards_[s]->frozen_until, *deliver); // (a stopped process reads nothing: in order once it wakes)
    if (shards_[s]->alive && shards_[s]->incarnation == inc)
      fn();
    else if (lost)
      lost(); // (the connection is gone: the request fails)
  };
  send(from, shard_id(s), *deliver);
}

// Shard s, restarted after a kill, set up again at `version` (the checkpoint's values; sync and ssp
// a fresh rule resuming there); the updates past `version` are lost with it: those it had
// applied and those the other shards applied while it was down (a restarted chief sets it up at
// its checkpoint's version while the others kept theirs).
void cluster::set_up_again(uint32_t s, uint64_t version) {
  auto& sh = *shards_[s];
  uint64_t reached = sh.version_at_crash;
  for (uint32_t o = 0; o < sc_.shards; ++o)
    if (o != s && shards_[o]->alive && shards_[o]->restored)
      reached = std::max(reached, shards_[o]->version);
  sh.lost_updates += reached > version ? reached - version : 0;
  sh.version = version;
  for (auto& own : sh.own_updates) // (the values those made are lost)
    own.clear();
  for (auto& own : sh.own_rows)
    std::fill(own.begin(), own.end(), 0);
  sh.restored = true;
  ++sh.restores;
  shard_sessions(sh, clock());
  if (sh.sync) {
    sh.sync->resume_at(version);
  } else if (sh.ssp) {
    sh.ssp->resume();
  }
}

// A restarted shard not restored yet answers not_initialized (the worker tries again).
void cluster::shard_refuse(uint32_t s, uint32_t j, uint64_t incarnation, request_tag tag) {
  to_worker(shard_id(s), j, incarnation, [this, s, j, tag](worker_node& w) {
    if (answered(w, s, tag))
      worker_execute(j, w.ctl->request_failed(s, request_failure::not_ready, errc::not_initialized,
                                              cat("shard ", s, " is not restored yet")));
    if (tag.fetch != 0)
      fetch_failed(j, tag.slot, tag.fetch);
  });
}

void cluster::shard_reply(uint32_t s, uint32_t j, uint64_t incarnation, request_tag tag, uint64_t version,
                          uint64_t next_step, bool stale) {
  to_worker(shard_id(s), j, incarnation, [this, s, j, tag, version, next_step, stale](worker_node& w) {
    if (!answered(w, s, tag)) {
      if (tag.fetch != 0) // (the rows it asked back are given up)
        fetch_failed(j, tag.slot, tag.fetch);
      return;
    }
    const auto next = tag.fetch != 0 ? w.fetches.answered(tag.slot, tag.fetch) : row_fetch::next::wait; // (its rows asked back)
    worker_execute(j, w.ctl->pushed(s, version, next_step, stale));
    if (next == row_fetch::next::compute)
      compute_timer(j, w.slot_rows[w.fetches.current()]);
  });
}

// Async and ssp: shard s applies worker j's push computed on version `base`. The values a
// gradient was computed on miss at most cluster.overlap-steps of its worker's own updates (none
// without overlap: a step waits for its values).
void cluster::apply_own(uint32_t s, uint32_t j, uint64_t step, uint64_t base) {
  auto& sh = *shards_[s];
  auto& own = sh.own_updates[j];
  const auto missed = std::count_if(own.begin(), own.end(), [base](uint64_t v) { return v > base; });
  if (missed > sc_.overlap_steps)
    violate(cat("worker ", j, "'s push of step ", step, " to shard ", s, " was computed on version ", base,
                ", missing ", missed, " of its own updates (cluster.overlap-steps = ", sc_.overlap_steps, ")"));
  ++sh.version;
  own.push_back(sh.version);
  if (own.size() > 8) // (older ones are in every base by now)
    own.erase(own.begin());
}

void cluster::shard_push(uint32_t s, uint32_t j, uint64_t incarnation, request_tag tag, uint64_t step, uint64_t base) {
  auto& sh = *shards_[s];
  if (sh.seen[j] != incarnation) { // a new sender: monitored from now on
    sh.seen[j] = incarnation;
    sh.lost[j] = false;
    sh.finished[j] = 0;
    sh.top_step[j] = -1;
    sh.own_updates[j].clear();
    std::fill(sh.own_rows[j].begin(), sh.own_rows[j].end(), 0);
  }
  if (sc_.table && sc_.mode != train_mode::sync) // (sync: the step's rows, summed, when it applies)
    shard_row_push(s, j, step);
  if (sc_.mode == train_mode::async || sc_.mode == train_mode::model_parallel) { // (a slice pushes its columns)
    apply_own(s, j, step, base);
    if (tag.fetch != 0) // (cluster.rows-with-push: a later step's rows, read after this update)
      check_own_rows(s, j, incarnation, step + tag.ahead);
    return shard_reply(s, j, incarnation, tag, sh.version, step + 1, false);
  }
  if (sc_.mode == train_mode::ssp) {
    apply_own(s, j, step, base);
    sh.ssp->heard(j, clock());
    sh.lost[j] = false;
    if (static_cast<int64_t>(step) > sh.top_step[j]) {
      sh.top_step[j] = static_cast<int64_t>(step);
      ++sh.finished[j];
    }
    return shard_ssp_released(s, sh.ssp->finished(j, step, shard_node::held{incarnation, tag, sh.version, step + 1},
                                                  clock()));
  }
  // sync: every gradient is the constant of its step tag, so an update that averaged anything
  // but fresh gradients of its step shows in its value; and a table's rows, each worker's own
  // for the step (table_rows_of), which the rule sums by row
  variable_slice grad{0, 0, tensor_copy(std::vector<float>{static_cast<float>(step)}.data(), 1)};
  auto rows = table_rows_of(j, step);
  variable_slice table{1, 0, {float_vector(rows.size(), static_cast<float>(step))}, false, row_ids{std::move(rows)}};
  auto got = sh.sync->offer(j, step, {grad, std::move(table)}, {shard_node::held{incarnation, tag}}, clock());
  using kind = sync_session<shard_node::held>::offered::kind;
  if (got.what == kind::refused) {
    violate(cat("shard ", s, " refused worker ", j, "'s push of step ", step, ": ", describe(got.error)));
    return;
  }
  if (got.what == kind::stale) { // (the session counts it, as the SyncAggregator's)
    if (tag.fetch != 0) // (cluster.rows-with-push: the rows as they are, for the step it goes on with)
      check_sync_rows(s, j, incarnation, step + tag.ahead);
    return shard_reply(s, j, incarnation, tag, sh.version, sh.sync->rule().step(), true);
  }
  if (got.arm)
    shard_arm_step_clock(s, sc_.step_timeout);
  if (got.applied)
    shard_apply_sync(s, std::move(*got.applied));
}

// Every gradient is its step's tag: an update applies count x step / divisor (elastic: the sum
// over the configured workers; else the average, the step itself).
float cluster::expected_average(const sync_rule::completed& done) const {
  const auto count = static_cast<float>(done.released.size());
  const float divisor = sc_.elastic ? static_cast<float>(sc_.workers) : count;
  return static_cast<float>(done.step) * count / divisor;
}

std::vector<uint32_t> cluster::table_rows_of(uint32_t j, uint64_t step) const {
  std::vector<uint32_t> rows{static_cast<uint32_t>((j + step) % table_rows)}; // (never none)
  for (uint32_t r = 0; r < table_rows; ++r)
    if (r != rows.front() && (mix64(sc_.seed ^ (uint64_t{j} << 40) ^ (step << 8) ^ r) & 3) == 0)
      rows.push_back(r);
  return rows;
}

// A sync step's table rows: exactly the union of its contributors' rows for the step, each the
// sum of theirs (every row of worker j's step is the step's tag) over the divisor -- a row lost,
// doubled, or taken from another step or a stale push shows.
std::string cluster::check_table_rows(const sync_rule::completed& done) const {
  std::map<uint32_t, float> want;
  for (uint32_t j : done.released)
    for (uint32_t r : table_rows_of(j, done.step))
      want[r] += static_cast<float>(done.step);
  const float divisor = sc_.elastic ? static_cast<float>(sc_.workers) : static_cast<float>(done.released.size());
  const auto& got = done.average[1];
  if (!got.by_rows() || got.rows.size() != want.size() || got.data.values.size() != want.size())
    return cat(got.rows.size(), " rows, the contributors touched ", want.size());
  for (size_t i = 0; i < got.rows.size(); ++i) {
    auto it = want.find(got.rows.ids[i]);
    if (it == want.end())
      return cat("row ", got.rows.ids[i], " was touched by no contributor");
    if (std::fabs(got.data.values[i] - it->second / divisor) > 1e-5f * (1.0f + it->second))
      return cat("row ", got.rows.ids[i], " is ", got.data.values[i], ", not ", it->second / divisor);
  }
  return {};
}

void cluster::shard_apply_sync(uint32_t s, sync_session<held_reply>::step_done done_step) {
  auto& sh = *shards_[s];
  const uint32_t needed = std::min(sc_.replicas_to_aggregate, std::max<uint32_t>(1, sh.sync->rule().live_workers()));
  auto& done = done_step.done;
  if (done.released.size() != needed)
    violate(cat("shard ", s, " applied step ", done.step, " with ", done.released.size(), " gradients, not ", needed));
  if (done.average.size() != 2 || done.average[0].data.values.size() != 1
      || std::fabs(done.average[0].data.values[0] - expected_average(done)) > 1e-5f * (1.0f + done.step))
    violate(cat("shard ", s, " applied step ", done.step, " from gradients of other steps"));
  else if (auto why = check_table_rows(done); !why.empty())
    violate(cat("shard ", s, " applied step ", done.step, "'s table rows wrongly: ", why));
  if (sc_.table && done.average.size() == 2) // each row of the sum moves once; a contributor's rows are its own updates
    for (size_t i = 0; i < done.average[1].rows.size(); ++i) {
      const uint32_t r = done.average[1].rows.ids[i];
      ++sh.row_version[r];
      for (uint32_t k : done.released)
        for (uint32_t mine : table_rows_of(k, done.step))
          if (mine == r)
            sh.own_rows[k][r] = sh.row_version[r];
    }
  sh.version = std::max<uint64_t>(sh.version + 1, done.step + 1); // (parameter_store: a sync version is steps applied)
  if (sh.version != done.step + 1)
    violate(cat("shard ", s, " is at version ", sh.version, " after applying step ", done.step));
  for (size_t k = 0; k < done.released.size(); ++k)
    for (auto& h : done_step.release[k]) {
      if (h.tag.fetch != 0) // (cluster.rows-with-push: read after the step's update, as the aggregator's)
        check_sync_rows(s, done.released[k], h.incarnation, done.step + h.tag.ahead);
      shard_reply(s, done.released[k], h.incarnation, h.tag, sh.version, done.step + 1, false);
    }
}

// The session's step clock, ticked on the shard's process (a restarted shard's session is new).
void cluster::shard_arm_step_clock(uint32_t s, vtime after) {
  at(now_ + after, [this, s, inc = shards_[s]->incarnation] {
    auto& sh = *shards_[s];
    if (!sh.alive || sh.incarnation != inc || !sh.sync || over_)
      return;
    if (now_ < sh.frozen_until) // (a stopped process's clock ticks once it wakes)
      return shard_arm_step_clock(s, sh.frozen_until - now_);
    const auto step = sh.sync->rule().step();
    auto t = sh.sync->tick(clock());
    if (t.again)
      shard_arm_step_clock(s, std::chrono::duration_cast<std::chrono::microseconds>(*t.again).count() + 1);
    for (auto w : t.silent)
      log(cat("shard ", s), cat("step ", step, " no longer waits for worker ", w, " (silent for the step timeout)"));
    if (t.applied)
      shard_apply_sync(s, std::move(*t.applied));
  });
}

void cluster::shard_lose(uint32_t s, uint32_t j) {
  auto& sh = *shards_[s];
  sh.lost[j] = true;
  if (sh.sync) {
    if (auto done = sh.sync->lose(j, clock()))
      shard_apply_sync(s, std::move(*done));
  } else if (sh.ssp) {
    shard_ssp_released(s, sh.ssp->lose(j, clock()));
  }
}

// Carries out what the ssp session let go: answers (each a worker released within the bound),
// workers let go for silence, and the next silence check on this shard process.
void cluster::shard_ssp_released(uint32_t s, ssp_session<held_reply>::released out) {
  auto& sh = *shards_[s];
  for (auto w : out.silent) {
    log(cat("shard ", s), cat("no longer waiting for worker ", w, " (silent for the step timeout)"));
    ++silenced_;
    sh.lost[w] = true;
  }
  for (auto& [w, h] : out.go) {
    check_ssp(s, w);
    if (h.tag.fetch != 0) // (cluster.rows-with-push: read as the answer goes, after any wait)
      check_own_rows(s, w, h.incarnation, h.next_step - 1 + h.tag.ahead);
    shard_reply(s, w, h.incarnation, h.tag, h.version, h.next_step, false);
  }
  if (out.check_at)
    at(std::chrono::duration_cast<std::chrono::microseconds>(*out.check_at - run_time{}).count(),
       [this, s, inc = sh.incarnation] {
         auto& sh = *shards_[s];
         if (sh.alive && sh.incarnation == inc && sh.ssp && !over_)
           shard_ssp_released(s, sh.ssp->tick(clock()));
       });
}

// A worker released by an ssp shard starts its next step: at most `staleness` steps ahead of
// the slowest worker this shard still counts (checked while no worker ever crashed, fell silent
// or lost its link: one back enters at the slowest count by the rule's own convention).
void cluster::check_ssp(uint32_t s, uint32_t j) {
  if (crashes_ > 0 || silenced_ > 0 || unlinked_ > 0 || shard_crashes_ > 0) // (a restored ssp rule forgets the counts)
    return;
  auto& sh = *shards_[s];
  int64_t slowest = INT64_MAX;
  for (uint32_t k = 0; k < sc_.workers; ++k) // (joiners enter at the slowest count: not this counter's)
    if (sh.seen[k] > 0 && !sh.lost[k])
      slowest = std::min(slowest, sh.finished[k]);
  if (slowest != INT64_MAX && sh.finished[j] - slowest > static_cast<int64_t>(sc_.staleness))
    violate(cat("ssp: shard ", s, " released worker ", j, " at ", sh.finished[j], " steps while the slowest is at ",
                slowest, " (staleness ", sc_.staleness, ")"));
}

// -- faults and the end ------------------------------------------------------------------------

void cluster::inject(const fault& f) {
  const bool worker_fault = f.what == fault::kind::crash_worker || f.what == fault::kind::freeze_worker
                            || f.what == fault::kind::slow_worker || f.what == fault::kind::leave_worker
                            || f.what == fault::kind::partition;
  auto& w = *workers_[worker_fault ? f.node : 0];
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
    case fault::kind::freeze_shard: {
      auto& sh = *shards_[f.node];
      if (!sh.alive)
        return;
      log(cat("shard ", f.node), cat("frozen for ", stamp(f.duration)));
      sh.frozen_until = std::max(sh.frozen_until, now_ + f.duration);
      break;
    }
    case fault::kind::slow_worker:
      log(who, cat("computes ", f.factor, "x slower"));
      w.slow = f.factor;
      break;
    case fault::kind::corrupt_checkpoint: { // the disk: a restart reads the newest save back damaged
      if (ckpts_.empty())
        return;
      const storage damage[] = {storage::missing, storage::truncated, storage::bad_checksum};
      ckpts_.back().state = damage[f.node % 3];
      log("simulator", cat("the checkpoint at global step ", ckpts_.back().c.steps, " reads back ",
                           f.node % 3 == 0 ? "missing" : f.node % 3 == 1 ? "truncated" : "failing its checksum"));
      break;
    }
    case fault::kind::partition: // the network between it and every other node is cut, then heals
      log(who, cat("cut off from the cluster for ", stamp(f.duration)));
      cut_until_[worker_id(f.node)] = std::max(cut_until_[worker_id(f.node)], now_ + f.duration);
      break;
    case fault::kind::leave_worker: // its node's signal watch: the worker leaves the job cleanly
      if (!w.alive)
        return;
      log(who, "SIGTERM: leaves the job");
      ++leaves_;
      to_worker(worker_id(f.node), f.node, w.incarnation, [this, j = f.node](worker_node& w) { worker_execute(j, w.ctl->leave()); });
      break;
    case fault::kind::join_worker: // a new process connects to the chief and asks for an id
      if (!chief_alive_)
        return log("simulator", "a joiner finds no chief and exits");
      log("simulator", "a new worker process asks to join");
      to_chief(worker_id(static_cast<uint32_t>(sc_.workers + joins_++)), [this] { on_join(); });
      break;
    case fault::kind::sigterm_shard: // its node's signal watch asks the chief ((stop_atom, shard)) to end the run
      if (!shards_[f.node]->alive)
        return;
      log(cat("shard ", f.node), "SIGTERM: asks the chief to end the run");
      to_chief(shard_id(f.node), [this] {
        if (chief_->phase() == run_phase::training)
          sigtermed_ = true;
        chief_execute(chief_->terminate(clock()));
      });
      return;
    case fault::kind::sigterm_chief: // the chief's signal watch; ends the run if it is training
      if (!chief_alive_)
        return;
      log("chief", "SIGTERM");
      if (chief_->phase() == run_phase::training)
        sigtermed_ = true;
      chief_execute(chief_->terminate(clock()));
      return;
    case fault::kind::crash_shard: {
      auto& sh = *shards_[f.node];
      if (!sh.alive || !sh.restored || chief_->phase() == run_phase::done)
        return;
      sh.alive = false;
      sh.restored = false;
      sh.noticed = false;
      ++sh.incarnation;
      ++sh.crashes;
      ++shard_crashes_;
      sh.version_at_crash = sh.version;
      log(cat("shard ", f.node), cat("killed; restarts in ", stamp(f.duration)));
      if (chief_alive_ && sh.chief_seen == chief_inc_) // (a chief not connected to it yet reaches its restart)
        to_chief(shard_id(f.node), [this, s = f.node] {
          shards_[s]->noticed = true;
          chief_execute(chief_->shard_down(s, "killed"));
        });
      sh.chief_seen = 0;
      for (uint32_t j = 0; j < workers_.size(); ++j)
        if (workers_[j]->alive)
          to_worker(shard_id(f.node), j, workers_[j]->incarnation, [this, j, s = f.node](worker_node& w) {
            worker_execute(j, w.ctl->shard_down(s, cat("shard ", s, " went down (killed)")));
            fetches_failed(j); // (rows pulled from it never come)
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
      for (uint32_t j = 0; j < workers_.size(); ++j)
        if (workers_[j]->alive && workers_[j]->chief == chief_inc_ - 1)
          to_worker(chief_id(), j, workers_[j]->incarnation,
                    [this, j](worker_node& w) { worker_execute(j, w.ctl->chief_down("the chief went down (killed)")); });
      at(now_ + f.duration, [this] { restart_chief(); });
      break;
  }
  last_fault_heals_ = std::max(last_fault_heals_, now_ + f.duration);
}

} // namespace actorps::sim
