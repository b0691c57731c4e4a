// The chief's state machine, part one: start-up, progress, the stop and deadlines. (Part two,
// the work in flight and shard loss: run_control_ops.cpp; part three, the members:
// run_control_members.cpp.)
#include "control/run_control.hpp"

#include "common/log.hpp"

#include <algorithm>
#include <limits>
#include <cmath>

namespace actorps {

namespace {

using kind = run_command::kind;

} // namespace

const char* to_string(run_phase p) {
  switch (p) {
    case run_phase::init_shards: return "init_shards";
    case run_phase::waiting: return "waiting";
    case run_phase::training: return "training";
    case run_phase::stopping: return "stopping";
    case run_phase::final_save: return "final_save";
    case run_phase::finishing: return "finishing";
    case run_phase::done: return "done";
  }
  return "unknown";
}

run_control::run_control(run_control_config cfg)
  : cfg_(std::move(cfg)), members_(cfg_.workers, member::absent),
    grants_({cfg_.mode, cfg_.workers, cfg_.slices, cfg_.grant_steps, cfg_.max_steps, cfg_.budget_from_epochs,
             cfg_.worker_budgets, cfg_.should_stop}),
    lines_(cfg_.progress_every, cfg_.train_rows) {
  flight_.restoring.assign(cfg_.shards, false);
  flight_.set_up.assign(cfg_.shards, false);
}

std::string run_control::worker_name(uint32_t j) const {
  return j < cfg_.worker_names.size() ? cfg_.worker_names[j] : cat("worker ", j);
}

std::string run_control::shard_name(uint32_t s) const {
  return s < cfg_.shard_names.size() ? cfg_.shard_names[s] : cat("shard ", s);
}

double run_control::seconds(run_time now) const {
  if (phase_ == run_phase::init_shards || phase_ == run_phase::waiting)
    return resumed_seconds_;
  if (phase_ != run_phase::training && phase_ != run_phase::stopping)
    now = std::max(last_report_, train_start_);
  return resumed_seconds_ + std::chrono::duration<double>(now - train_start_).count();
}

bool run_control::wanted(uint64_t op) const {
  return (flight_.evaluation && *flight_.evaluation == op) || (flight_.save && flight_.save->op == op)
         || (flight_.summary && *flight_.summary == op);
}

bool run_control::restoring_any() const {
  return std::any_of(flight_.restoring.begin(), flight_.restoring.end(), [](bool b) { return b; });
}

const char* to_string(member m) {
  switch (m) {
    case member::absent: return "absent";
    case member::admitted: return "admitted";
    case member::registered: return "registered";
    case member::training: return "training";
    case member::finished: return "finished";
    case member::gone: return "gone";
    case member::left: break;
  }
  return "left";
}

int64_t run_control::worker_steps_at(int64_t global_step) const {
  return cfg_.mode == train_mode::sync ? global_step * cfg_.replicas_to_aggregate : global_step;
}

void run_control::resume(int64_t global_step, int64_t examples, double seconds, const std::vector<uint32_t>& members) {
  if (cfg_.elastic && !members.empty()) {
    for (auto j : members)
      if (j < cfg_.workers + cfg_.max_workers)
        grow(j);
    for (auto& m : members_)
      m = member::left; // a configured worker that had left is not waited for
    for (auto j : members)
      if (j < members_.size())
        members_[j] = member::absent;
  }
  resumed_ = true;
  if (global_step > 0) // (a restarted chief does not know each worker's share: one pool, as an estimate)
    cfg_.worker_budgets.clear();
  steps_ = global_step;
  resumed_seconds_ = seconds;
  worker_steps_ = worker_steps_at(global_step);
  examples_ = examples;
}

// Start-up ticks come every 5 s until the deadline (each names whom it waits for).
void run_control::arm(run_time now, std::chrono::milliseconds in, run_commands& out) {
  deadline_ = now + in;
  run_command c{kind::tick};
  c.after = phase_ == run_phase::init_shards || phase_ == run_phase::waiting ? std::min(in, reminder) : in;
  out.push_back(std::move(c));
}

run_commands run_control::fail(errc code, std::string text) {
  if (phase_ == run_phase::done)
    return {};
  phase_ = run_phase::done;
  run_command c{kind::fail};
  c.code = code;
  c.text = std::move(text);
  return {std::move(c)};
}

run_commands run_control::begin(run_time now) {
  run_commands out;
  flight_.setups = cfg_.shards;
  arm(now, cfg_.startup_timeout, out);
  auto expected = std::count_if(members_.begin(), members_.end(), [](member m) { return m == member::absent; });
  out.push_back(run_command::log(cat("waiting for ", expected, " workers")));
  return out;
}

run_commands run_control::shard_ready(uint32_t s, run_time now, uint64_t kept_version) {
  run_commands out;
  if (phase_ != run_phase::init_shards || flight_.setups == 0 || s >= flight_.set_up.size() || flight_.set_up[s])
    return out;
  flight_.set_up[s] = true;
  const auto kept = static_cast<int64_t>(kept_version / cfg_.slices);
  if (kept_version > 0 && !resumed_)
    attached_step_ = std::max(attached_step_, kept);
  if (kept_version > 0 && resumed_) // a restarted chief: shards that kept their variables are the model
    kept_ahead_ = std::max(kept_ahead_, kept);
  if (--flight_.setups > 0)
    return out;
  if (attached_step_ > 0) {
    steps_ = attached_step_;
    worker_steps_ = worker_steps_at(steps_);
    out.push_back(run_command::log(cat("the shards kept this scope's variables: continuing at global step ", steps_)));
  }
  if (kept_ahead_ > steps_) {
    out.push_back(run_command::log(cat("the shards' variables are at global step ", kept_ahead_,
                                       ", past the checkpoint's ", steps_, ": continuing there")));
    steps_ = kept_ahead_;
    worker_steps_ = worker_steps_at(steps_);
  }
  if ((resumed_ || attached_step_ > 0 || kept_ahead_ > 0) && cfg_.max_steps > 0 && steps_ >= cfg_.max_steps) {
    // a chief restarted after its run had reached max-steps (killed while finishing, or started
    // again on its checkpoints): the workers are stopped as they come, untrained, then it finishes
    out.push_back(run_command::log(cat("the run had reached max-steps ", cfg_.max_steps, " (global step ", steps_,
                                       "): finishing it once its workers are back")));
    stop_at_start_ = cat("max steps ", cfg_.max_steps, " reached");
  }
  phase_ = run_phase::waiting;
  if (std::none_of(members_.begin(), members_.end(), [](member m) { return m == member::absent; }))
    start_training(now, out);
  return out;
}

void run_control::start_training(run_time now, run_commands& out) {
  phase_ = run_phase::training;
  for (auto& m : members_)
    if (m == member::registered) // (elastic: ids that had left stay left)
      m = member::training;
  train_start_ = now;
  if (stop_at_start_) { // nothing left to train: the workers stop without a step
    last_report_ = now;
    begin_stop(*stop_at_start_, now, out);
    return;
  }
  lines_.start(steps_, now);
  next_eval_step_ = steps_ + cfg_.eval_every;
  next_eval_epoch_ = next_epoch_evaluation(static_cast<double>(examples_) / cfg_.train_rows, cfg_.eval_every_epochs);
  next_save_step_ = steps_ + cfg_.checkpoint_every_steps;
  next_save_seconds_ = cfg_.checkpoint_every_seconds;
  out.push_back(run_command::log(cat("all ", live_workers(), " workers registered; training (", to_string(cfg_.mode),
                                     cfg_.in_graph ? ", in-graph" : "", ")")));
  out.push_back(run_command{kind::start_workers});
  for (uint32_t j = 0; j < members_.size(); ++j) // those registered before the shards answered
    if (members_[j] == member::training && grants_.granted(j) == 0)
      top_up(j, out);
  next_in_graph_step(out);
}

run_commands run_control::progress(uint32_t j, int64_t steps, int64_t examples, double loss_sum, bool final,
                                   run_time now, int64_t global_step, int64_t stale, int64_t split) {
  run_commands out;
  // (waiting: a worker that registered with a restarted chief finishes the round it had in
  // flight and reports it under its new grant before the start)
  const bool counted = phase_ == run_phase::training || phase_ == run_phase::stopping
                       || (phase_ == run_phase::waiting && j < members_.size() && members_[j] == member::registered);
  if (!counted || j >= members_.size())
    return out;
  reported_step_ = std::max(reported_step_, global_step);
  // The global step counts updates: every push in async and ssp, every aggregated step in sync.
  worker_steps_ += steps;
  stale_steps_ += stale;
  split_steps_ += split;
  grants_.reported(j, steps, final); // (final: it takes no more steps: what it holds goes to the others)
  if (final && members_[j] == member::training)
    members_[j] = member::finished;
  count(examples, loss_sum, now, out);
  stop_if_all_stopped(out);
  if (phase_ == run_phase::training) {
    maybe_evaluate(now, out);
    maybe_checkpoint(now, out);
  }
  if (phase_ == run_phase::training && members_[j] == member::training)
    top_up(j, out);
  // Steps left in the pool while other workers wait with none (their reports came while another
  // held the rest, or a restarted chief counted a round twice) go to them: nobody waits forever.
  for (uint32_t k = 0; cfg_.grant_steps > 0 && phase_ == run_phase::training && k < members_.size(); ++k)
    if (k != j && members_[k] == member::training && grants_.granted(k) == 0)
      top_up(k, out);
  if (phase_ == run_phase::stopping && all_reported())
    begin_finish(out);
  return out;
}

// Every worker stopped by itself (sync at train.max-steps, ssp out of steps to grant) or is gone:
// the run stops at the step limit.
void run_control::stop_if_all_stopped(run_commands& out) {
  if (phase_ != run_phase::training || !all_reported())
    return;
  phase_ = run_phase::stopping;
  std::optional<std::string> why; // (the step limit may be max-epochs' steps: the rule names it)
  if (cfg_.should_stop)
    why = cfg_.should_stop(steps_, examples_);
  stop_reason_ = why                      ? *why
                 : cfg_.budget_from_epochs ? cat("max-epochs' step budget (", cfg_.max_steps, " steps) reached")
                                           : cat("max steps ", cfg_.max_steps, " reached");
  out.push_back(run_command::log("every worker stopped at the step limit"));
}

run_commands run_control::chief_step(int64_t examples, double loss_sum, run_time now) {
  run_commands out;
  if (!cfg_.in_graph || (phase_ != run_phase::training && phase_ != run_phase::stopping))
    return out;
  ++worker_steps_;
  count(examples, loss_sum, now, out);
  if (phase_ == run_phase::training) {
    maybe_evaluate(now, out);
    maybe_checkpoint(now, out);
    check_stop(now, out); // (also while an evaluation runs: no step past a limit)
  }
  next_in_graph_step(out);
  return out;
}

// In-graph: the next step is due while training goes on and every shard can answer.
void run_control::next_in_graph_step(run_commands& out) {
  if (cfg_.in_graph && phase_ == run_phase::training && !restoring_any())
    out.push_back(run_command{kind::in_graph_step});
}

// Counts examples and losses into the global step and writes the progress line when one is due.
void run_control::count(int64_t examples, double loss_sum, run_time now, run_commands& out) {
  // Sync between-graph: the global step is the shards' (the step the workers report they are at).
  // A count of the workers' fresh steps would miss the steps of a worker lost at the step timeout
  // and the pushes one shard took while another dropped them as stale.
  if (cfg_.mode != train_mode::sync)
    steps_ = worker_steps_;
  else if (!cfg_.in_graph)
    steps_ = std::max(steps_, reported_step_);
  else
    steps_ = worker_steps_;
  examples_ += examples;
  last_report_ = now;
  eval_loss_.add(loss_sum, examples);
  if (auto line = lines_.add(steps_, examples_, examples, loss_sum, now)) {
    auto c = run_command::log(std::move(line->text));
    c.figures = line->figures;
    out.push_back(std::move(c));
  }
}

void run_control::check_stop(run_time now, run_commands& out) {
  std::optional<std::string> why;
  if (cfg_.should_stop)
    why = cfg_.should_stop(steps_, examples_);
  else if (cfg_.max_steps > 0 && steps_ >= cfg_.max_steps)
    why = cat("max steps ", cfg_.max_steps, " reached");
  if (why)
    begin_stop(*why, now, out);
}

void run_control::begin_stop(std::string reason, run_time now, run_commands& out) {
  if (phase_ != run_phase::training)
    return;
  phase_ = run_phase::stopping;
  stop_reason_ = std::move(reason);
  out.push_back(run_command::log(cat("stopping: ", stop_reason_, "; waiting for the workers' final reports")));
  out.push_back(run_command{kind::stop_workers});
  arm(now, cfg_.request_timeout, out);
}

run_commands run_control::tick(run_time now) {
  run_commands out;
  if (paused()) { // a reminder every 5 s; the run fails once the pause outlasts cluster.startup-timeout
    if (now + std::chrono::milliseconds(1) >= pause_deadline_)
      return fail(errc::timeout, cat("training stayed paused for cluster.startup-timeout: ", live_workers(),
                                     " live worker(s), cluster.min-workers is ", cfg_.min_workers));
    out.push_back(run_command::log(cat("training paused: waiting for ", cfg_.min_workers - live_workers(),
                                       " more worker(s) to join (", live_workers(), " live, cluster.min-workers ",
                                       cfg_.min_workers, ")")));
    run_command c{kind::tick};
    c.after = std::min(std::chrono::duration_cast<std::chrono::milliseconds>(pause_deadline_ - now), reminder);
    out.push_back(std::move(c));
  }
  bool starting = phase_ == run_phase::init_shards || phase_ == run_phase::waiting;
  if (now + std::chrono::milliseconds(1) < deadline_) {
    if (starting) { // a reminder: whom we wait for, every 5 s until the deadline
      out.push_back(run_command::log(cat("waiting for ", missing())));
      run_command c{kind::tick};
      c.after = std::min(std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - now), reminder);
      out.push_back(std::move(c));
    }
    return out; // else armed for a wait that has ended
  }
  // A restarted chief (its run resumed, or the shards kept the variables) goes on with the workers
  // that came back: one that had finished, or died meanwhile, never registers again. An elastic
  // job, restarted or not, starts with those that came if they are at least cluster.min-workers
  // (one that left, or died for good, never comes). A late one rejoins.
  const bool restarted = resumed_ || attached_step_ > 0;
  if (phase_ == run_phase::waiting && (restarted || cfg_.elastic) && live_workers() > 0
      && (!cfg_.elastic || live_workers() >= cfg_.min_workers) && cfg_.slices == 1) {
    out.push_back(run_command::log(cat(restarted ? "resuming" : "starting", " without ", missing(),
                                       ": no registration within cluster.startup-timeout")));
    for (auto& m : members_)
      if (m == member::absent)
        m = member::gone;
    start_training(now, out);
    return out;
  }
  if (phase_ == run_phase::waiting && stop_at_start_) { // the run had ended: finish it without them
    out.push_back(run_command::log(cat("finishing without ", missing(), ": no registration within cluster.startup-timeout")));
    for (auto& m : members_)
      if (m == member::absent)
        m = member::gone;
    stop_reason_ = *stop_at_start_;
    train_start_ = last_report_ = now;
    begin_finish(out);
    return out;
  }
  if (starting)
    return fail(errc::timeout, cat("start-up failed: no answer from ", missing(), " within cluster.startup-timeout"));
  if (phase_ == run_phase::stopping) {
    out.push_back(run_command::log("not every worker sent its final report in time; finishing without it"));
    begin_finish(out);
  }
  return out;
}

} // namespace actorps
