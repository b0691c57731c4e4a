// data.format = npz: a data set in Keras' layout (keras.datasets' load_data saved with
// numpy.savez): x_train, y_train, x_test, y_test, optionally x_val and y_val (else the first
// data.validation-size training examples) and class_names. Images are N x H x W (grey),
// N x H x W x C or N x C x H x W (data.layout when both readings fit); uint8 pixels are scaled
// to [0, 1], float pixels taken as they are. Labels are integers (any integer dtype, or floats
// holding whole numbers) in [0, classes).
#pragma once

#include "data/dataset.hpp"

#include <caf/expected.hpp>

#include <optional>
#include <string>

namespace actorps {

enum class pixel_layout { automatic, nhwc, nchw };

const char* to_string(pixel_layout l); ///< "auto", "nhwc", "nchw"
std::optional<pixel_layout> parse_pixel_layout(const std::string& name);

/// Loads the .npz at path. Errors name the file and the array: a missing array, x and y of
/// different lengths, a label that is not a whole number or not below the classes (class_names'
/// count when given), images of another rank, an ambiguous layout (naming data.layout).
caf::expected<data_splits> load_npz_data(const std::string& path, int validation_size, pixel_layout layout);

} // namespace actorps
