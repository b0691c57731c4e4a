// The single-process trainer: the baseline every distributed mode is measured against.
// Loads the data, trains the model on one backend, evaluates, stops, writes the run's files.
#pragma once

#include "config/train_options.hpp"
#include "train/run_monitor.hpp"

#include <caf/expected.hpp>


namespace actorps {

/// Trains with settings s, printing progress lines to stderr (tag "train").
/// Fails with a named error for bad data, an unusable device, unwritable run files, or divergence.
caf::expected<run_summary> train_single_process(const train_settings& s);

} // namespace actorps
