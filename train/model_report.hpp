// What a run says about its data and model: loading the configured data (with the label check
// against the model's classes), the layer-by-layer start-up table, and the model's summary.json
// fields. Shared by the single-process trainer and the cluster nodes.
#pragma once

#include "common/json.hpp"
#include "config/train_options.hpp"
#include "data/dataset.hpp"

#include <caf/expected.hpp>

#include <string>
#include <vector>

namespace actorps {

/// Loads s.data, logs what was loaded under tag, and checks that every label is a class of
/// s.model; errors name the directory.
caf::expected<data_splits> load_training_data(const train_settings& s, const std::string& tag);

/// Returns the start-up table: one line per layer with its output shape and parameter count,
/// then the total, e.g. "  1  conv 3x3x32 relu     28x28x32      320".
std::vector<std::string> model_table(const model_spec& spec);

/// Logs the preset and model_table(spec) under tag.
void log_model(const std::string& tag, const train_settings& s, const model_spec& spec);

/// Adds "preset", "input", "layers" (texts) and "parameters" to a summary.
void add_model(json_object& out, const std::string& preset, const model_spec& spec);

} // namespace actorps
