// Evaluation bookkeeping shared by the single-process trainer and the chief: evaluates the model
// on validation and test, writes metrics rows, feeds the stop rule, keeps the parameters with the
// lowest validation loss, and writes the summary.
#pragma once

#include "checkpoint/checkpoint_format.hpp"
#include "common/json.hpp"
#include "config/train_options.hpp"
#include "data/dataset.hpp"
#include "model/network.hpp"
#include "train/run_log.hpp"
#include "train/stop_rule.hpp"
#include "observe/telemetry.hpp"

#include <caf/expected.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace actorps {

/// What a finished run reports (also written to summary.json).
struct run_summary {
  std::string mode;
  std::string backend;
  double test_accuracy = 0.0;       ///< of the model with the lowest validation loss
  double test_loss = 0.0;
  double final_test_accuracy = 0.0; ///< of the model as it was when training stopped
  double final_test_loss = 0.0;
  double best_validation_accuracy = 0.0;
  double best_validation_loss = 0.0;
  double wall_seconds = 0.0;        ///< training wall time, evaluations included, loading excluded
  double train_seconds = 0.0;       ///< time in training steps (single process); cluster: from the start to
                                    ///< the last worker's report (its concurrent evaluations in, the final one out)
  double examples_per_second = 0.0; ///< training examples of this run / train_seconds
  int64_t resumed_examples = 0;     ///< examples a restored checkpoint had already trained (not in the rate)
  double resumed_seconds = 0.0;     ///< seconds the runs before a restore had trained (in the times, not the rate)
  int64_t steps = 0;
  double epochs = 0.0;
  std::optional<double> seconds_to_target;
  std::string stop_reason;
  std::string final_model; ///< where the final model was saved ("" when train.save-model skips it)
  std::string best_model;  ///< where the best-validation model was saved ("" likewise)
};

/// Threading: one owner (the trainer's thread or the chief actor).
class run_monitor {
public:
  /// Starts the wall clock. net evaluates (its max_batch is the evaluation batch); data supplies
  /// the validation and test sets and the training-set size that defines an epoch.
  run_monitor(const train_settings& s, std::string mode, network& net, const data_splits& data,
              run_log log);

  /// Evaluates net's current parameters after `step` global steps and `examples` examples; the
  /// metrics row gets the fields of `extra` too, and `train_loss` (the mean training loss since
  /// the previous evaluation, where measured), which train.early-stopping-metric may watch.
  /// REQUIRES: net's running metrics are empty.
  /// `whole` false: net holds only what the validation and test sets read (a cluster's
  /// evaluation by an embedding table's rows); a new best model to keep is then due, and the
  /// caller reads the whole model and calls keep_best().
  caf::error evaluate(int64_t step, int64_t examples, const json_object& extra = json_object{},
                      std::optional<double> train_loss = std::nullopt, bool whole = true);

  /// Whether the last evaluation (not whole) found a best model that keep_best() should keep.
  bool best_due() const { return due_.has_value(); }
  /// Keeps net's parameters (the whole model, read since) as the best model the last evaluation
  /// found, with its own validation and test figures (the step is the evaluation's).
  caf::error keep_best();

  /// Publishes the whole model the caller has written (checkpoint/staged_model) as the kept model
  /// at path with manifest m; returns the path.
  using model_publisher = std::function<caf::expected<std::string>(const std::string& path, const checkpoint_manifest& m)>;
  /// A cluster whose net holds an embedding table's evaluation rows only: `spec` is the run's
  /// model (the summary's and the kept models'), and the kept models are published through
  /// `publish` (the caller has written the whole model, read since, before every keep_best() and
  /// the final evaluation) instead of copied out of net: the best one when found, the final
  /// one by finish().
  void models_published_by(model_spec spec, model_publisher publish);

  /// The folder the kept models go to (<run-dir>/<name>/model), created.
  caf::expected<std::string> model_folder() const;

  /// Every evaluation also goes to t as the scalars validation/loss, validation/accuracy,
  /// test/loss, test/accuracy and train/loss (when measured), at the evaluation's step.
  void report_to(std::shared_ptr<telemetry> t) { telemetry_ = std::move(t); }

  /// Appends an event row (a join, a leave, an epoch's example count) to metrics.jsonl, with
  /// the seconds since the start.
  caf::error record(json_object row);

  /// Returns the reason to stop, if any, after `step` steps and `examples` examples.
  std::optional<std::string> should_stop(int64_t step, int64_t examples) const;

  /// Returns examples / training-set size.
  double epochs(int64_t examples) const;

  /// Returns the step of the last evaluation (-1 before the first).
  int64_t last_evaluated_step() const { return last_step_; }

  /// Returns whether the last evaluation had the lowest validation loss so far (a new best model).
  bool last_improved() const { return last_improved_; }

  /// Returns the validation accuracy of the last evaluation.
  double last_validation_accuracy() const { return last_validation_accuracy_; }

  /// Returns seconds since construction.
  double seconds() const;
  /// A run resumed from a checkpoint: its clock starts at the seconds the runs before it took.
  void resume(double seconds) { resumed_ = seconds; }

  /// Evaluates the final model on the test set, saves the final and best models as
  /// train.save-model says (<run-dir>/<name>/model/final and .../best, checkpoint format), and
  /// writes summary.json from `partial` (steps, stop_reason, backend, train_seconds and examples
  /// filled in by the caller) plus `extra` fields. Returns the completed summary. The best
  /// validation model's parameters are kept (a copy of the model: of an embedding table too)
  /// only where it is to be saved; its test figures are those of the evaluation that found it.
  caf::expected<run_summary> finish(run_summary partial, int64_t examples, const json_object& extra);

private:
  const train_settings& settings_;
  std::string mode_;
  network& net_;
  const data_splits& data_;
  run_log log_;
  stop_rule rule_;
  std::shared_ptr<telemetry> telemetry_;
  caf::expected<std::string> save_model(const char* which, std::vector<std::vector<float>> values, int64_t step,
                                        double validation_accuracy);
  // The manifest of a kept model taken at step with that validation accuracy.
  checkpoint_manifest kept_manifest(int64_t step, double validation_accuracy) const;
  // Publishes the written model as <model folder>/<which> (models_published_by).
  caf::expected<std::string> publish_model(const char* which, int64_t step, double validation_accuracy);
  const model_spec& spec() const { return spec_ ? *spec_ : net_.spec(); }

  // Whether train.save-model writes the best validation model (its parameters are then kept).
  bool keeps_best_model() const;

  // The best validation model: its figures, and its parameters where they are kept.
  struct best_model {
    int64_t step = 0;
    double validation_accuracy = 0.0;
    batch_metrics test;
  };
  /// Keeps b as the best model: its figures, and net's parameters where they are to be saved.
  caf::error keep(const best_model& b);
  struct set_figures {
    batch_metrics validation, test;
  };
  /// net's figures on the validation and the test set.
  caf::expected<set_figures> evaluate_sets();

  std::optional<model_spec> spec_;  // models_published_by
  model_publisher publish_;
  std::string best_path_;           // the best model published (models_published_by)
  std::vector<std::vector<float>> best_params_;
  std::optional<batch_metrics> best_test_; // the best validation model's test figures
  int64_t best_step_ = 0;
  double best_validation_accuracy_ = 0.0;
  std::optional<best_model> due_; // found by an evaluation that was not whole: kept by keep_best()
  int64_t last_step_ = -1;
  bool last_improved_ = false;
  double last_validation_accuracy_ = 0.0;
  std::chrono::steady_clock::time_point start_;
  double resumed_ = 0.0;
};

} // namespace actorps
