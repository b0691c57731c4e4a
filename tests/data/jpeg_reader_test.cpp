// Tests of data/jpeg_reader on files PIL writes: colour conversion, a file that is not a JPEG.
#include "data/jpeg_reader.hpp"

#include "common/errc.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdlib>

using namespace actorps;
using namespace actorps::test;

namespace {

// Writes images with PIL: a script with the folder as `d`.
void pil(const temp_dir& dir, const std::string& body) {
  std::string script = "import os, sys\nfrom PIL import Image\nd = sys.argv[1]\n"
                       "def put(path, img):\n    os.makedirs(os.path.dirname(d + path), exist_ok=True); img.save(d + path)\n" + body;
  write_file(dir.file("make.py"), std::vector<uint8_t>(script.begin(), script.end()));
  BOOST_REQUIRE(std::system(("/usr/bin/python3 " + dir.file("make.py") + " " + dir.file("")).c_str()) == 0);
}

} // namespace

BOOST_AUTO_TEST_SUITE(jpeg_reader)

BOOST_AUTO_TEST_CASE(jpeg_colour_conversion_and_foreign_files) {
  temp_dir dir;
  pil(dir, "put('/g.jpg', Image.new('L', (5, 4), 200))\n");
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

BOOST_AUTO_TEST_SUITE_END()
