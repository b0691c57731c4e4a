// When training stops: step and epoch limits, a target accuracy, and early stopping on the
// validation loss or the training loss. Plain logic, shared by the single-process trainer and the
// chief.
#pragma once

#include "config/train_options.hpp"
#include "control/loss_mean.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace actorps {

/// The limits a run stops at (0 disables each).
struct stop_limits {
  int64_t max_steps = 0;
  int max_epochs = 0;
  double target_accuracy = 0.0;
  int patience = 0;
  double max_seconds = 0.0;
  stop_metric metric = stop_metric::validation_loss; ///< what patience watches
};

/// Tracks evaluations and progress and says when and why to stop.
class stop_rule {
public:
  explicit stop_rule(stop_limits limits) : limits_(limits) {}

  /// Records an evaluation at wall time t (seconds), with the mean training loss since the
  /// previous evaluation where one was measured. Returns true when it is the best validation
  /// loss so far (the model worth keeping, whatever the metric). Patience counts evaluations
  /// without a lower value of limits.metric; an evaluation without a training loss does not
  /// improve the train-loss metric.
  bool observe_evaluation(double validation_loss, double validation_accuracy, double t,
                          std::optional<double> train_loss = std::nullopt);

  /// Returns the reason to stop after `steps` steps, `epochs` epochs and `seconds` of training,
  /// or nullopt.
  std::optional<std::string> should_stop(int64_t steps, double epochs, double seconds = 0.0) const;

  double best_validation_loss() const { return best_loss_; }
  double best_validation_accuracy() const { return best_accuracy_; }

  /// Returns the wall time at which the target accuracy was first reached, if it was.
  std::optional<double> seconds_to_target() const { return target_time_; }

private:
  stop_limits limits_;
  double best_loss_ = 1e300;
  double best_metric_ = 1e300;
  double best_accuracy_ = 0.0;
  int since_best_ = 0;
  std::optional<double> target_time_;
};

} // namespace actorps
