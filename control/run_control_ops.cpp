// The chief's state machine, part two: the work in flight -- evaluations, checkpoint saves, the
// summary -- and what losing and restoring a shard does to it. (Part one: run_control.cpp.)
#include "control/run_control.hpp"

#include "common/log.hpp"
#include "data/batcher.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace actorps {

namespace {

bool epochs_counted(train_mode mode, int max_epochs, int64_t train_rows, int batch, uint32_t workers) {
  return max_epochs > 0 && train_rows > 0 && batch > 0 && workers > 0 && mode != train_mode::model_parallel;
}

// Sync with backup workers: the global steps that aggregate max_epochs x train_rows examples.
bool by_aggregate(train_mode mode, uint32_t replicas_to_aggregate, uint32_t workers) {
  return mode == train_mode::sync && replicas_to_aggregate < workers;
}

int64_t aggregate_steps(int max_epochs, int64_t train_rows, int batch, uint32_t replicas_to_aggregate) {
  const int64_t per_step = static_cast<int64_t>(batch) * std::max<uint32_t>(1, replicas_to_aggregate);
  return (static_cast<int64_t>(max_epochs) * train_rows + per_step - 1) / per_step;
}

// max_epochs passes over worker j's partition: its batches, the last of each pass partial.
int64_t partition_steps(int max_epochs, int64_t train_rows, int batch, uint32_t workers, uint32_t j) {
  const int64_t rows = partition_range(static_cast<int>(train_rows), static_cast<int>(j), static_cast<int>(workers)).size();
  return static_cast<int64_t>(max_epochs) * ((rows + batch - 1) / batch);
}

int64_t capped(int64_t max_steps, int64_t steps) {
  return max_steps > 0 ? std::min(max_steps, steps) : steps;
}

} // namespace

int64_t step_budget(train_mode mode, int64_t max_steps, int max_epochs, int64_t train_rows, int batch,
                    uint32_t replicas_to_aggregate, uint32_t workers) {
  if (!epochs_counted(mode, max_epochs, train_rows, batch, workers))
    return max_steps;
  if (by_aggregate(mode, replicas_to_aggregate, workers))
    return capped(max_steps, aggregate_steps(max_epochs, train_rows, batch, replicas_to_aggregate));
  int64_t sum = 0, most = 0;
  for (uint32_t j = 0; j < workers; ++j) {
    const int64_t steps = partition_steps(max_epochs, train_rows, batch, workers, j);
    sum += steps;
    most = std::max(most, steps);
  }
  return capped(max_steps, mode == train_mode::sync ? most : sum); // (sync: every worker's batch is in each step)
}

std::vector<int64_t> worker_step_budgets(train_mode mode, int max_epochs, int64_t train_rows, int batch,
                                         uint32_t replicas_to_aggregate, uint32_t workers) {
  std::vector<int64_t> out;
  if (!epochs_counted(mode, max_epochs, train_rows, batch, workers) || by_aggregate(mode, replicas_to_aggregate, workers))
    return out;
  for (uint32_t j = 0; j < workers; ++j)
    out.push_back(partition_steps(max_epochs, train_rows, batch, workers, j));
  return out;
}

int64_t grant_steps_for(train_mode mode, int64_t max_steps, uint32_t workers, int report_every) {
  if (mode == train_mode::sync || max_steps <= 0 || workers == 0)
    return 0;
  auto size = std::max<int64_t>(1, 2 * static_cast<int64_t>(report_every)); // a report refills it
  if (mode == train_mode::ssp) // every worker gets steps at the start: one that never pushes would
    size = std::min(size, std::max<int64_t>(1, max_steps / std::max<uint32_t>(1, workers))); // park the rest
  return size;
}


using kind = run_command::kind;

double next_epoch_evaluation(double epochs, int every) {
  if (every <= 0)
    return std::numeric_limits<double>::infinity();
  return (std::floor(epochs / every) + 1.0) * every;
}

void run_control::maybe_evaluate(run_time now, run_commands& out) {
  double epochs = static_cast<double>(examples_) / cfg_.train_rows;
  bool due = (cfg_.eval_every_epochs > 0 && epochs >= next_eval_epoch_)
             || (cfg_.eval_every > 0 && steps_ >= next_eval_step_);
  if (!due || flight_.evaluation || restoring_any()) // (a due evaluation waits for the shards)
    return check_stop(now, out);
  next_eval_epoch_ = next_epoch_evaluation(epochs, cfg_.eval_every_epochs);
  while (cfg_.eval_every > 0 && next_eval_step_ <= steps_)
    next_eval_step_ += cfg_.eval_every;
  flight_.evaluation = next_op_++;
  auto c = run_command::for_op(kind::evaluate, *flight_.evaluation);
  c.step = steps_;
  c.examples = examples_;
  c.train_loss = eval_loss_.take();
  out.push_back(std::move(c));
}

run_commands run_control::evaluated(uint64_t op, bool improved, run_time now) {
  run_commands out;
  if (!flight_.evaluation || *flight_.evaluation != op)
    return out;
  flight_.evaluation.reset();
  failed_evaluations_ = 0;
  if (phase_ != run_phase::training)
    return out;
  if (improved && cfg_.checkpoints)
    request_save(true, out);
  check_stop(now, out);
  return out;
}

void run_control::maybe_checkpoint(run_time now, run_commands& out) {
  if (!cfg_.checkpoints || phase_ != run_phase::training)
    return;
  bool by_steps = cfg_.checkpoint_every_steps > 0 && steps_ >= next_save_step_;
  bool by_time = cfg_.checkpoint_every_seconds > 0 && seconds(now) >= next_save_seconds_;
  if (!by_steps && !by_time)
    return;
  while (cfg_.checkpoint_every_steps > 0 && next_save_step_ <= steps_)
    next_save_step_ += cfg_.checkpoint_every_steps;
  next_save_seconds_ = seconds(now) + cfg_.checkpoint_every_seconds;
  request_save(false, out);
}

bool run_control::in_flight::queued_saves::take(bool best_ran_last) {
  const bool pick_best = best && (!periodic || !best_ran_last);
  (pick_best ? best : periodic) = false;
  return pick_best;
}

// One save at a time; one that comes due meanwhile (or while a shard is restored) is queued,
// one of each kind, and runs when the shards can answer: the kind that did not run last first,
// so that a run finding better models still takes its periodic checkpoints.
void run_control::request_save(bool best, run_commands& out) {
  if (flight_.save || restoring_any()) {
    bool& queued = best ? flight_.queued.best : flight_.queued.periodic;
    if (!queued)
      out.push_back(run_command::log(cat(best ? "best-model save" : "checkpoint", " at step ", steps_, " queued: ",
                                flight_.save ? "the previous save is still running" : "a shard is being restored")));
    queued = true;
    return;
  }
  flight_.save = save_op{next_op_++, best};
  auto c = run_command::for_op(kind::save, flight_.save->op);
  c.best = best;
  c.step = steps_;
  out.push_back(std::move(c));
}

run_commands run_control::saved(uint64_t op) {
  run_commands out;
  if (!flight_.save || flight_.save->op != op)
    return out;
  const bool best_ran = flight_.save->best;
  flight_.save.reset();
  if (phase_ == run_phase::final_save) { // the run's end is saved: its final evaluation and summary
    phase_ = run_phase::finishing;
    begin_finish(out);
    return out;
  }
  if (flight_.queued.any() && phase_ == run_phase::training)
    request_save(flight_.queued.take(best_ran), out);
  return out;
}

// The save of the run's last step (a periodic save still in flight is superseded).
void run_control::final_save(run_commands& out) {
  flight_.save = save_op{next_op_++, false};
  auto c = run_command::for_op(kind::save, flight_.save->op);
  c.step = steps_;
  out.push_back(std::move(c));
}

// The run's end. With checkpoint.dir its last step is saved first (final_save), then evaluated
// and summarised (finishing): a chief lost while it finishes then resumes a run that reached its
// end and finishes it without workers, instead of waiting for workers that ended with the run.
// A run resumed at its end has that checkpoint already.
void run_control::begin_finish(run_commands& out) {
  flight_.queued = {}; // (the final save supersedes a periodic or best one)
  if (phase_ != run_phase::finishing && cfg_.checkpoints && !stop_at_start_) {
    phase_ = run_phase::final_save;
    if (!restoring_any()) // (else shard_restored() takes it)
      final_save(out);
    return;
  }
  phase_ = run_phase::finishing;
  if (restoring_any() || flight_.summary)
    return; // shard_restored() comes back here
  flight_.summary = next_op_++;
  auto c = run_command::for_op(kind::finish, *flight_.summary);
  c.train_loss = eval_loss_.take();
  out.push_back(std::move(c));
}

run_commands run_control::finished(uint64_t op) {
  run_commands out;
  if (!flight_.summary || *flight_.summary != op)
    return out;
  flight_.summary.reset();
  phase_ = run_phase::done;
  out.push_back(run_command{kind::quit});
  return out;
}

run_commands run_control::failed(uint64_t op, errc code, const std::string& what, run_time now) {
  run_commands out;
  if (op != 0 && !wanted(op))
    return out; // abandoned: a shard it waited on went down
  if (flight_.save && flight_.save->op == op) {
    out.push_back(run_command::log(cat(flight_.save->best ? "best-model save" : "checkpoint", " at step ", steps_, " failed: ",
                              what, phase_ == run_phase::final_save ? "; the run finishes without it" : "; training goes on",
                              " (a failed save leaves the checkpoints before it as they were)")));
    auto more = saved(op); // the same next move as a save that went through
    out.insert(out.end(), more.begin(), more.end());
    return out;
  }
  if (flight_.evaluation && *flight_.evaluation == op && phase_ == run_phase::training) {
    if (++failed_evaluations_ < max_failed_evaluations) {
      flight_.evaluation.reset();
      out.push_back(run_command::log(cat("evaluation at step ", steps_, " failed: ", what, "; skipped, training goes on (",
                                         failed_evaluations_, " in a row; ", max_failed_evaluations, " fail the run)")));
      check_stop(now, out); // (one that reached the step limit was to take the stop)
      return out;
    }
  }
  if (op != 0 && restoring_any()) { // the shards' answers are lost while one is restored
    out.push_back(run_command::log(cat(what, " while a shard is being restored; skipped")));
    if (flight_.evaluation && *flight_.evaluation == op)
      flight_.evaluation.reset();
    if (flight_.summary && *flight_.summary == op)
      flight_.summary.reset(); // shard_restored() finishes again
    return out;
  }
  return fail(code, what);
}

run_commands run_control::setup_failed(uint32_t s, errc code, const std::string& what) {
  if (phase_ != run_phase::init_shards || s >= flight_.restoring.size() || flight_.restoring[s] || flight_.set_up[s])
    return {}; // (over; or its restore answers in its place, or it was answered)
  return fail(code, what);
}

run_commands run_control::shard_down(uint32_t s, const std::string& why) {
  run_commands out;
  if (s >= flight_.restoring.size() || phase_ == run_phase::done || flight_.restoring[s])
    return out; // (a second notice of the same loss)
  // (a resumed run also while it sets its shards up and waits for its workers: its checkpoint
  // restores the shard)
  bool running = phase_ == run_phase::training || phase_ == run_phase::stopping || phase_ == run_phase::finishing
                 || phase_ == run_phase::final_save
                 || ((phase_ == run_phase::waiting || phase_ == run_phase::init_shards) && resumed_);
  if (!running || !cfg_.shards_recoverable)
    return fail(errc::peer_unreachable,
                cat("lost a shard: ", shard_name(s), " went down (", why, ")",
                    !cfg_.checkpoints ? "; without checkpoint.dir there is nothing to restore it from"
                    : !running       ? cat(" during ", to_string(phase_))
                                     : std::string{}));
  flight_.restoring[s] = true;
  out.push_back(run_command::log(cat(shard_name(s), " went down (", why,
                            "); waiting up to cluster.connect-timeout for its restart, then restoring it from the last "
                            "checkpoint (the workers wait)")));
  // Every request in flight waits on every shard: none of them can complete now.
  if (flight_.evaluation) {
    out.push_back(run_command::log(cat("the evaluation in flight is dropped (", shard_name(s), " went down)")));
    flight_.evaluation.reset();
  }
  if (flight_.save) {
    out.push_back(run_command::log(cat(flight_.save->best ? "the best-model save" : "the checkpoint save",
                              " in flight is abandoned (", shard_name(s), " went down); it is taken again once the "
                              "shard is back")));
    if (phase_ != run_phase::final_save)
      (flight_.save->best ? flight_.queued.best : flight_.queued.periodic) = true;
    flight_.save.reset();
  }
  flight_.summary.reset(); // finishing: summarised again once the shard is back
  run_command c{kind::restore_shard};
  c.index = s;
  out.push_back(std::move(c));
  return out;
}

run_commands run_control::shard_restored(uint32_t s, uint64_t version, run_time now) {
  run_commands out;
  if (s >= flight_.restoring.size() || !flight_.restoring[s])
    return out;
  flight_.restoring[s] = false;
  if (phase_ == run_phase::init_shards) // (in place of its setup, unless that was answered)
    return shard_ready(s, now, version);
  if (restoring_any())
    return out;
  switch (phase_) {
    case run_phase::training:
      if (flight_.queued.any()) // (a periodic one first: the checkpoint a loss is restored from)
        request_save(flight_.queued.take(true), out);
      check_stop(now, out); // (a stop that waited for the evaluation the loss dropped)
      next_in_graph_step(out); // (the step a lost shard interrupted runs again)
      break;
    case run_phase::finishing:
      begin_finish(out);
      break;
    case run_phase::final_save:
      if (!flight_.save)
        final_save(out);
      break;
    default:
      break;
  }
  return out;
}

run_commands run_control::terminate(run_time now, const std::string& who) {
  run_commands out;
  const std::string what = who.empty() ? std::string{"stopped by SIGTERM"} : cat(who, " stopped by SIGTERM");
  if (phase_ == run_phase::init_shards || phase_ == run_phase::waiting)
    return fail(errc::terminated, cat(what, " before training began (waiting for ",
                                      phase_ == run_phase::waiting ? missing() : std::string{"the shards' setup"}, ")"));
  if (phase_ != run_phase::training)
    return out; // (already ending)
  out.push_back(run_command::log(cat(who.empty() ? "SIGTERM" : what, ": ending the run as at its limit")));
  begin_stop(what, now, out);
  return out;
}

} // namespace actorps
