// The single-process trainer: the baseline every distributed mode is measured against.
// Loads the data, trains the model on one backend, evaluates, stops, writes the run's files.
#pragma once

#include "config/train_options.hpp"

#include <caf/expected.hpp>

#include <optional>
#include <string>

namespace actorps {

/// What a finished run reports (also written to summary.json).
struct run_summary {
  std::string backend;
  double test_accuracy = 0.0;       ///< of the model with the lowest validation loss
  double test_loss = 0.0;
  double final_test_accuracy = 0.0; ///< of the model as it was when training stopped
  double best_validation_accuracy = 0.0;
  double best_validation_loss = 0.0;
  double wall_seconds = 0.0;        ///< training wall time, evaluations included, loading excluded
  double train_seconds = 0.0;       ///< time spent in training steps only
  double examples_per_second = 0.0; ///< training examples / train_seconds
  int64_t steps = 0;
  double epochs = 0.0;
  std::optional<double> seconds_to_target;
  std::string stop_reason;
};

/// Trains with settings s, printing progress lines to stderr (tag "train").
/// Fails with a named error for bad data, an unusable device, unwritable run files, or divergence.
caf::expected<run_summary> train_single_process(const train_settings& s);

} // namespace actorps
