// Which data a run reads and how it is prepared: the directory and its format (IDX or CIFAR-10,
// detected or named), the validation split, per-channel normalisation and training-time
// augmentation.
#pragma once

#include "data/augment.hpp"
#include "data/dataset.hpp"
#include "data/image_folder.hpp"
#include "data/npz_source.hpp"
#include "data/text_corpus.hpp"

#include <caf/expected.hpp>

#include <optional>
#include <string>

namespace actorps {

enum class data_format { automatic, idx, cifar10, npz, image_folder, text };

enum class normalization { none, per_channel };

const char* to_string(data_format f);          ///< "auto", "idx", "cifar10", "npz", "image-folder", "text"
const char* to_string(normalization n);        ///< "none", "per-channel"
std::optional<data_format> parse_data_format(const std::string& name);
std::optional<normalization> parse_normalization(const std::string& name);

struct data_settings {
  std::string dir = "/usr/share/datasets/fashion-mnist"; ///< a folder, or an .npz file
  data_format format = data_format::automatic;
  int validation_size = 0;
  normalization normalize = normalization::none;
  augmentation augment;
  pixel_layout layout = pixel_layout::automatic; ///< npz
  image_folder_options images;                   ///< image-folder (its threads: data.threads)
  text_options text;                             ///< text: data.max-tokens, data.bigrams
  std::vector<std::string> class_names;          ///< data.class-names: overrides the data's
  int threads = 1;                               ///< data.threads: decoding and batch preparation
  int prefetch_batches = 4;                      ///< data.prefetch-batches: batches prepared ahead (0: inline)
};

/// The class names of the data sets known by their folder's name: Fashion-MNIST's ten
/// (folder name containing "fashion"), MNIST's digits; empty otherwise.
std::vector<std::string> known_class_names(const std::string& dir);

/// Returns the format of dir: npz for a file that starts like a zip archive, image-folder for a
/// folder with a train/ sub-folder, cifar10 if it holds data_batch_1.bin, idx if it holds
/// train-images-idx3-ubyte[.gz]; an error naming dir and the candidates otherwise.
caf::expected<data_format> detect_format(const std::string& dir);

/// Loads the three sets as settings say; with per-channel normalisation every set is shifted and
/// scaled by the training set's per-channel mean and standard deviation. With data.crop-size the
/// validation and test images become their central windows, and with data.standardize they are
/// standardised one by one (training batches get both from the augmentation); data.scaling
/// records all of it. A crop larger than the images is an error naming data.crop-size. The class names come
/// from data.class-names, else the data (class_names, folder names), else known_class_names; a
/// count other than the data's classes is an error naming where they came from.
caf::expected<data_splits> load_data(const data_settings& settings);

/// Subtracts each channel's training mean and divides by its standard deviation, in every set;
/// records both in data.scaling.
void normalize_per_channel(data_splits& data);

} // namespace actorps
