// The data set a run trained on, as its summary.json records it, and the check that a data set
// an evaluation reads has the model's classes: actorps-eval of a model trained on MNIST's digits
// read Fashion-MNIST by default and scored 11% under the digits' names, without a word.
#pragma once

#include "data/data_source.hpp"

#include <caf/error.hpp>

#include <optional>
#include <string>
#include <vector>

namespace actorps {

/// Returns the data set (dir, format, validation size) recorded in the summary.json of the run
/// that holds the model at model_path (the run directory itself, its model/ directory or a
/// checkpoint in it); nullopt when there is none (an .npz, a run that never finished) or it
/// records no data set.
std::optional<data_settings> recorded_data(const std::string& model_path);

/// Returns shape_mismatch naming both when the model and the data set both name their classes
/// and the names differ; none otherwise.
caf::error check_same_classes(const std::vector<std::string>& model_names, const std::string& model,
                              const std::vector<std::string>& data_names, const std::string& data);

} // namespace actorps
