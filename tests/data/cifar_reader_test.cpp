// Tests of data/cifar_reader on files the test writes (no CIFAR-10 copy is reachable here):
// channel planes become NHWC pixels in [0, 1], batches concatenate, and every corruption -- a
// missing file, a size that is not a whole number of records, a label above 9 -- is a named error.
#include "data/cifar_reader.hpp"

#include "common/errc.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;
using namespace actorps::test;

BOOST_AUTO_TEST_SUITE(cifar_reader)

BOOST_AUTO_TEST_CASE(records_become_interleaved_scaled_pixels) {
  temp_dir dir;
  write_file(dir.file("a.bin"), cifar_records(3));
  write_file(dir.file("b.bin"), cifar_records(2));
  auto d = read_cifar10({dir.file("a.bin"), dir.file("b.bin")});
  BOOST_REQUIRE_MESSAGE(d, error_text(d));
  BOOST_TEST(d->rows == 5);
  BOOST_TEST(d->cols == 3072);
  BOOST_TEST(d->shape.text() == "32x32x3");
  BOOST_TEST((d->labels == std::vector<float>{0, 1, 2, 0, 1}));
  BOOST_TEST(d->max_label == 2);
  // record 1, pixel 5 (y 0, x 5), channel 2: byte (1 + 14 + 5) % 256 = 20
  BOOST_TEST(d->images[1 * 3072 + 5 * 3 + 2] == 20.0f * (1.0f / 255.0f));
  // record 0, pixel 1000, channel 0: byte 1000 % 256 = 232
  BOOST_TEST(d->images[1000 * 3] == 232.0f * (1.0f / 255.0f));
}

BOOST_AUTO_TEST_CASE(a_directory_loads_its_five_batches_and_test_batch) {
  temp_dir dir;
  write_cifar_dir(dir, 12, 7);
  auto data = load_cifar10_dir(dir.path(), 6);
  BOOST_REQUIRE_MESSAGE(data, error_text(data));
  BOOST_TEST(data->train.rows == 54);
  BOOST_TEST(data->validation.rows == 6);
  BOOST_TEST(data->test.rows == 7);
  BOOST_TEST(data->train.shape.text() == "32x32x3");
}

BOOST_AUTO_TEST_CASE(a_missing_batch_is_named) {
  temp_dir dir;
  write_cifar_dir(dir, 2, 2);
  std::remove(dir.file("data_batch_4.bin").c_str());
  auto data = load_cifar10_dir(dir.path());
  BOOST_REQUIRE(!data);
  BOOST_TEST(data.error() == errc::file_error);
  BOOST_TEST(describe(data.error()).find(dir.file("data_batch_4.bin") + ": cannot open") != std::string::npos,
             describe(data.error()));
}

BOOST_AUTO_TEST_CASE(a_partial_record_is_refused_with_the_size) {
  temp_dir dir;
  auto bytes = cifar_records(2);
  bytes.pop_back();
  write_file(dir.file("cut.bin"), bytes);
  auto d = read_cifar10({dir.file("cut.bin")});
  BOOST_REQUIRE(!d);
  BOOST_TEST(d.error() == errc::corrupt_data);
  BOOST_TEST(describe(d.error()) == "corrupt_data: " + dir.file("cut.bin")
                                      + ": 6145 bytes is not a whole number of 3073-byte CIFAR-10 records");
  write_file(dir.file("empty.bin"), {});
  BOOST_TEST(!read_cifar10({dir.file("empty.bin")}));
}

BOOST_AUTO_TEST_CASE(a_label_above_nine_names_its_record) {
  temp_dir dir;
  auto bytes = cifar_records(3);
  bytes[2 * 3073] = 10;
  write_file(dir.file("bad.bin"), bytes);
  auto d = read_cifar10({dir.file("bad.bin")});
  BOOST_REQUIRE(!d);
  BOOST_TEST(describe(d.error()) == "corrupt_data: " + dir.file("bad.bin") + ": record 2 has label 10, above 9");
}

// A fuzzer's damaged copies of a CIFAR-10 batch file (tests/support's damaged_copies): each is
// read or refused naming the file, none crashes or throws.
BOOST_AUTO_TEST_CASE(damaged_copies_are_read_or_refused_by_name) {
  temp_dir dir;
  const auto refused = read_damaged(cifar_records(4), dir.file("x.bin"), 6, 400,
                                    [](const std::string& p) { return read_cifar10({p}); });
  BOOST_TEST(refused > 0u);
}

BOOST_AUTO_TEST_SUITE_END()
