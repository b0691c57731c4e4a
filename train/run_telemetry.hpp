// A node's telemetry for a run (observe/telemetry): its event folder
// <run-dir>/<name>/tensorboard/<node>/ when train.tensorboard is on, its Prometheus labels (run,
// role, index), and the run's configuration as the text summary "config". Shared by the
// single-process trainer and every cluster role.
#pragma once

#include "config/train_options.hpp"
#include "observe/telemetry.hpp"

#include <caf/expected.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace actorps {

/// The node's folder name: "chief", "trainer", or role-index ("worker-1", "ps-0").
std::string node_name(const std::string& role, uint32_t index);

/// Opens the node's telemetry and writes the configuration text (the model table, the
/// optimizer, batch and seed, and `more` rows, e.g. the cluster's mode and size). Errors:
/// file_error naming the event folder.
caf::expected<std::shared_ptr<telemetry>> open_run_telemetry(const train_settings& s, const std::string& role,
                                                             uint32_t index,
                                                             const std::vector<std::pair<std::string, std::string>>& more = {});

/// The progress scalars every trainer and the chief write: "examples/sec", "global_step/sec",
/// "loss" (the mean since the last progress line) and "learning_rate" at update `step`; and
/// the gauge actorps_global_step.
void report_progress(telemetry& t, const optimizer_params& opt, int64_t step, double examples_per_sec,
                     double steps_per_sec, double loss);

} // namespace actorps
