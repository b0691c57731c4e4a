// Labelled image sets (MNIST-format IDX or CIFAR-10 binary directories), split into
// train / validation / test.
#pragma once

#include "model/model_spec.hpp"

#include <caf/expected.hpp>

#include <string>
#include <vector>

namespace actorps {

/// Examples as row-major float pixels in [0, 1] and labels stored as floats (class indices).
struct dataset {
  int rows = 0;       ///< number of examples
  int cols = 0;       ///< floats per example: shape.size()
  image_shape shape;  ///< one example, NHWC (channels fastest)
  int max_label = 0;  ///< largest label present
  std::vector<float> images;
  std::vector<float> labels;

  /// Returns examples [first, first + count) as a new dataset.
  dataset slice(int first, int count) const;

  /// Removes examples [0, count) in place: what stays keeps its buffers (no second copy).
  /// REQUIRES: 0 <= count <= rows.
  void drop_front(int count);
};

/// How an image becomes a model input after the readers scale bytes to [0, 1]:
/// x = (byte / 255 - mean[c]) / stddev[c] for channel c (empty vectors: x = byte / 255), then
/// the central crop_size x crop_size window (0: the whole image), then per-image standardisation.
struct input_scaling {
  std::vector<float> mean;
  std::vector<float> stddev;
  int crop_size = 0;
  int source_height = 0, source_width = 0; ///< with a crop: the training images' size (what eval and predict take)
  bool standardize = false;
  bool bigrams = true; ///< text (data.format = text): ids of words and bigrams (data.bigrams), not words alone
  bool per_channel() const { return !mean.empty(); }
  /// The model's input for images of shape `in`.
  image_shape input_for(const image_shape& in) const {
    return crop_size > 0 ? image_shape{crop_size, crop_size, in.channels} : in;
  }
  /// The images a model of input `model_input` takes before this scaling: the training images'
  /// size when it crops.
  image_shape source_for(const image_shape& model_input) const {
    return crop_size > 0 && source_height > 0 ? image_shape{source_height, source_width, model_input.channels}
                                              : model_input;
  }
};

/// Applies all of s to d's images in place (d's shape becomes s.input_for(its shape)).
/// REQUIRES: s.mean is empty or has d.shape.channels entries; crop_size <= d's height and width.
void apply_scaling(dataset& d, const input_scaling& s);

/// Applies s's crop and standardisation only (the channels already scaled).
void crop_and_standardize(dataset& d, const input_scaling& s);

/// The three sets the trainers use, and the scaling already applied to them (the training set's
/// crop and standardisation come per batch, from the augmentation).
struct data_splits {
  dataset train;
  dataset validation;
  dataset test;
  input_scaling scaling;
  std::vector<std::string> class_names; ///< by label; empty: unnamed (shown as numbers)
  bool token_ids = false; ///< examples are token id slots (data.format = text), not pixels
  /// The model's input: the validation and test images' shape.
  image_shape model_input() const { return scaling.input_for(train.shape); }
};

/// Whether the model reads what the data holds: token ids (data.format = text) go to a model
/// that begins with an embedding layer, pixels to one that does not; an error naming both
/// otherwise.
caf::error check_model_reads(const data_splits& data, const model_spec& model);

/// Loads an image file (rank 3: n x h x w) without labels (all 0): images to classify.
caf::expected<dataset> load_idx_images(const std::string& images_path);

/// Loads an image file (rank 3: n x h x w) and its label file (rank 1: n); the counts must match.
/// Errors name the file and what is wrong.
caf::expected<dataset> load_idx_pair(const std::string& images_path, const std::string& labels_path);

/// Returns the validation size used for a training file of n examples when none is configured:
/// 5,000 of 60,000, proportionally (n / 12, rounded) for other sizes.
int default_validation_size(int n);

/// Loads dir/{train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]; the first validation_size training
/// examples become the validation set (0: default_validation_size). Errors name the file.
caf::expected<data_splits> load_mnist_dir(const std::string& dir, int validation_size = 0);

/// The splits of sets read as train, test and, when there is a third, validation; without it the
/// first validation_size training examples (split_validation). Errors name dir.
caf::expected<data_splits> splits_of(std::vector<dataset> sets, int validation_size, const std::string& dir);

/// Splits the first validation_size examples of train off as the validation set (0: the default
/// size); the error names dir and the valid range.
caf::expected<data_splits> split_validation(dataset train, dataset test, int validation_size,
                                            const std::string& dir);

} // namespace actorps
