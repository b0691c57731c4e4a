// Windows: output pixel (y, x) reads input (top + y, left + x), or column left + size - 1 - x when
// flipped, zero outside the image (the padding). Draws per image, in order: top, left (each only
// when it has a range), the flip, the brightness delta, the contrast factor.
#include "data/augment.hpp"

#include "common/log.hpp"

#include <cmath>
#include <cstring>
#include <vector>

namespace actorps {

std::optional<augmentation> parse_augmentation(const std::string& name, int crop_padding) {
  augmentation aug;
  if (name == "none")
    aug.enabled = false, aug.crop_padding = 0, aug.flip = false;
  else if (name == "crop")
    aug.enabled = true, aug.crop_padding = crop_padding, aug.flip = false;
  else if (name == "flip")
    aug.enabled = true, aug.crop_padding = 0, aug.flip = true;
  else if (name == "crop-flip")
    aug.enabled = true, aug.crop_padding = crop_padding, aug.flip = true;
  else
    return std::nullopt;
  return aug;
}

std::string to_string(const augmentation& aug) {
  if (!aug.enabled)
    return "none";
  bool crop = aug.crop_padding > 0;
  return crop && aug.flip ? "crop-flip" : crop ? "crop" : aug.flip ? "flip" : "none";
}

std::string describe(const augmentation& aug) {
  std::vector<std::string> parts;
  if (to_string(aug) != "none")
    parts.push_back(to_string(aug));
  if (aug.crop_size > 0)
    parts.push_back(cat("crop ", aug.crop_size, "x", aug.crop_size));
  if (aug.brightness > 0)
    parts.push_back(cat("brightness ", aug.brightness));
  if (aug.scales_contrast())
    parts.push_back(cat("contrast [", aug.contrast_lower, ", ", aug.contrast_upper, "]"));
  if (aug.standardize)
    parts.push_back("per-image standardisation");
  return parts.empty() ? "none" : join(parts, ", ");
}

image_shape augmented_shape(const augmentation& aug, const image_shape& in) {
  return aug.crop_size > 0 ? image_shape{aug.crop_size, aug.crop_size, in.channels} : in;
}

void crop_window(const image_shape& in, const float* img, int height, int width, int top, int left, bool flip,
                 float* out) {
  const int h = in.height, w = in.width, c = in.channels;
  for (int y = 0; y < height; ++y) {
    const int sy = top + y;
    float* row = out + static_cast<size_t>(y) * width * c;
    if (sy < 0 || sy >= h) {
      std::memset(row, 0, static_cast<size_t>(width) * c * sizeof(float));
      continue;
    }
    for (int x = 0; x < width; ++x) {
      const int sx = left + (flip ? width - 1 - x : x);
      float* px = row + static_cast<size_t>(x) * c;
      if (sx < 0 || sx >= w)
        std::memset(px, 0, static_cast<size_t>(c) * sizeof(float));
      else
        std::memcpy(px, img + (static_cast<size_t>(sy) * w + sx) * c, static_cast<size_t>(c) * sizeof(float));
    }
  }
}

void standardize_image(float* img, size_t n) {
  double sum = 0, sq = 0;
  for (size_t i = 0; i < n; ++i) {
    sum += img[i];
    sq += double(img[i]) * img[i];
  }
  const double mean = sum / static_cast<double>(n);
  const double stddev = std::sqrt(std::max(sq / static_cast<double>(n) - mean * mean, 0.0));
  const double scale = 1.0 / std::max(stddev, 1.0 / std::sqrt(static_cast<double>(n)));
  for (size_t i = 0; i < n; ++i)
    img[i] = static_cast<float>((img[i] - mean) * scale);
}

namespace {

// A uniform draw in [lo, hi] from 53 random bits (the same on every platform).
float uniform(std::mt19937_64& gen, float lo, float hi) {
  const double u = static_cast<double>(gen() >> 11) * 0x1.0p-53;
  return static_cast<float>(lo + (hi - lo) * u);
}

// x = (x - mean_c) * factor + mean_c, channel by channel (TF's adjust_contrast).
void scale_contrast(float* img, size_t pixels, int channels, float factor) {
  std::vector<double> mean(static_cast<size_t>(channels), 0.0);
  for (size_t i = 0; i < pixels * channels; ++i)
    mean[i % channels] += img[i];
  for (auto& m : mean)
    m /= static_cast<double>(pixels);
  for (size_t i = 0; i < pixels * channels; ++i)
    img[i] = static_cast<float>((img[i] - mean[i % channels]) * factor + mean[i % channels]);
}

} // namespace

void augment_batch(const augmentation& aug, const image_shape& in, int rows, uint64_t seed,
                   const float* const* sources, float* out) {
  const image_shape shape = augmented_shape(aug, in);
  const size_t n = shape.size();
  const int pad = aug.enabled ? aug.crop_padding : 0;
  const int range_y = in.height - shape.height + 2 * pad, range_x = in.width - shape.width + 2 * pad;
  std::mt19937_64 gen{seed};
  for (int r = 0; r < rows; ++r) {
    float* img = out + static_cast<size_t>(r) * n;
    const int top = (range_y > 0 ? static_cast<int>(gen() % static_cast<uint64_t>(range_y + 1)) : 0) - pad;
    const int left = (range_x > 0 ? static_cast<int>(gen() % static_cast<uint64_t>(range_x + 1)) : 0) - pad;
    const bool flip = aug.enabled && aug.flip && (gen() & 1) != 0;
    crop_window(in, sources[r], shape.height, shape.width, top, left, flip, img);
    if (aug.brightness > 0) {
      const float delta = uniform(gen, -aug.brightness, aug.brightness);
      for (size_t i = 0; i < n; ++i)
        img[i] += delta;
    }
    if (aug.scales_contrast())
      scale_contrast(img, n / shape.channels, shape.channels, uniform(gen, aug.contrast_lower, aug.contrast_upper));
    if (aug.standardize)
      standardize_image(img, n);
  }
}

} // namespace actorps
