// Tests of data/dataset: pairing images with labels, scaling, splits, and named errors.
#include "data/dataset.hpp"

#include "common/errc.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;
using namespace actorps::test;

namespace {

// Writes an MNIST-format directory with n training and m test examples of 2x2 pixels.
void write_mnist(const temp_dir& dir, uint32_t n, uint32_t m) {
  for (auto [prefix, count] : {std::pair{"train", n}, std::pair{"t10k", m}}) {
    std::vector<uint8_t> px(count * 4), labels(count);
    for (uint32_t i = 0; i < count; ++i) {
      labels[i] = static_cast<uint8_t>(i % 10);
      for (int p = 0; p < 4; ++p)
        px[i * 4 + p] = static_cast<uint8_t>(i + p);
    }
    write_gz_file(dir.file(std::string{prefix} + "-images-idx3-ubyte.gz"), idx_bytes({count, 2, 2}, px));
    write_file(dir.file(std::string{prefix} + "-labels-idx1-ubyte"), idx_bytes({count}, labels));
  }
}

} // namespace

BOOST_AUTO_TEST_SUITE(dataset)

BOOST_AUTO_TEST_CASE(loads_scales_and_splits_a_directory) {
  temp_dir dir;
  write_mnist(dir, 120, 30);
  auto data = load_mnist_dir(dir.path());
  BOOST_REQUIRE_MESSAGE(data, error_text(data));
  BOOST_TEST(data->validation.rows == 10); // 120 / 12
  BOOST_TEST(data->train.rows == 110);
  BOOST_TEST(data->test.rows == 30);
  BOOST_TEST(data->train.cols == 4);
  // The validation set is the first examples, the training set the rest.
  BOOST_TEST(data->validation.images[4] == 1.0f / 255.0f);
  BOOST_TEST(data->train.images[0] == 10.0f / 255.0f);
  BOOST_TEST(data->train.labels[0] == 0.0f);
  BOOST_TEST(data->train.max_label == 9);
  auto custom = load_mnist_dir(dir.path(), 20);
  BOOST_REQUIRE(custom);
  BOOST_TEST(custom->validation.rows == 20);
  BOOST_TEST(custom->train.rows == 100);
}

// The training split is the loaded set less its first rows, in the same buffer: a copy of it
// doubled the trainer's peak memory while both were alive (172 of 413 MB on Fashion-MNIST).
BOOST_AUTO_TEST_CASE(the_training_split_keeps_the_loaded_buffer) {
  actorps::dataset train;
  train.rows = 6;
  train.cols = 2;
  train.shape = {1, 2, 1};
  for (int i = 0; i < 6; ++i) {
    train.images.insert(train.images.end(), {float(i), float(10 + i)});
    train.labels.push_back(float(i % 3));
  }
  actorps::dataset test = train.slice(0, 2);
  const float* buffer = train.images.data();
  auto split = split_validation(std::move(train), std::move(test), 2, "mem");
  BOOST_REQUIRE(split);
  BOOST_TEST(split->train.images.data() == buffer);
  BOOST_TEST(split->train.rows == 4);
  BOOST_TEST(split->train.images == (std::vector<float>{2, 12, 3, 13, 4, 14, 5, 15}));
  BOOST_TEST(split->train.labels == (std::vector<float>{2, 0, 1, 2}));
  BOOST_TEST(split->train.max_label == 2);
  BOOST_TEST(split->validation.rows == 2);
  BOOST_TEST(split->validation.images == (std::vector<float>{0, 10, 1, 11}));
}

BOOST_AUTO_TEST_CASE(default_split_is_5000_of_60000) {
  BOOST_TEST(default_validation_size(60000) == 5000);
  BOOST_TEST(default_validation_size(12000) == 1000);
}

BOOST_AUTO_TEST_CASE(label_count_mismatch_names_both_files) {
  temp_dir dir;
  write_file(dir.file("img"), idx_bytes({3, 1, 1}, {1, 2, 3}));
  write_file(dir.file("lab"), idx_bytes({2}, {0, 1}));
  auto res = load_idx_pair(dir.file("img"), dir.file("lab"));
  BOOST_REQUIRE(!res);
  BOOST_TEST(describe(res.error()) == "corrupt_data: " + dir.file("img") + " holds 3 images but " + dir.file("lab") + " holds 2 labels");
}

BOOST_AUTO_TEST_CASE(wrong_rank_is_named) {
  temp_dir dir;
  write_file(dir.file("img"), idx_bytes({3}, {1, 2, 3}));
  write_file(dir.file("lab"), idx_bytes({3}, {0, 1, 2}));
  auto res = load_idx_pair(dir.file("img"), dir.file("lab"));
  BOOST_REQUIRE(!res);
  BOOST_TEST(describe(res.error()) == "corrupt_data: " + dir.file("img") + ": an image file has rank 3, this has 1");
}

BOOST_AUTO_TEST_CASE(missing_files_and_bad_split_are_named) {
  temp_dir dir;
  auto res = load_mnist_dir(dir.path());
  BOOST_REQUIRE(!res);
  BOOST_TEST(describe(res.error()) == "file_error: " + dir.path() + "/train-images-idx3-ubyte[.gz]: not found (data.dir must hold MNIST-format IDX files)");
  write_mnist(dir, 12, 3);
  auto split = load_mnist_dir(dir.path(), 12);
  BOOST_REQUIRE(!split);
  BOOST_TEST(split.error() == actorps::errc::invalid_config);
}

// The evaluation side of data.crop-size: TF's resize_image_with_crop_or_pad takes the window at
// ((h - size) / 2, (w - size) / 2); the dataset's shape and columns follow.
BOOST_AUTO_TEST_CASE(scaling_crops_the_central_window) {
  actorps::dataset d;
  d.rows = 2;
  d.shape = {5, 5, 1};
  d.cols = 25;
  for (int i = 0; i < 50; ++i)
    d.images.push_back(static_cast<float>(i));
  input_scaling s;
  s.crop_size = 2;
  BOOST_TEST(s.input_for(d.shape).text() == "2x2x1");
  apply_scaling(d, s);
  BOOST_TEST(d.shape.text() == "2x2x1");
  BOOST_TEST(d.cols == 4);
  BOOST_TEST((d.images == std::vector<float>{6, 7, 11, 12, 31, 32, 36, 37})); // rows 1-2, columns 1-2
}

BOOST_AUTO_TEST_SUITE_END()
