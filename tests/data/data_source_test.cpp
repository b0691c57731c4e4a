// Tests of data/data_source: format detection, loading by format, and per-channel normalisation.
#include "data/data_source.hpp"

#include "common/errc.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>

using namespace actorps;
using namespace actorps::test;

namespace {

// The settings of a CIFAR-10 directory of 10 training and 5 test images (32x32x3), 5 held out.
data_settings cifar_settings(const temp_dir& dir) {
  write_cifar_dir(dir, 10, 5);
  data_settings s;
  s.dir = dir.path();
  s.validation_size = 5;
  s.normalize = normalization::per_channel;
  return s;
}

} // namespace

BOOST_AUTO_TEST_SUITE(data_source)

BOOST_AUTO_TEST_CASE(formats_are_detected_from_the_files) {
  temp_dir cifar, idx, empty;
  write_cifar_dir(cifar, 4, 4);
  write_file(idx.file("train-images-idx3-ubyte.gz"), {});
  BOOST_TEST((*detect_format(cifar.path()) == data_format::cifar10));
  BOOST_TEST((*detect_format(idx.path()) == data_format::idx));
  auto none = detect_format(empty.path());
  BOOST_REQUIRE(!none);
  BOOST_TEST(describe(none.error()).find(empty.path() + ": holds neither MNIST-format IDX files") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(load_data_reads_cifar_and_normalises_per_channel) {
  temp_dir dir;
  data_settings s = cifar_settings(dir);
  auto data = load_data(s);
  BOOST_REQUIRE_MESSAGE(data, error_text(data));
  for (int c = 0; c < 3; ++c) {
    double sum = 0, sq = 0;
    size_t n = 0;
    for (size_t i = c; i < data->train.images.size(); i += 3, ++n) {
      sum += data->train.images[i];
      sq += double(data->train.images[i]) * data->train.images[i];
    }
    BOOST_TEST(std::fabs(sum / n) < 1e-4);
    BOOST_TEST(std::sqrt(sq / n) == 1.0, boost::test_tools::tolerance(1e-3));
  }
  // The recorded scaling turns the raw test set into exactly what training evaluated on.
  BOOST_TEST_REQUIRE(data->scaling.mean.size() == 3u);
  s.normalize = normalization::none;
  auto raw = load_data(s);
  BOOST_REQUIRE(raw);
  BOOST_TEST(!raw->scaling.per_channel());
  apply_scaling(raw->test, data->scaling);
  BOOST_TEST(raw->test.images == data->test.images);
  s.format = data_format::idx; // the wrong format is a named error, not garbage
  auto wrong = load_data(s);
  BOOST_REQUIRE(!wrong);
  BOOST_TEST(describe(wrong.error()).find("train-images-idx3-ubyte[.gz]: not found") != std::string::npos);
}

// data.crop-size and data.standardize: the training set stays whole (its batches are cropped and
// standardised as they are drawn), validation and test become standardised central windows, and
// the recorded scaling turns raw images into exactly those.
BOOST_AUTO_TEST_CASE(crops_and_standardisation_shape_the_evaluation_sets) {
  temp_dir dir;
  data_settings s = cifar_settings(dir);
  s.augment.crop_size = 24;
  s.augment.standardize = true;
  auto data = load_data(s);
  BOOST_REQUIRE_MESSAGE(data, error_text(data));
  BOOST_TEST(data->train.shape.text() == "32x32x3");
  BOOST_TEST(data->model_input().text() == "24x24x3");
  for (const dataset* d : {&data->validation, &data->test}) {
    BOOST_TEST(d->shape.text() == "24x24x3");
    BOOST_TEST(d->cols == 24 * 24 * 3);
    BOOST_TEST(d->images.size() == static_cast<size_t>(d->rows) * d->cols);
    double sum = 0;
    for (int k = 0; k < d->cols; ++k)
      sum += d->images[k];
    BOOST_TEST(sum / d->cols == 0.0, boost::test_tools::tolerance(1e-5)); // each image: mean 0
  }
  BOOST_TEST(data->scaling.crop_size == 24);
  BOOST_TEST(data->scaling.source_for(data->model_input()).text() == "32x32x3");
  BOOST_TEST(data->scaling.standardize);
  data_settings plain = s;
  plain.normalize = normalization::none;
  plain.augment = {};
  auto raw = load_data(plain);
  BOOST_REQUIRE(raw);
  apply_scaling(raw->test, data->scaling);
  BOOST_TEST(raw->test.shape.text() == data->test.shape.text());
  BOOST_TEST(raw->test.images == data->test.images);
  s.augment.crop_size = 33; // a window larger than the images is refused by name
  auto big = load_data(s);
  BOOST_REQUIRE(!big);
  BOOST_TEST(describe(big.error()).find("data.crop-size 33 is larger than the images (32x32x3)") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(names_round_trip) {
  for (auto f : {data_format::automatic, data_format::idx, data_format::cifar10})
    BOOST_TEST((parse_data_format(to_string(f)) == f));
  BOOST_TEST((parse_normalization("per-channel") == normalization::per_channel));
  BOOST_TEST(!parse_data_format("png"));
}

BOOST_AUTO_TEST_SUITE_END()
