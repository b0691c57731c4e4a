// data.format = image-folder: train/<class>/*.png|jpg|jpeg and test/<class>/... (optionally
// val/<class>/...) under data.dir, as Keras' image_dataset_from_directory and torchvision's
// ImageFolder read them: the classes are train/'s sub-folders in sorted order, their names the
// class names. Images are decoded on data.threads threads, converted to grey or RGB
// (data.color; auto: as the first training image), and must share one size unless data.resize
// scales them all. The examples of each set are shuffled once with a fixed seed (so the
// validation split of train/ holds every class).
#pragma once

#include "data/dataset.hpp"

#include <caf/expected.hpp>

#include <optional>
#include <string>

namespace actorps {

enum class color_mode { automatic, grey, rgb };

const char* to_string(color_mode c); ///< "auto", "grey", "rgb"
std::optional<color_mode> parse_color_mode(const std::string& name);

struct image_folder_options {
  color_mode color = color_mode::automatic;
  std::optional<image_shape> resize; ///< height and width to scale every image to
  int threads = 1;                   ///< decoding threads
};

/// Parses data.resize: "" (none) or "HxW", e.g. "32x32"; nullopt (and *ok false) when malformed.
std::optional<image_shape> parse_resize(const std::string& text, bool* ok);

/// Loads root's train/, test/ and (optional) val/; without val/ the first validation_size
/// training examples (after the shuffle) are the validation set. Errors name the folder or file:
/// no class folders, an empty class folder, a test class train/ lacks, a corrupt or truncated
/// PNG or JPEG, an image of another size without data.resize.
caf::expected<data_splits> load_image_folder(const std::string& root, int validation_size,
                                             const image_folder_options& options);

/// Whether dir looks like an image folder (has a train/ sub-folder).
bool looks_like_image_folder(const std::string& dir);

} // namespace actorps
