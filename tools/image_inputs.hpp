// What actorps-predict classifies: PNG images, IDX image files (raw or gzip) and CIFAR-10 binary
// files, recognised by their content (or named), loaded as data sets of the model's input shape.
#pragma once

#include "data/dataset.hpp"

#include <caf/expected.hpp>

#include <optional>
#include <string>

namespace actorps {

enum class input_kind { automatic, png, jpeg, idx, cifar10 };

const char* to_string(input_kind k); ///< "auto", "png", "jpeg", "idx", "cifar10"
std::optional<input_kind> parse_input_kind(const std::string& name);

/// Images to classify: pixels in [0, 1] (unscaled), labels when the file has them.
struct image_input {
  dataset images;
  bool labelled = false; ///< CIFAR-10 records carry labels
};

/// Loads path as kind (automatic: by content) in the model's input shape `want`; PNGs are resized
/// when resize is set. Errors name the path: unreadable, unrecognised, or not the model's shape.
caf::expected<image_input> load_image_input(const std::string& path, input_kind kind, const image_shape& want,
                                            bool resize);

/// A text file for a model that reads token ids (data.format = text): one example of the model's
/// want.size() id slots, its words (and bigrams when the model was trained on them) hashed as in
/// training (data/text_corpus). Errors name the path.
caf::expected<image_input> load_text_input(const std::string& path, const image_shape& want, bool bigrams);

} // namespace actorps
