// The chief's run as a state machine without CAF: phases, membership, the global step, what is
// in flight, and the failure policy. One method per input returns the commands the Chief actor
// carries out (docs/architecture.md draws the machine). Single-threaded.
#pragma once

#include "common/errc.hpp"
#include "control/train_mode.hpp"
#include "control/loss_mean.hpp"
#include "control/progress_lines.hpp"
#include "control/step_grants.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace actorps {

/// The chief's phases, in the order a run passes through them.
enum class run_phase { init_shards, waiting, training, stopping, final_save, finishing, done };

const char* to_string(run_phase p);

/// What the controller knows of each worker id. admitted: an elastic joiner was given the id and
/// has not registered yet; left: it left cleanly (SIGTERM); gone: its process went down.
enum class member { absent, admitted, registered, training, finished, gone, left };

const char* to_string(member m);

/// Time as the actor's clock tells it (CAF's actor_clock is a steady clock; tests drive it).
using run_time = std::chrono::steady_clock::time_point;

/// Everything the run's rules depend on.
struct run_control_config {
  uint32_t workers = 1;
  uint32_t shards = 1;
  train_mode mode = train_mode::async;
  uint32_t replicas_to_aggregate = 1; ///< sync
  uint32_t slices = 1;                ///< model-parallel
  /// train.replication = in-graph: the chief drives the steps (in_graph_step commands, chief_step()
  /// inputs); workers only report at their stop. (mode sync, replicas_to_aggregate 1: one update
  /// per global step.)
  bool in_graph = false;
  /// cluster.elastic: workers join (ids from `workers` up) and leave while training; below
  /// min_workers live workers training pauses (no data leases), a join above max_workers is
  /// refused. Sync steps are counted from the workers' reported global steps.
  bool elastic = false;
  uint32_t min_workers = 1;
  uint32_t max_workers = 1;
  int64_t max_steps = 0;              ///< 0: no step limit (see step_budget)
  /// max_steps is max-epochs' step budget (step_budget). Without worker_budgets it is an
  /// estimate: grants go on past it until the stop rule says the epochs are done.
  bool budget_from_epochs = false;
  /// Per worker, the steps its partition's epochs take (worker_step_budgets): no grant goes past
  /// them, so each worker reads its own partition exactly max_epochs times (empty: a shared pool).
  std::vector<int64_t> worker_budgets;
  /// > 0: async workers get their steps as grants of up to this many (see worker_welcome::more),
  /// so a run ends at exactly max_steps and workers stop when the chief stops answering.
  int64_t grant_steps = 0;
  int64_t train_rows = 1;             ///< examples per epoch
  int64_t progress_every = 100;       ///< a progress line every N global steps
  int64_t eval_every = 0;             ///< also evaluate every N global steps (0: none)
  int eval_every_epochs = 1;          ///< evaluate every K epochs (0: none)
  bool checkpoints = false;           ///< checkpoint.dir is set
  bool shards_recoverable = false;    ///< a lost shard can be reached again and restored
  int64_t checkpoint_every_steps = 0;
  double checkpoint_every_seconds = 0.0;
  std::chrono::milliseconds startup_timeout{120000};
  std::chrono::milliseconds request_timeout{60000};
  std::vector<std::string> worker_names; ///< for log lines, e.g. "worker 1 at h:p" (default "worker j")
  std::vector<std::string> shard_names;  ///< likewise, e.g. "shard 0 at h:p"
  /// The stop rule (limits, target accuracy, early stopping): a reason after `steps` global steps
  /// and `examples` examples, or nullopt. Empty: max_steps only.
  std::function<std::optional<std::string>(int64_t steps, int64_t examples)> should_stop;
};

/// One thing for the actor to do. Work that answers (evaluate, save, finish) carries an op id;
/// the answer names it, and answers for an op the controller abandoned are ignored.
struct run_command {
  enum class kind {
    start_workers,  ///< start every worker (model-parallel: in groups of `slices`)
    start_worker,   ///< `index`: start a worker that rejoined
    in_graph_step,  ///< in-graph: run the next step (the chief's driver; then chief_step())
    grant,          ///< `index`: grant worker `index` `step` more steps
    stop_workers,   ///< tell every live worker to stop
    stop_worker,    ///< `index`: tell worker `index` to stop (ssp: no steps left for it)
    evaluate,       ///< `op`: read counters, pull the model, evaluate at `step`/`examples`
    save,           ///< `op`: snapshot every shard and write a checkpoint (`best`: the best model)
    restore_shard,  ///< `index`: reconnect to shard `index`'s restart and restore it
    finish,         ///< `op`: read counters, pull the final model, evaluate, write the summary
    quit,           ///< the run is over: stop the shards and quit normally
    fail,           ///< the run failed with `code` and `text`: stop everyone and quit with it
    log,            ///< `text`: a log line
    tick,           ///< ask for tick() after `after`
    membership,     ///< `text` (join, leave, crash) of worker `index`: record it with `workers` live
  };
  explicit run_command(kind k) : what(k) {}
  kind what;
  uint32_t index = 0;
  uint64_t op = 0;
  bool best = false;
  int64_t step = 0;
  int64_t examples = 0;
  std::optional<double> train_loss; ///< evaluate, finish: the mean training loss since the last evaluation
  uint32_t workers = 0;             ///< membership: live workers after the change
  errc code = errc::none;
  std::string text;
  std::chrono::milliseconds after{0};
  std::optional<progress_figures> figures; ///< log: a progress line's figures

  static run_command log(std::string text) {
    run_command c{kind::log};
    c.text = std::move(text);
    return c;
  }
  static run_command for_op(kind k, uint64_t op) {
    run_command c{k};
    c.op = op;
    return c;
  }
};

using run_commands = std::vector<run_command>;

/// The epoch count at which the next per-epoch evaluation is due after `epochs` epochs: the next
/// multiple of `every` above it (infinity when every is 0: no per-epoch evaluations).
double next_epoch_evaluation(double epochs, int every);

/// The size of the step grants (run_control_config::grant_steps) for a run: async, ssp and
/// model-parallel workers with a step limit get their steps in grants of twice the report
/// interval (ssp: at most max_steps / workers; model-parallel: a group's first slice, which the
/// others follow),
/// so the run ends at exactly max_steps, also across a chief restart; 0 (no grants) otherwise.
/// Sync workers stop by themselves at the global step limit.
int64_t grant_steps_for(train_mode mode, int64_t max_steps, uint32_t workers, int report_every);

/// The global steps a between-graph run of `workers` may take: max_steps (0: none) and the steps
/// max_epochs take, whichever is smaller; 0: no limit. Each worker reads its partition
/// (partition_range) exactly max_epochs times, in batches whose last per pass is partial
/// (worker_step_budgets): async and ssp take the sum of the workers' batches, sync (every
/// worker's batch in each step) the most of them; sync with backup workers (replicas_to_aggregate
/// < workers) counts aggregated examples, ceil(max_epochs x train_rows / (batch x
/// replicas_to_aggregate)), as no worker's share of the steps is known ahead.
int64_t step_budget(train_mode mode, int64_t max_steps, int max_epochs, int64_t train_rows, int batch,
                    uint32_t replicas_to_aggregate, uint32_t workers);

/// Per worker j, max_epochs x the batches of its partition: the steps it may take so that every
/// example is trained on exactly max_epochs times (the chief's grants in async and ssp, the
/// worker's own stop in sync). Empty where epochs are not counted per worker (no max_epochs,
/// model-parallel, sync with backup workers).
std::vector<int64_t> worker_step_budgets(train_mode mode, int max_epochs, int64_t train_rows, int batch,
                                         uint32_t replicas_to_aggregate, uint32_t workers);

/// The answer to a registration: refused (code and text) or accepted (steps_left for the welcome).
struct run_admission {
  errc code = errc::none;
  std::string text;
  int64_t steps_left = -1;
  bool more = false; ///< steps_left is a grant: more follow as the worker reports
  uint32_t index = 0; ///< worker_joining(): the id the joiner was given
  run_commands then;
};

/// Threading: one owner (the Chief actor).
class run_control {
public:
  explicit run_control(run_control_config cfg);

  run_phase phase() const { return phase_; }
  /// What the controller knows of `worker` (absent: an id it never gave).
  member status(uint32_t worker) const { return worker < members_.size() ? members_[worker] : member::absent; }
  /// Steps granted to `worker` that it has not reported yet (0 without grants).
  int64_t granted(uint32_t worker) const { return grants_.granted(worker); }
  int64_t steps() const { return steps_; }
  int64_t worker_steps() const { return worker_steps_; }
  /// Sync: the workers' steps every shard dropped as stale, and those only some shards dropped.
  int64_t stale_steps() const { return stale_steps_; }
  int64_t split_steps() const { return split_steps_; }
  int64_t examples() const { return examples_; }
  int64_t workers_lost() const { return workers_lost_; }
  const std::string& stop_reason() const { return stop_reason_; }
  /// Seconds trained so far (by the clock of the inputs), from the start of training, with those
  /// of the runs before a resume. Once every worker has reported (finishing and after) the clock
  /// stands at the last report: the final evaluation and save are not training time.
  double seconds(run_time now) const;
  /// Whether the answer for `op` is still wanted (the op was not abandoned).
  bool wanted(uint64_t op) const;
  /// The names of log lines: "worker 1 at h:p" (run_control_config::worker_names), "shard 0 at h:p".
  std::string worker_name(uint32_t j) const;
  std::string shard_name(uint32_t s) const;
  /// Returns the peers the start-up still waits for, e.g. "worker 1, worker 2".
  std::string missing() const;

  /// Resumes the global step, data position and training seconds of a checkpoint; elastic, with
  /// the members the checkpoint recorded: the start waits for these ids (joiners included), not
  /// for configured workers that had left. REQUIRES: before training.
  void resume(int64_t global_step, int64_t examples, double seconds = 0.0, const std::vector<uint32_t>& members = {});
  /// The live worker ids (registered or training).
  std::vector<uint32_t> members() const;

  /// The run begins: every shard has been sent its setup.
  run_commands begin(run_time now);
  /// Shard s answered its setup; kept_version > 0: it holds the scope's variables at that
  /// version -- kept (a session attaching to a scope, or a restarted chief) or, after resume(),
  /// set up from the checkpoint's snapshot (which holds the updates applied when it was taken,
  /// reported or not). Training continues at the global step the variables are at (the highest
  /// version over the shards, divided by the slices) when it is past the checkpoint's.
  run_commands shard_ready(uint32_t s, run_time now, uint64_t kept_version = 0);
  /// The global step the run continued at from kept variables (-1: none).
  int64_t attached_step() const { return attached_step_; }
  /// Worker j registers (new, restarted after it went down, or an admitted joiner).
  run_admission worker_registered(uint32_t j, run_time now);
  /// Elastic: a worker outside the configured list asks to join; on success `index` is its id
  /// (member admitted until it registers; an admitted id not registered within
  /// join_register_deadline, at most cluster.request-timeout, is free again). Errors:
  /// unknown_worker (not elastic), cluster_full, protocol_error (not training).
  run_admission worker_joining(run_time now);

  /// How long an admitted joiner has to register before its id is free again.
  static constexpr std::chrono::milliseconds join_register_deadline{10000};
  /// Worker j left cleanly (its lease reports are in); the run goes on without it.
  run_commands worker_left(uint32_t j, run_time now);
  /// Live workers (registered or training).
  uint32_t live() const { return live_workers(); }
  /// Elastic: training with fewer live workers than cluster.min-workers (no data is handed out).
  bool paused() const;
  /// Elastic: whether worker j may take data now (the run trains, is not paused, and j is a
  /// training member); else it is told to wait.
  bool may_train(uint32_t j) const;
  /// A progress report of worker j; `global_step`: the step it is at (sync; -1: not given);
  /// `stale`, `split`: its steps every shard / some shards dropped as stale (sync).
  run_commands progress(uint32_t j, int64_t steps, int64_t examples, double loss_sum, bool final, run_time now,
                        int64_t global_step = -1, int64_t stale = 0, int64_t split = 0);
  /// In-graph: the chief's step was applied on every shard: `examples` rows, their losses' sum.
  run_commands chief_step(int64_t examples, double loss_sum, run_time now);
  /// Whether a shard is being restored (in-graph: no step may run).
  bool restoring() const { return restoring_any(); }
  /// Worker j's actor went down (elastic: below cluster.min-workers training pauses from `now`);
  /// `code`: the error it quit with. non_finite (training diverged) fails the run at once: every
  /// worker trains the same model and would diverge too.
  run_commands worker_down(uint32_t j, const std::string& why, run_time now = run_time{}, errc code = errc::none);
  /// Shard s's actor went down.
  run_commands shard_down(uint32_t s, const std::string& why);
  /// Shard s was restored after it went down, at `version` (counted as its setup's when it went
  /// down while a resumed chief set the shards up).
  run_commands shard_restored(uint32_t s, uint64_t version = 0, run_time now = run_time{});
  /// The setup request to shard s failed: the run fails, unless the shard went down and its
  /// restore takes the setup's place.
  run_commands setup_failed(uint32_t s, errc code, const std::string& what);
  /// An evaluate, save, finish, setup or restore failed (`op` 0: no op, e.g. a setup or restore).
  /// A periodic evaluation while training is skipped, logged, and training goes on (its reads
  /// waited past cluster.request-timeout on a shard that stalled -- frozen, suspended, swapped
  /// out -- and may answer the next one; a stop the evaluation was to take is taken at `now`),
  /// up to max_failed_evaluations in a row; the final evaluation's failure fails the run.
  run_commands failed(uint64_t op, errc code, const std::string& what, run_time now = run_time{});
  /// Periodic evaluations that may fail in a row before the run fails with the last one's error.
  static constexpr int max_failed_evaluations = 3;
  /// The evaluation `op` ended; `improved`: a new best validation loss.
  run_commands evaluated(uint64_t op, bool improved, run_time now);
  /// The save `op` ended (written, or failed and logged by the actor).
  run_commands saved(uint64_t op);
  /// The summary `op` was written.
  run_commands finished(uint64_t op);
  /// A tick the controller asked for.
  run_commands tick(run_time now);
  /// SIGTERM on the chief's node (`who` empty) or on a node it needs (`who`, e.g. "shard 1",
  /// which serves until the run's end stops it). Training: the run ends as at its limit (the
  /// workers are told to stop; final reports, evaluation, checkpoint and summary follow; stop
  /// reason "stopped by SIGTERM" or "shard 1 stopped by SIGTERM"). Before training: fails with
  /// terminated. Later phases: already ending, nothing.
  run_commands terminate(run_time now, const std::string& who = "");

private:
  /// The start-up's and the pause's reminders (whom the run waits for) come this often.
  static constexpr std::chrono::milliseconds reminder{5000};

  struct save_op {
    uint64_t op;
    bool best;
  };
  struct in_flight {
    uint32_t setups = 0;               ///< shard setups not answered yet
    std::vector<bool> set_up;          ///< per shard: its setup (or the restore in its place) answered
    std::optional<uint64_t> evaluation;
    std::optional<save_op> save;       ///< a periodic, best or final save
    /// Saves due while another ran (or a shard was restored), one of each kind at most: they run
    /// after it, the kind that did not run last first.
    struct queued_saves {
      bool periodic = false;
      bool best = false;
      bool any() const { return periodic || best; }
      /// Takes the one to run next (after a best save: a periodic one first).
      bool take(bool best_ran_last);
    } queued;
    std::optional<uint64_t> summary;   ///< the finish op
    std::vector<bool> restoring;       ///< per shard
  };

  bool restoring_any() const;
  void grow(uint32_t j);
  void start_member(uint32_t j, const char* event, run_time now, run_admission& out);
  void membership_changed(const char* event, uint32_t j, bool was_paused, run_time now, run_commands& out);
  uint32_t live_workers() const;
  bool all_reported() const;
  run_commands fail(errc code, std::string text);
  void start_training(run_time now, run_commands& out);
  void begin_stop(std::string reason, run_time now, run_commands& out);
  void check_stop(run_time now, run_commands& out);
  void stop_if_all_stopped(run_commands& out);
  void count(int64_t examples, double loss_sum, run_time now, run_commands& out);
  void next_in_graph_step(run_commands& out);
  void maybe_evaluate(run_time now, run_commands& out);
  void maybe_checkpoint(run_time now, run_commands& out);
  void request_save(bool best, run_commands& out);
  void begin_finish(run_commands& out);
  void final_save(run_commands& out);
  void arm(run_time now, std::chrono::milliseconds in, run_commands& out);
  void grant_first(uint32_t j, run_admission& out);
  void grant_at_start(uint32_t j, run_admission& out);
  void top_up(uint32_t j, run_commands& out);

  run_control_config cfg_;
  run_phase phase_ = run_phase::init_shards;
  std::vector<member> members_;
  step_grants grants_;
  in_flight flight_;
  uint64_t next_op_ = 1;
  run_time deadline_{};
  run_time pause_deadline_{};    ///< paused(): the run fails if still paused then
  int64_t reported_step_ = 0;   ///< elastic sync: the highest global step a worker reported
  std::map<uint32_t, run_time> admitted_at_; ///< joiners given an id and not registered yet
  run_time train_start_{};
  run_time last_report_{}; ///< the last counted report (where the training clock stops)
  int64_t steps_ = 0;
  int64_t worker_steps_ = 0;
  int64_t stale_steps_ = 0;
  int64_t split_steps_ = 0;
  int64_t examples_ = 0;
  int64_t workers_lost_ = 0;
  loss_mean eval_loss_; ///< the training loss reported since the previous evaluation
  int failed_evaluations_ = 0; ///< periodic evaluations failed in a row (failed())
  progress_lines lines_;
  double next_eval_epoch_ = 1.0;
  int64_t next_eval_step_ = 0;
  int64_t next_save_step_ = 0;
  double next_save_seconds_ = 0.0;
  std::string stop_reason_;
  std::optional<std::string> stop_at_start_; // a restarted run that had reached its limit: stop the workers as they come
  double resumed_seconds_ = 0.0;
  // Worker steps (the sum of the reports) at a global step.
  int64_t worker_steps_at(int64_t global_step) const;
  bool resumed_ = false;       ///< resume() was called (a checkpoint decides the global step)
  int64_t attached_step_ = -1; ///< from the shards' kept versions
  int64_t kept_ahead_ = -1;    ///< resumed: the highest step the shards kept (a restarted chief)
};

} // namespace actorps
