// Running a saved model on images: checking that a data set fits the model, applying the model's
// input scaling, and computing logits, softmax probabilities and the top classes.
#pragma once

#include "compute/backend.hpp"
#include "data/dataset.hpp"
#include "saved_model/saved_model.hpp"

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <string>
#include <utility>
#include <vector>

namespace actorps {

/// Fails with shape_mismatch naming `what` when data's (unscaled) images are not of the shape the
/// model takes (its input, or the images its central crop came from), e.g. "x.idx: images are
/// 32x32x3, the model takes 28x28x1"; with labels, when a label is not one of the model's classes.
caf::error check_fits(const saved_model& m, const dataset& data, const std::string& what, bool labelled);

/// Returns the logits of every example of data (rows x classes, row-major) on be. data's images
/// must already be scaled (apply_scaling with m.scaling).
caf::expected<std::vector<float>> model_logits(const saved_model& m, const dataset& data, backend& be);

/// Returns softmax(logits) of one example, computed in double.
std::vector<double> softmax(const float* logits, int classes);

/// Returns the k most probable classes with their probabilities, most probable first (ties: the
/// lower class first).
std::vector<std::pair<int, double>> top_classes(const std::vector<double>& probabilities, int k);

} // namespace actorps
