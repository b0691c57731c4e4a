// The chief's state machine, part one: start-up, membership, progress, the stop and deadlines.
// (Part two, the work in flight and shard loss: run_control_ops.cpp.)
#include "control/run_control.hpp"

#include "common/log.hpp"

#include <algorithm>
#include <limits>
#include <cmath>

namespace actorps {

namespace {

using kind = run_command::kind;

constexpr std::chrono::milliseconds reminder{5000};

} // namespace

const char* to_string(run_phase p) {
  switch (p) {
    case run_phase::init_shards: return "init_shards";
    case run_phase::waiting: return "waiting";
    case run_phase::training: return "training";
    case run_phase::stopping: return "stopping";
    case run_phase::finishing: return "finishing";
    case run_phase::final_save: return "final_save";
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

namespace {

// A member whose process trains for the run (or has just finished it).
bool is_live(member m) {
  return m == member::registered || m == member::training || m == member::finished;
}

} // namespace

uint32_t run_control::live_workers() const {
  return static_cast<uint32_t>(std::count_if(members_.begin(), members_.end(), is_live));
}

bool run_control::all_reported() const {
  return std::all_of(members_.begin(), members_.end(), [](member m) {
    return m == member::finished || m == member::gone || m == member::left || m == member::admitted
           || m == member::absent;
  });
}

bool run_control::paused() const {
  return cfg_.elastic && phase_ == run_phase::training && live_workers() < cfg_.min_workers;
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

bool run_control::may_train(uint32_t j) const {
  return phase_ == run_phase::training && !paused() && j < members_.size() && members_[j] == member::training;
}

// Makes room for worker id j (elastic ids above the configured workers).
void run_control::grow(uint32_t j) {
  if (j >= members_.size()) {
    members_.resize(j + 1, member::absent);
    grants_.grow(j);
  }
}

// Logs and records a join, leave or crash with the new live count, and the pause it starts or ends.
void run_control::membership_changed(const char* event, uint32_t j, bool was_paused, run_time now,
                                     run_commands& out) {
  run_command c{kind::membership};
  c.text = event;
  c.index = j;
  c.workers = live_workers();
  c.step = steps_;
  out.push_back(std::move(c));
  if (!was_paused && paused()) {
    pause_deadline_ = now + cfg_.startup_timeout;
    out.push_back(run_command::log(cat("training paused: ", live_workers(), " live worker(s), cluster.min-workers is ",
                                       cfg_.min_workers, ": waiting for ", cfg_.min_workers - live_workers(),
                                       " more to join (cluster.startup-timeout)")));
    run_command t{kind::tick};
    t.after = reminder;
    out.push_back(std::move(t));
  } else if (was_paused && !paused() && phase_ == run_phase::training) {
    out.push_back(run_command::log(cat("training resumes with ", live_workers(), " workers")));
  }
}

std::string run_control::missing() const {
  if (phase_ == run_phase::init_shards)
    return cat(flight_.setups, " shard(s) to answer their setup");
  std::string out;
  for (uint32_t j = 0; j < members_.size(); ++j)
    if (members_[j] == member::absent)
      out += (out.empty() ? "" : ", ") + worker_name(j);
  return out;
}

int64_t run_control::worker_steps_at(int64_t global_step) const {
  return cfg_.mode == train_mode::sync ? global_step * cfg_.replicas_to_aggregate : global_step;
}

std::vector<uint32_t> run_control::members() const {
  std::vector<uint32_t> out;
  for (uint32_t j = 0; j < members_.size(); ++j)
    if (is_live(members_[j]))
      out.push_back(j);
  return out;
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

run_admission run_control::worker_registered(uint32_t j, run_time now) {
  run_admission out;
  // (elastic: a restarted chief takes back the joiners of the run it continues)
  bool rejoining_id = cfg_.elastic && j < cfg_.workers + cfg_.max_workers
                      && (phase_ == run_phase::init_shards || phase_ == run_phase::waiting);
  if (j >= members_.size() && !rejoining_id) {
    out.code = errc::unknown_worker;
    out.text = cat("worker ", j, " registered but cluster.workers lists ", cfg_.workers, " workers",
                   cfg_.elastic ? " (a joiner gets its id from node.join)" : "");
    return out;
  }
  grow(j);
  if (members_[j] == member::admitted && phase_ == run_phase::training) { // an elastic joiner
    if (live_workers() >= cfg_.max_workers) { // (admissions hold no place: the capacity counts here)
      members_[j] = member::absent;
      out.code = errc::cluster_full;
      out.text = cat("worker ", j, " registered after its join, but the job has ", live_workers(),
                     " workers and cluster.max-workers is ", cfg_.max_workers);
      return out;
    }
    start_member(j, "join", now, out);
    return out;
  }
  if (cfg_.max_steps > 0 && cfg_.workers / cfg_.slices == 1 && cfg_.mode != train_mode::sync && !cfg_.elastic)
    out.steps_left = std::max<int64_t>(0, cfg_.max_steps - steps_); // its steps are the global steps
  switch (phase_) {
    case run_phase::init_shards:
    case run_phase::waiting: {
      members_[j] = member::registered;
      if (phase_ == run_phase::waiting) {
        grant_first(j, out);
      } else if (cfg_.grant_steps > 0) { // the global step is known once every shard answered
        grant_at_start(j, out);           // (kept variables move it)
      }
      auto joined = std::count_if(members_.begin(), members_.end(), [](member m) { return m != member::absent; });
      out.then.push_back(run_command::log(cat("worker ", j, " registered (", joined, " of ", members_.size(), ")")));
      if (phase_ == run_phase::waiting && joined == static_cast<long>(members_.size()))
        start_training(now, out.then);
      return out;
    }
    case run_phase::training:
    case run_phase::stopping:
      if (members_[j] == member::gone && phase_ == run_phase::training) { // a restarted worker rejoins
        start_member(j, "rejoin", now, out);
        return out;
      }
      out.code = errc::protocol_error;
      out.text = members_[j] == member::gone ? cat(worker_name(j), " registered while the run is stopping")
                                             : cat(worker_name(j), " registered after training started, while worker ",
                                                   j, " is still a member");
      return out;
    default:
      out.code = errc::protocol_error;
      out.text = cat(worker_name(j), " registered after training ended");
      return out;
  }
}

// Worker j (an admitted joiner, or a restarted worker) trains from now on: its grant, the log
// line, the membership record (elastic) and its start.
void run_control::start_member(uint32_t j, const char* event, run_time now, run_admission& out) {
  bool was_paused = paused();
  members_[j] = member::training;
  grant_first(j, out);
  out.then.push_back(run_command::log(std::string{event} == "join"
                                        ? cat("worker ", j, " joined: ", live_workers(), " workers")
                                        : cat(worker_name(j), " rejoined")));
  if (cfg_.elastic)
    membership_changed(event, j, was_paused, now, out.then);
  run_command c{kind::start_worker};
  c.index = j;
  out.then.push_back(std::move(c));
}

run_admission run_control::worker_joining(run_time now) {
  run_admission out;
  // Joiners that never registered give their place back after join_register_deadline: a real
  // joiner registers a round trip after its admission, and forged joins filling the table kept
  // real joiners out for the whole request timeout.
  const auto deadline = std::min<std::chrono::milliseconds>(cfg_.request_timeout, join_register_deadline);
  for (auto it = admitted_at_.begin(); it != admitted_at_.end();) {
    if (members_[it->first] == member::admitted && now - it->second > deadline) {
      members_[it->first] = member::absent;
      out.then.push_back(run_command::log(cat("worker ", it->first, " never registered after its join; the id is free again")));
    }
    it = members_[it->first] == member::admitted ? std::next(it) : admitted_at_.erase(it);
  }
  if (!cfg_.elastic) {
    out.code = errc::unknown_worker;
    out.text = cat("a worker asked to join, but this cluster takes only the ", cfg_.workers,
                   " workers cluster.workers lists (set cluster.elastic for joins)");
    return out;
  }
  if (phase_ != run_phase::training) {
    out.code = errc::protocol_error;
    out.text = cat("a worker asked to join while the run is ", to_string(phase_), " (joins are taken while training)");
    return out;
  }
  // Admitted joiners hold no place (one that never registers keeps nobody out); they are
  // bounded apart, so that join requests alone cannot grow the member table.
  auto members = live_workers();
  auto pending = static_cast<uint32_t>(std::count(members_.begin(), members_.end(), member::admitted));
  if (members >= cfg_.max_workers || pending >= cfg_.max_workers) {
    out.code = errc::cluster_full;
    out.text = members >= cfg_.max_workers
                 ? cat("a worker asked to join, but the job has ", members, " workers and cluster.max-workers is ",
                       cfg_.max_workers)
                 : cat("a worker asked to join, but ", pending, " joiners have not registered yet (cluster.max-workers is ",
                       cfg_.max_workers, ")");
    return out;
  }
  // The lowest id above the configured ones that no member holds (a configured worker's id
  // stays its own: a restart of it registers under it again).
  uint32_t j = cfg_.workers;
  while (j < members_.size() && members_[j] != member::absent && members_[j] != member::left
         && members_[j] != member::gone)
    ++j;
  grow(j);
  members_[j] = member::admitted;
  admitted_at_[j] = now;
  out.index = j;
  out.then.push_back(run_command::log(cat("a worker joins as worker ", j)));
  return out;
}

run_commands run_control::worker_left(uint32_t j, run_time now) {
  run_commands out;
  if (j >= members_.size() || !is_live(members_[j]))
    return out;
  if (cfg_.mode == train_mode::model_parallel)
    return worker_down(j, "it left", now);
  bool was_paused = paused();
  members_[j] = member::left;
  grants_.release(j);
  out.push_back(run_command::log(cat(worker_name(j), " left: ", live_workers(), " workers")));
  if (phase_ == run_phase::training || phase_ == run_phase::stopping)
    membership_changed("leave", j, was_paused, now, out);
  if (live_workers() == 0 && !cfg_.elastic && phase_ == run_phase::training)
    return fail(errc::peer_unreachable, cat("every worker left (the last: ", worker_name(j), ")"));
  for (uint32_t k = 0; phase_ == run_phase::training && k < members_.size(); ++k)
    if (members_[k] == member::training)
      top_up(k, out);
  if (cfg_.max_steps > 0 && live_workers() > 0) // (the others stopped at the step limit: so does the run)
    stop_if_all_stopped(out);
  if (phase_ == run_phase::stopping && all_reported())
    begin_finish(out);
  return out;
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


run_commands run_control::worker_down(uint32_t j, const std::string& why, run_time now, errc code) {
  run_commands out;
  if (j >= members_.size() || phase_ == run_phase::done)
    return out;
  auto& m = members_[j];
  if (m == member::absent || m == member::finished || m == member::gone || m == member::left)
    return out;
  grants_.release(j); // its steps go back to the pool
  if (phase_ == run_phase::init_shards || phase_ == run_phase::waiting) {
    m = member::absent;
    out.push_back(run_command::log(cat(worker_name(j), " went down before training started (", why,
                              "); waiting for it to register again")));
    return out;
  }
  if (phase_ != run_phase::training && phase_ != run_phase::stopping) {
    m = member::gone; // the run no longer needs it
    return out;
  }
  if (code == errc::non_finite)
    return fail(errc::non_finite, cat("training diverged: ", worker_name(j), " went down (", why, ")"));
  if (cfg_.mode == train_mode::model_parallel)
    return fail(errc::peer_unreachable, cat("lost a worker: ", worker_name(j), " went down (", why,
                                            "); in model-parallel mode its group cannot go on without its slice"));
  bool was_paused = paused();
  m = member::gone;
  ++workers_lost_;
  auto live = live_workers();
  if (cfg_.elastic)
    membership_changed("crash", j, was_paused, now, out);
  if (live == 0 && !cfg_.elastic)
    return fail(errc::peer_unreachable, cat("lost every worker: ", worker_name(j), " went down (", why, ")"));
  out.push_back(run_command::log(cat(worker_name(j), " went down (", why, "); training goes on with ", live,
                            " worker(s)", j < cfg_.workers ? cat("; a restarted worker ", j, " rejoins") : std::string{})));
  for (uint32_t k = 0; phase_ == run_phase::training && k < members_.size(); ++k)
    if (members_[k] == member::training) // a worker waiting for a grant takes the lost one's steps
      top_up(k, out);
  // (ssp: the others had stopped out of steps; nobody takes the lost one's. Elastic with nobody
  // left: training pauses for joiners instead.)
  if (cfg_.max_steps > 0 && (!cfg_.elastic || live_workers() > 0) && !cfg_.in_graph)
    stop_if_all_stopped(out);
  if (phase_ == run_phase::stopping && all_reported())
    begin_finish(out);
  return out;
}

// An admitted worker's first grant, in its welcome.
void run_control::grant_first(uint32_t j, run_admission& out) {
  if (cfg_.grant_steps == 0)
    return;
  if (cfg_.slices > 1)
    return grant_at_start(j, out);
  grants_.release(j);
  out.steps_left = grants_.grant(j, steps_, examples_);
  out.more = !grants_.out_of_steps(j, steps_); // (ssp: nothing left for it: it stops at once)
}

// Keeps worker j's grant full while steps are left, so it never waits on the chief but at the end.
// A welcome whose grant comes at the start (the global step is known once every shard answered;
// model-parallel: once the group is complete). Model-parallel: a group's grant goes to its first
// slice, whose reports count the group's steps; the others take no limit and follow it through
// their exchange (they wait for its parts, and stop where it stops).
void run_control::grant_at_start(uint32_t j, run_admission& out) {
  const bool follows = cfg_.slices > 1 && j % cfg_.slices != 0;
  out.steps_left = follows ? -1 : 0;
  out.more = !follows;
}

void run_control::top_up(uint32_t j, run_commands& out) {
  if (cfg_.grant_steps == 0 || j % cfg_.slices != 0) // (model-parallel: the group's first slice)
    return;
  if (auto give = grants_.grant(j, steps_, examples_); give > 0) {
    run_command c{kind::grant};
    c.index = j;
    c.step = give;
    out.push_back(std::move(c));
  } else if (grants_.out_of_steps(j, steps_)) {
    run_command c{kind::stop_worker};
    c.index = j;
    out.push_back(std::move(c));
  }
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
