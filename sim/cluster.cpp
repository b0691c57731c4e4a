// The simulated cluster: its network (per-link FIFO channels), the event loop, the log and the
// invariants checked at the end.
#include "sim/cluster_nodes.hpp"

#include "common/log.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>

namespace actorps::sim {

uint64_t rng::next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

cluster::cluster(scenario sc) : sc_(std::move(sc)), rng_(rng(sc_.seed).next()) {
  const uint32_t slots = sc_.worker_slots();
  const uint32_t nodes = 1 + sc_.shards + slots;
  link_last_.assign(static_cast<size_t>(nodes) * nodes, 0);
  cut_until_.assign(nodes, 0);
  if (sc_.replicas_to_aggregate == 0 || sc_.replicas_to_aggregate > sc_.workers || sc_.in_graph)
    sc_.replicas_to_aggregate = sc_.workers;
  if (sc_.elastic && sc_.mode == train_mode::sync) // (cluster.elastic-aggregate = all: every live worker)
    sc_.replicas_to_aggregate = slots;
  std::vector<int64_t> budgets; // epochs: each worker's partition's batches (as actors/chief_setup)
  if (sc_.epochs > 0) {
    const uint32_t replicas = sc_.workers / sc_.slices;
    budgets = worker_step_budgets(sc_.mode, sc_.epochs, sc_.train_rows, batch_rows, sc_.replicas_to_aggregate, replicas);
    sc_.max_steps = step_budget(sc_.mode, 0, sc_.epochs, sc_.train_rows, batch_rows, sc_.replicas_to_aggregate, replicas);
  }
  run_control_config rc;
  rc.workers = sc_.workers;
  rc.shards = sc_.shards;
  rc.mode = sc_.mode;
  rc.replicas_to_aggregate = sc_.mode == train_mode::sync && !sc_.in_graph ? sc_.replicas_to_aggregate : 1;
  rc.in_graph = sc_.in_graph; // (as the real chief: one update a step, its own steps)
  rc.slices = sc_.slices;
  rc.max_steps = sc_.max_steps;
  rc.grant_steps = grant_steps_for(sc_.mode, sc_.max_steps, sc_.workers, sc_.report_every);
  rc.budget_from_epochs = !budgets.empty();
  rc.worker_budgets = budgets;
  rc.train_rows = 55'000;
  rc.progress_every = std::max<int64_t>(1, sc_.max_steps / 4);
  rc.eval_every_epochs = 0;
  rc.eval_every = sc_.eval_every;
  rc.startup_timeout = std::chrono::seconds(60);
  // (as the real chief: the workers' final reports are awaited that long; a worker frozen past
  // it wakes to the run's end)
  rc.request_timeout = sc_.request_timeout > 0 ? std::chrono::milliseconds{std::max<vtime>(1, sc_.request_timeout / 1000)}
                                               : std::chrono::milliseconds{std::chrono::hours(1)};
  rc.checkpoints = sc_.checkpoint_every > 0;
  rc.shards_recoverable = rc.checkpoints;
  rc.checkpoint_every_steps = sc_.checkpoint_every;
  if (sc_.elastic) { // (as the real chief: the ledger counts epochs; grants count steps)
    rc.elastic = true;
    rc.min_workers = 1;
    rc.max_workers = slots;
    rc.train_rows = sc_.train_rows;
    desk_.emplace(sc_.train_rows, sc_.lease_rows, sc_.seed);
  }
  rc_ = rc;
  chief_ = std::make_unique<run_control>(std::move(rc));
  if (sc_.in_graph)
    make_in_graph_driver();
  for (uint32_t j = 0; j < slots; ++j)
    workers_.push_back(std::make_unique<worker_node>());
  for (uint32_t s = 0; s < sc_.shards; ++s) {
    auto sh = std::make_unique<shard_node>();
    shard_sessions(*sh, run_time{});
    sh->seen.assign(slots, 0);
    sh->lost.assign(slots, false);
    sh->finished.assign(slots, 0);
    sh->top_step.assign(slots, -1);
    sh->own_updates.assign(slots, {});
    sh->row_version.assign(table_rows, 0);
    sh->own_rows.assign(slots, std::vector<uint64_t>(table_rows, 0));
    shards_.push_back(std::move(sh));
  }
  for (uint32_t s = 0; s < sc_.shards && !sc_.kept.empty(); ++s) { // a session attaching to its scope:
    auto& sh = *shards_[s];                                         // the store keeps the version; the
    sh.version = sc_.kept.at(s);                                    // session's aggregator is new
    if (sh.sync)
      sh.sync->resume_at(sh.version);
  }
}

cluster::~cluster() = default;

// A shard's aggregator session, as the real one is configured: sync with R of the workers (elastic:
// every live one, the sum divided by the configured workers; joiners' ids live from their first
// push), ssp with the staleness bound; in-graph and async shards apply pushes at once.
void cluster::shard_sessions(shard_node& sh, run_time now) const {
  const auto ids = static_cast<uint32_t>(workers_.size());
  const std::chrono::microseconds timeout{sc_.step_timeout};
  if (sc_.mode == train_mode::sync && !sc_.in_graph)
    sh.sync.emplace(sc_.elastic ? sync_rule{ids, ids, sc_.workers, sc_.workers}
                                : sync_rule{sc_.workers, sc_.replicas_to_aggregate},
                    timeout);
  else if (sc_.mode == train_mode::ssp)
    sh.ssp.emplace(ssp_rule{ids, sc_.staleness, sc_.elastic ? sc_.workers : 0}, ids, now, timeout);
}

void cluster::at(vtime t, std::function<void()> fn) {
  queue_.push(event{std::max(t, now_), seq_++, std::move(fn)});
}

// Delivers after the link's delay, never before an earlier message on the same link (TCP), and
// not before a partition that cuts either end off heals (TCP retransmits until then).
void cluster::send(uint32_t from, uint32_t to, std::function<void()> fn) {
  const auto nodes = 1 + sc_.shards + static_cast<uint32_t>(workers_.size());
  auto& last = link_last_[static_cast<size_t>(from) * nodes + to];
  vtime t = std::max({now_, cut_until_[from], cut_until_[to]}) + sc_.latency
            + static_cast<vtime>(rng_.below(static_cast<uint64_t>(sc_.latency) + 1));
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
  for (uint32_t j = 0; j < workers_.size(); ++j) {
    auto& w = *workers_[j];
    ws += cat(j == 0 ? "" : ", ", j, ":", !w.alive ? "gone" : to_string(w.ctl->phase()), "@", w.alive ? w.ctl->step() : 0,
              w.alive && w.ctl->steps_left() >= 0 ? cat("(", w.ctl->steps_left(), " left)") : "",
              cat("[chief: ", to_string(chief_->status(j)),
                  chief_->granted(j) > 0 ? cat(", ", chief_->granted(j), " granted") : std::string{}, "]"));
  }
  log("state", cat("workers ", ws));
  for (uint32_t s = 0; s < sc_.shards; ++s) {
    auto& sh = *shards_[s];
    std::string rule;
    if (sh.sync) {
      std::string missing;
      for (auto j : sh.sync->rule().missing())
        missing += cat(missing.empty() ? "" : " ", j);
      rule = cat("sync step ", sh.sync->rule().step(), ", waits for [", missing, "]");
    } else if (sh.ssp) {
      std::string slow;
      for (auto j : sh.ssp->rule().slowest())
        slow += cat(slow.empty() ? "" : " ", j);
      rule = cat("ssp slowest [", slow, "]");
    }
    log("state", cat("shard ", s, " version ", sh.version, rule.empty() ? "" : ", ", rule));
  }
}

// -- the chief ---------------------------------------------------------------------------------

void cluster::check_end() {
  finish_summary();
  const bool at_limit = out_.stop_reason.rfind("max steps", 0) == 0;
  if (sigtermed_ && out_.stop_reason != "stopped by SIGTERM")
    violate(cat("the chief took a SIGTERM while training, but the run stopped for \"", out_.stop_reason, "\""));
  else if (!sigtermed_ && !at_limit)
    violate(cat("the run stopped for another reason than its step limit: \"", out_.stop_reason, "\""));
  // Async and ssp count the workers' reports: a worker killed between its pushes and its report
  // leaves applied updates nobody counted (open: count from the shards' versions), at most its
  // grant's worth. Without kills, and in sync always, the counts agree exactly.
  // A chief restart adds the rounds in flight when it read the shards' versions (async shards
  // are a few updates apart).
  // A round broken by a lost shard is no step, but the other shards applied its pushes (async,
  // ssp): one per worker and shard crash.
  // A push that timed out may still have been applied (async, ssp): its round is no step. An ssp
  // worker that leaves with steps granted after the others stopped out of steps leaves them undone.
  // In-graph: a step whose push a lost shard broke is no step, but the other shards applied it
  // (the chief runs the step again once the shard is restored): one per shard crash.
  // (Model-parallel: a group of slices is one replica; each of its steps is one push per slice.)
  const auto replicas = static_cast<int64_t>(workers_.size() / sc_.slices);
  const int64_t slack = sc_.mode == train_mode::sync
                          ? (sc_.in_graph ? static_cast<int64_t>(shard_crashes_) : 0)
                          : static_cast<int64_t>(crashes_ + leaves_) * (2 * sc_.report_every + 1)
                              + static_cast<int64_t>(chief_crashes_ + shard_crashes_) * replicas
                              + pushes_timed_out_;
  // A round in flight when a restarted chief read the shards' versions, applied before and
  // reported after, is counted twice: up to one step per worker and chief restart (async, ssp).
  const int64_t over = sc_.mode == train_mode::sync ? 0 : static_cast<int64_t>(chief_crashes_) * replicas;
  // (a restarted chief adopts the shards' step, which holds a killed worker's unreported updates)
  const int64_t adopted = chief_crashes_ > 0 ? slack : 0;
  const int64_t least = sigtermed_ ? 0 : sc_.max_steps - (sc_.mode == train_mode::ssp ? slack : 0);
  if (out_.steps > sc_.max_steps + over + adopted || out_.steps < least)
    violate(cat("the run stopped at global step ", out_.steps, ", not at max-steps ", sc_.max_steps));
  for (uint32_t s = 0; s < sc_.shards; ++s) {
    auto& sh = *shards_[s];
    // one restore per loss: never more, and none missing of a loss a chief learned of
    if (sh.restores > sh.crashes || (!sh.restored && sh.noticed))
      violate(cat("shard ", s, " was lost ", sh.crashes, " times and restored ", sh.restores, " times",
                  !sh.restored && sh.noticed ? " (the chief knew of its last loss)" : ""));
    // Updates after a lost shard's last checkpoint are lost with it, none other: it holds at least
    // the steps less those (fewer missing when the run went back to the checkpoint and redid them,
    // or a sync shard took the cluster's step) and never more than the steps.
    const auto applied = static_cast<int64_t>(out_.versions[s] / sc_.slices);
    const auto lost = static_cast<int64_t>(sh.lost_updates);
    if (applied + lost < out_.steps - over || applied > out_.steps + slack)
      violate(cat("shard ", s, " applied ", applied, " updates (", lost, " lost with its crashes) but the summary counts ",
                  out_.steps, " global steps"));
  }
  // Epochs: with no fault each worker pushed exactly its partition's batches, no more, no fewer.
  for (uint32_t j = 0; !rc_.worker_budgets.empty() && j < rc_.worker_budgets.size() && crashes_ + chief_crashes_
                         + shard_crashes_ + pushes_timed_out_ == 0; ++j)
    if (workers_[j]->rounds != rc_.worker_budgets[j])
      violate(cat("worker ", j, " pushed ", workers_[j]->rounds, " rounds; its partition's epochs are ",
                  rc_.worker_budgets[j], " batches"));
  // Every round a worker pushed is reported as fresh, stale or split (workers finish their round
  // before they stop; a killed one takes its unreported rounds with it; one that timed out is none).
  // (unless the chief finished without a worker's final report: cluster.request-timeout passed)
  if (!sc_.in_graph && !unreported_ && crashes_ == 0 && chief_crashes_ == 0 && shard_crashes_ == 0 && pushes_timed_out_ == 0
      && out_.worker_steps - attached_worker_steps_ + out_.stale_steps + out_.split_steps != rounds_pushed_)
    violate(cat("the workers pushed ", rounds_pushed_, " rounds but reported ", out_.worker_steps, " fresh, ",
                out_.stale_steps, " stale and ", out_.split_steps, " split steps"));
  // Model-parallel: every slice of a group pushed the same steps (a slice that left a step half
  // done would drop its columns' update while the others pushed theirs).
  for (uint32_t g = 0; sc_.slices > 1 && g < workers_.size() / sc_.slices; ++g)
    for (uint32_t k = 1; k < sc_.slices; ++k)
      if (workers_[g * sc_.slices + k]->rounds != workers_[g * sc_.slices]->rounds)
        violate(cat("group ", g, ": slice ", k, " pushed ", workers_[g * sc_.slices + k]->rounds, " steps, slice 0 ",
                    workers_[g * sc_.slices]->rounds));
  for (uint32_t j = 0; j < workers_.size(); ++j) // (a restart still registering finds no chief and exits)
    if (auto& w = *workers_[j]; w.alive && w.ctl->phase() != replica_phase::registering)
      violate(cat("worker ", j, " is still running (", to_string(w.ctl->phase()), ") after the chief quit"));
}

outcome cluster::run() {
  log("simulator", cat("scenario: ", sc_.replay()));
  for (auto& f : sc_.faults)
    at(f.at, [this, f] { inject(f); });
  chief_execute(chief_->begin(clock()));
  for (uint32_t s = 0; s < sc_.shards; ++s) { // every shard answers its setup
    shards_[s]->chief_seen = chief_inc_;
    send(chief_id(), shard_id(s), [this, s] {
      auto kept = sc_.kept.empty() ? 0 : sc_.kept[s]; // (already initialised: it keeps its values)
      send(shard_id(s), chief_id(), [this, s, kept] {
        chief_execute(chief_->shard_ready(s, clock(), kept));
        if (chief_->phase() != run_phase::init_shards && chief_->attached_step() > 0 && out_.attached < 0) { // (the first
          // chief's attach, once every shard answered: a restart's
          out_.attached = chief_->attached_step(); // attaches again, at a later step)
          attached_worker_steps_ = chief_->worker_steps(); // (the worker steps the variables count)
        }
      });
    });
  }
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

std::vector<outcome> simulate_scopes(const scenario& first) {
  std::vector<outcome> out{simulate(first)};
  if (!out[0].ok || out[0].versions.empty()) // (broken, or failed by design: no scope was kept)
    return out;
  scenario again = first;
  again.seed = first.seed + 1;
  again.max_steps = 2 * first.max_steps;
  again.kept = out[0].versions;
  out.push_back(simulate(again));
  auto& second = out.back();
  const auto top = static_cast<int64_t>(*std::max_element(again.kept.begin(), again.kept.end()) / first.slices);
  const int64_t expect = top > 0 ? top : -1;
  if (second.ok && second.attached != expect) {
    second.ok = false;
    second.violation = cat("the session attaching to the kept scope continued at global step ", second.attached,
                           ", not at ", expect, ", the step its variables are at");
  }
  return out;
}

} // namespace actorps::sim
