// Tests of data/augment: crops shift the image within its zero padding, flips mirror it, the same
// seed gives the same batch, and disabled augmentation leaves the batch alone.
#include "data/augment.hpp"

#include <boost/test/unit_test.hpp>

#include <numeric>

using namespace actorps;

namespace {

// One 4x4x2 image whose pixel (y, x, c) holds 1 + y * 8 + x * 2 + c (no zeros).
std::vector<float> image() {
  std::vector<float> out(32);
  std::iota(out.begin(), out.end(), 1.0f);
  return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(augment)

BOOST_AUTO_TEST_CASE(disabled_augmentation_changes_nothing) {
  auto img = image(), copy = img;
  augment_batch(augmentation{}, {4, 4, 2}, 1, 7, img.data());
  BOOST_TEST((img == copy));
}

BOOST_AUTO_TEST_CASE(a_flip_without_padding_mirrors_columns) {
  augmentation aug{true, 0, true};
  const image_shape shape{4, 4, 2};
  bool saw_flip = false, saw_same = false;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    auto img = image();
    augment_batch(aug, shape, 1, seed, img.data());
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
  augmentation aug{true, 2, false};
  const image_shape shape{4, 4, 2};
  for (uint64_t seed = 0; seed < 20; ++seed) {
    auto img = image();
    augment_batch(aug, shape, 1, seed, img.data());
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
    auto again = image();
    augment_batch(aug, shape, 1, seed, again.data());
    BOOST_TEST((again == img));
  }
}

BOOST_AUTO_TEST_SUITE_END()
