// Tests of data/augment: crops shift the image within its zero padding, windows of data.crop-size
// lie inside it, flips mirror it, brightness adds one delta, contrast scales each channel about its
// mean, standardisation gives mean 0 and stddev 1 (TF's floor for flat images), every draw is
// seeded, and disabled augmentation leaves the batch alone.
#include "data/augment.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <numeric>
#include <set>

using namespace actorps;

namespace {

// One 4x4x2 image whose pixel (y, x, c) holds 1 + y * 8 + x * 2 + c (no zeros).
std::vector<float> image() {
  std::vector<float> out(32);
  std::iota(out.begin(), out.end(), 1.0f);
  return out;
}

// The batch of one image `img` (shape in) distorted by aug with seed.
std::vector<float> distort(const augmentation& aug, const image_shape& in, uint64_t seed, const std::vector<float>& img) {
  std::vector<float> out(augmented_shape(aug, in).size(), -1.0f);
  const float* source = img.data();
  augment_batch(aug, in, 1, seed, &source, out.data());
  return out;
}

double mean_of(const std::vector<float>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

} // namespace

BOOST_AUTO_TEST_SUITE(augment)

BOOST_AUTO_TEST_CASE(disabled_augmentation_changes_nothing) {
  BOOST_TEST(!augmentation{}.any());
  BOOST_TEST((distort(augmentation{}, {4, 4, 2}, 7, image()) == image()));
  BOOST_TEST(describe(augmentation{}) == "none");
}

BOOST_AUTO_TEST_CASE(a_flip_without_padding_mirrors_columns) {
  augmentation aug = *parse_augmentation("flip", 4);
  const image_shape shape{4, 4, 2};
  bool saw_flip = false, saw_same = false;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    auto img = distort(aug, shape, seed, image());
    auto orig = image();
    bool flipped = img[0] == orig[(0 * 4 + 3) * 2];
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 4; ++x)
        for (int c = 0; c < 2; ++c)
          BOOST_TEST(img[(y * 4 + x) * 2 + c] == orig[(y * 4 + (flipped ? 3 - x : x)) * 2 + c]);
    saw_flip |= flipped;
    saw_same |= !flipped;
  }
  BOOST_TEST(saw_flip);
  BOOST_TEST(saw_same);
}

BOOST_AUTO_TEST_CASE(crops_shift_within_the_zero_padding_and_are_seeded) {
  augmentation aug = *parse_augmentation("crop", 2);
  const image_shape shape{4, 4, 2};
  for (uint64_t seed = 0; seed < 20; ++seed) {
    auto img = distort(aug, shape, seed, image());
    // find the shift from any non-zero pixel: value 1 + sy * 8 + sx * 2 + c
    int dy = 99, dx = 99;
    for (int y = 0; y < 4 && dy == 99; ++y)
      for (int x = 0; x < 4; ++x)
        if (float v = img[(y * 4 + x) * 2]; v != 0.0f) {
          int k = static_cast<int>(v) - 1;
          dy = k / 8 - y;
          dx = (k % 8) / 2 - x;
          break;
        }
    BOOST_REQUIRE(dy != 99); // a shift of at most 2 keeps part of a 4x4 image
    BOOST_TEST(std::abs(dy) <= 2);
    BOOST_TEST(std::abs(dx) <= 2);
    auto orig = image();
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 4; ++x) {
        int sy = y + dy, sx = x + dx;
        bool inside = sy >= 0 && sy < 4 && sx >= 0 && sx < 4;
        BOOST_TEST(img[(y * 4 + x) * 2 + 1] == (inside ? orig[(sy * 4 + sx) * 2 + 1] : 0.0f));
      }
    BOOST_TEST((distort(aug, shape, seed, image()) == img));
  }
}

// data.crop-size: every batch image is one of the (4 - 2 + 1)^2 windows of 2x2, each of them
// turns up, and the offsets never leave the image.
BOOST_AUTO_TEST_CASE(crop_size_takes_random_windows_inside_the_image) {
  augmentation aug;
  aug.crop_size = 2;
  const image_shape shape{4, 4, 2};
  BOOST_TEST(augmented_shape(aug, shape).text() == "2x2x2");
  std::set<std::pair<int, int>> seen;
  const auto orig = image();
  for (uint64_t seed = 0; seed < 60; ++seed) {
    auto img = distort(aug, shape, seed, orig);
    BOOST_REQUIRE(img.size() == 8u);
    const int k = static_cast<int>(img[0]) - 1, top = k / 8, left = (k % 8) / 2;
    BOOST_TEST((top >= 0 && top <= 2 && left >= 0 && left <= 2));
    for (int y = 0; y < 2; ++y)
      for (int x = 0; x < 2; ++x)
        for (int c = 0; c < 2; ++c)
          BOOST_TEST(img[(y * 2 + x) * 2 + c] == orig[((top + y) * 4 + left + x) * 2 + c]);
    seen.insert({top, left});
  }
  BOOST_TEST(seen.size() == 9u);
}

// A window of the padded image: a 4x4 window of 4x4 padded by 1 has offsets in [-1, 1].
BOOST_AUTO_TEST_CASE(crop_size_with_padding_reaches_into_the_padding) {
  augmentation aug = *parse_augmentation("crop", 1);
  aug.crop_size = 3;
  std::set<int> tops;
  for (uint64_t seed = 0; seed < 80; ++seed) {
    auto img = distort(aug, {4, 4, 2}, seed, image());
    int top = 99;
    for (int y = 0; y < 3 && top == 99; ++y)
      for (int x = 0; x < 3; ++x)
        if (float v = img[(y * 3 + x) * 2]; v != 0.0f) {
          top = (static_cast<int>(v) - 1) / 8 - y;
          break;
        }
    tops.insert(top);
  }
  BOOST_TEST((tops == std::set<int>{-1, 0, 1, 2}));
}

BOOST_AUTO_TEST_CASE(brightness_adds_one_delta_within_its_bound) {
  augmentation aug;
  aug.brightness = 0.5f;
  std::set<float> deltas;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    auto img = distort(aug, {4, 4, 2}, seed, image());
    const auto orig = image();
    const float delta = img[0] - orig[0];
    BOOST_TEST(std::abs(delta) <= 0.5f);
    for (size_t i = 0; i < img.size(); ++i)
      BOOST_TEST(std::abs(img[i] - orig[i] - delta) < 1e-5f);
    deltas.insert(delta);
  }
  BOOST_TEST(deltas.size() == 20u);
}

BOOST_AUTO_TEST_CASE(contrast_scales_each_channel_about_its_mean) {
  augmentation aug;
  aug.contrast_lower = 0.2f;
  aug.contrast_upper = 1.8f;
  const auto orig = image();
  for (uint64_t seed = 0; seed < 20; ++seed) {
    auto img = distort(aug, {4, 4, 2}, seed, orig);
    for (int c = 0; c < 2; ++c) {
      double mean = 0, out_mean = 0;
      for (int p = 0; p < 16; ++p) {
        mean += orig[p * 2 + c] / 16.0;
        out_mean += img[p * 2 + c] / 16.0;
      }
      BOOST_TEST(out_mean == mean, boost::test_tools::tolerance(1e-5));
      const double factor = (img[c] - mean) / (orig[c] - mean); // (pixel 0 is never its channel's mean)
      BOOST_TEST((factor >= 0.2 - 1e-5 && factor <= 1.8 + 1e-5));
      for (int p = 0; p < 16; ++p)
        BOOST_TEST(img[p * 2 + c] - mean == factor * (orig[p * 2 + c] - mean), boost::test_tools::tolerance(1e-4));
    }
  }
}

BOOST_AUTO_TEST_CASE(standardisation_gives_mean_zero_and_unit_stddev) {
  augmentation aug;
  aug.standardize = true;
  auto img = distort(aug, {4, 4, 2}, 1, image());
  double m = mean_of(img), sq = 0;
  for (float v : img)
    sq += (v - m) * (v - m);
  BOOST_TEST(m == 0.0, boost::test_tools::tolerance(1e-6));
  BOOST_TEST(std::sqrt(sq / 32) == 1.0, boost::test_tools::tolerance(1e-5));
  // a flat image: TF divides by max(stddev, 1 / sqrt(n)), so it becomes zeros, never NaN
  std::vector<float> flat(32, 0.7f);
  standardize_image(flat.data(), flat.size());
  for (float v : flat)
    BOOST_TEST(v == 0.0f, boost::test_tools::tolerance(1e-6f));
}

// TF's order: brightness and contrast come before the standardisation, which undoes a brightness
// shift entirely; so with standardisation the brightness draw changes nothing.
BOOST_AUTO_TEST_CASE(standardisation_comes_last) {
  augmentation plain, bright;
  plain.standardize = bright.standardize = true;
  bright.brightness = 0.3f;
  for (uint64_t seed = 0; seed < 5; ++seed) {
    auto a = distort(plain, {4, 4, 2}, seed, image()), b = distort(bright, {4, 4, 2}, seed, image());
    for (size_t i = 0; i < a.size(); ++i)
      BOOST_TEST(a[i] == b[i], boost::test_tools::tolerance(1e-5f));
  }
}

BOOST_AUTO_TEST_CASE(a_batch_draws_row_by_row_from_its_seed) {
  augmentation aug = *parse_augmentation("crop-flip", 1);
  aug.crop_size = 3;
  aug.brightness = 0.1f;
  aug.contrast_lower = 0.5f;
  aug.contrast_upper = 1.5f;
  const auto a = image();
  auto b = image();
  std::reverse(b.begin(), b.end());
  const float* sources[] = {a.data(), b.data()};
  std::vector<float> once(2 * 18), again(2 * 18);
  augment_batch(aug, {4, 4, 2}, 2, 11, sources, once.data());
  augment_batch(aug, {4, 4, 2}, 2, 11, sources, again.data());
  BOOST_TEST((once == again));
  augment_batch(aug, {4, 4, 2}, 2, 12, sources, again.data());
  BOOST_TEST((once != again));
  BOOST_TEST(describe(aug) == "crop-flip, crop 3x3, brightness 0.1, contrast [0.5, 1.5]");
}

BOOST_AUTO_TEST_SUITE_END()
