// Tests of data/jpeg_reader on files PIL writes: colour conversion, a file that is not a JPEG.
#include "data/jpeg_reader.hpp"

#include "common/errc.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>

using namespace actorps;
using namespace actorps::test;

BOOST_AUTO_TEST_SUITE(jpeg_reader)

BOOST_AUTO_TEST_CASE(jpeg_colour_conversion_and_foreign_files) {
  temp_dir dir;
  run_python(dir, "put('/g.jpg', Image.new('L', (5, 4), 200))\n");
  auto as_is = decode_jpeg(dir.file("g.jpg"));
  BOOST_REQUIRE(as_is);
  BOOST_TEST(as_is->shape.text() == "4x5x1");
  auto rgb = decode_jpeg(dir.file("g.jpg"), 3);
  BOOST_REQUIRE(rgb);
  BOOST_TEST(rgb->shape.text() == "4x5x3");
  BOOST_TEST(std::abs(rgb->pixels[0] - 200.0f / 255.0f) < 0.02f);
  write_file(dir.file("x.jpg"), {'n', 'o', 'p', 'e'});
  auto bad = decode_jpeg(dir.file("x.jpg"));
  BOOST_REQUIRE(!bad);
  BOOST_TEST(describe(bad.error()).find("x.jpg: not a JPEG image") != std::string::npos, describe(bad.error()));
}

// Issue 50, item 13: a JPEG whose header says 65500x65500 aborted the process (17 GB asked for).
BOOST_AUTO_TEST_CASE(a_header_declaring_a_giant_image_is_refused_before_decoding) {
  temp_dir dir;
  run_python(dir, "put('/g.jpg', Image.new('L', (8, 8), 100))\n"
                  "b = bytearray(open(d + '/g.jpg', 'rb').read())\n"
                  "at = b.index(b'\\xff\\xc0')\n" // SOF0: length (2), precision (1), height (2), width (2)
                  "b[at + 5:at + 9] = (65500).to_bytes(2, 'big') * 2\n"
                  "open(d + '/huge.jpg', 'wb').write(bytes(b))\n");
  auto got = decode_jpeg(dir.file("huge.jpg"));
  BOOST_REQUIRE(!got);
  BOOST_TEST(got.error() == errc::corrupt_data);
  BOOST_TEST(describe(got.error()).find("huge.jpg: its header declares 65500x65500 pixels, more than the 67108864 (8192x8192)")
               != std::string::npos, describe(got.error()));
}

// A fuzzer's damaged copies of a valid JPEG (tests/support's damaged_copies): each is decoded or
// refused naming the file, none crashes or throws.
BOOST_AUTO_TEST_CASE(damaged_copies_are_decoded_or_refused_by_name) {
  temp_dir dir;
  run_python(dir, "put('/ok.jpg', Image.new('RGB', (28, 20), (30, 140, 220)))\n");
  const auto refused = read_damaged(read_bytes(dir.file("ok.jpg")), dir.file("x.jpg"), 2, 400,
                                    [](const std::string& p) { return decode_jpeg(p); });
  BOOST_TEST(refused > 0u);
}

BOOST_AUTO_TEST_SUITE_END()
