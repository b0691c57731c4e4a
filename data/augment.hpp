// TensorFlow's input distortions (cifar10_input.py): training examples are random windows of the
// image (after optional zero padding), mirrored left-right about half the time, brightened by a
// random delta, their contrast scaled by a random factor, then standardised one by one; evaluation
// takes the central window and standardises it the same way. One seed per batch decides every draw.
#pragma once

#include "model/model_spec.hpp"

#include <cstdint>
#include <optional>
#include <random>
#include <string>

namespace actorps {

/// The distortions of training batches (data.augment, data.crop-*, data.brightness,
/// data.contrast, data.standardize).
struct augmentation {
  bool enabled = false;  ///< data.augment's padded crops and flips (below) apply
  int crop_padding = 4;  ///< pixels of zero padding on every side before a random crop (0: none)
  bool flip = true;      ///< mirror half the images left-right
  int crop_size = 0;     ///< random crop_size x crop_size windows (0: the image's size)
  float brightness = 0;  ///< max |delta| added to every value of an image (0: none)
  float contrast_lower = 1, contrast_upper = 1; ///< contrast factor range ([1, 1]: none)
  bool standardize = false; ///< per-image standardisation, after everything else

  /// Whether images get a random contrast factor.
  bool scales_contrast() const { return contrast_lower != 1 || contrast_upper != 1; }

  /// Whether a batch is anything but a copy of its examples.
  bool any() const { return enabled || crop_size > 0 || brightness > 0 || scales_contrast() || standardize; }
};

/// Parses "none", "crop", "flip" or "crop-flip" (crops pad by crop_padding); nullopt otherwise.
/// The other fields keep their defaults.
std::optional<augmentation> parse_augmentation(const std::string& name, int crop_padding);

/// Returns the name parse_augmentation() takes for aug.
std::string to_string(const augmentation& aug);

/// Every distortion aug applies, for logs: "crop-flip, crop 24x24, brightness 0.25, contrast
/// [0.2, 1.8], per-image standardisation" ("none" when it changes nothing).
std::string describe(const augmentation& aug);

/// The shape of an example of `in` after aug: crop_size x crop_size x C when it crops.
image_shape augmented_shape(const augmentation& aug, const image_shape& in);

/// Writes rows distorted examples to out (augmented_shape(aug, in).size() floats each); row r is
/// read from sources[r] (in.size() floats). Every draw comes from seed, row by row.
/// REQUIRES: aug.crop_size <= min(in.height, in.width) + 2 * padding.
void augment_batch(const augmentation& aug, const image_shape& in, int rows, uint64_t seed,
                   const float* const* sources, float* out);

/// Copies the height x width window at (top, left) of img (shape in; zero outside) to out,
/// mirrored left-right when flip.
void crop_window(const image_shape& in, const float* img, int height, int width, int top, int left, bool flip,
                 float* out);

/// TF's per_image_standardization: (x - mean) / max(stddev, 1 / sqrt(n)) over the n values.
void standardize_image(float* img, size_t n);

} // namespace actorps
