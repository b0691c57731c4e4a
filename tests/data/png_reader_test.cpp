// Tests of data/png_reader: grey, RGB, RGBA (composited onto black) and 16-bit images read exactly;
// sizes and channel counts the model does not take are named errors; resizing on request;
// corrupt and foreign files named.
#include "data/png_reader.hpp"

#include "common/errc.hpp"
#include "tests/support/helpers.hpp"

#include <png.h>

#include <boost/test/unit_test.hpp>


using namespace actorps;
using namespace actorps::test;

namespace {

template <class T>
void write_png(const std::string& path, int w, int h, png_uint_32 format, const std::vector<T>& px) {
  test::write_png(path, w, h, format, px.data());
}

// n grey bytes rising by `step` (wrapping).
std::vector<uint8_t> grey_ramp(size_t n, unsigned step) {
  std::vector<uint8_t> out(n);
  for (size_t i = 0; i < n; ++i)
    out[i] = static_cast<uint8_t>(i * step);
  return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(png_reader)

BOOST_AUTO_TEST_CASE(grey_and_rgb_read_exactly) {
  temp_dir dir;
  const auto grey = grey_ramp(6 * 4, 10);
  write_png(dir.file("g.png"), 6, 4, PNG_FORMAT_GRAY, grey);
  auto g = read_image(dir.file("g.png"), {4, 6, 1}, false);
  BOOST_REQUIRE_MESSAGE(g, error_text(g));
  BOOST_TEST(g->rows == 1);
  BOOST_TEST(g->cols == 24);
  for (size_t i = 0; i < grey.size(); ++i)
    BOOST_TEST(g->images[i] == static_cast<float>(grey[i]) * (1.0f / 255.0f)); // as the IDX reader scales
  std::vector<uint8_t> rgb(2 * 2 * 3);
  for (size_t i = 0; i < rgb.size(); ++i)
    rgb[i] = static_cast<uint8_t>(20 * i + 1);
  write_png(dir.file("c.png"), 2, 2, PNG_FORMAT_RGB, rgb);
  auto c = read_image(dir.file("c.png"), {2, 2, 3}, false);
  BOOST_REQUIRE_MESSAGE(c, error_text(c));
  for (size_t i = 0; i < rgb.size(); ++i) // NHWC: a pixel's channels together, as in CIFAR-10 data
    BOOST_TEST(c->images[i] == static_cast<float>(rgb[i]) * (1.0f / 255.0f));
}

BOOST_AUTO_TEST_CASE(alpha_is_composited_onto_black) {
  temp_dir dir;
  write_png(dir.file("a.png"), 2, 1, PNG_FORMAT_GA, std::vector<uint8_t>{200, 255, 200, 0});
  auto a = read_image(dir.file("a.png"), {1, 2, 1}, false);
  BOOST_REQUIRE_MESSAGE(a, error_text(a));
  BOOST_TEST(a->images[0] == 200.0f / 255.0f, boost::test_tools::tolerance(1e-6f)); // opaque
  BOOST_TEST(a->images[1] == 0.0f);                                               // transparent
}

BOOST_AUTO_TEST_CASE(sixteen_bit_images_read) {
  temp_dir dir;
  write_png(dir.file("w.png"), 2, 1, PNG_FORMAT_LINEAR_Y, std::vector<uint16_t>{0, 65535});
  auto w = read_image(dir.file("w.png"), {1, 2, 1}, false);
  BOOST_REQUIRE_MESSAGE(w, error_text(w));
  BOOST_TEST(w->images[0] == 0.0f);
  BOOST_TEST(w->images[1] == 1.0f);
}

BOOST_AUTO_TEST_CASE(size_and_channels_must_fit_unless_resized) {
  temp_dir dir;
  write_png(dir.file("big.png"), 8, 6, PNG_FORMAT_GRAY, std::vector<uint8_t>(48, 100));
  auto big = read_image(dir.file("big.png"), {4, 4, 1}, false);
  BOOST_REQUIRE(!big);
  BOOST_TEST((big.error() == errc::shape_mismatch));
  BOOST_TEST(describe(big.error()).find("big.png: 8x6 pixels, the model takes 4x4 (pass --resize") != std::string::npos);
  auto resized = read_image(dir.file("big.png"), {4, 4, 1}, true);
  BOOST_REQUIRE_MESSAGE(resized, error_text(resized));
  BOOST_TEST(resized->images.size() == 16u);
  for (float x : resized->images) // a flat image stays flat
    BOOST_TEST(x == 100.0f / 255.0f, boost::test_tools::tolerance(1e-6f));
  auto rgb = read_image(dir.file("big.png"), {6, 8, 3}, false);
  BOOST_REQUIRE(!rgb);
  BOOST_TEST(describe(rgb.error()).find("a grey image (1 channel), the model takes 3 (RGB)") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(resize_bilinear_interpolates) {
  // 1x2 -> 1x4: samples at x = -0.25, 0.25, 0.75, 1.25 of the source, clamped
  auto out = resize_bilinear({0.0f, 1.0f}, {1, 2, 1}, {1, 4, 1});
  BOOST_TEST(out[0] == 0.0f);
  BOOST_TEST(out[1] == 0.25f);
  BOOST_TEST(out[2] == 0.75f);
  BOOST_TEST(out[3] == 1.0f);
}

BOOST_AUTO_TEST_CASE(corrupt_and_foreign_files_are_named) {
  temp_dir dir;
  write_png(dir.file("ok.png"), 8, 8, PNG_FORMAT_GRAY, std::vector<uint8_t>(64, 7));
  auto bytes = read_text(dir.file("ok.png"));
  write_file(dir.file("cut.png"), std::vector<uint8_t>(bytes.begin(), bytes.begin() + 40));
  auto cut = read_image(dir.file("cut.png"), {8, 8, 1}, false);
  BOOST_REQUIRE(!cut);
  BOOST_TEST((cut.error() == errc::corrupt_data));
  BOOST_TEST(describe(cut.error()).find("cut.png: a corrupt PNG") != std::string::npos, describe(cut.error()));
  write_file(dir.file("text.png"), {'n', 'o', 't', ' ', 'a', ' ', 'p', 'n', 'g'});
  auto text = read_image(dir.file("text.png"), {8, 8, 1}, false);
  BOOST_REQUIRE(!text);
  BOOST_TEST(describe(text.error()).find("text.png: not a PNG image") != std::string::npos);
  auto absent = read_image(dir.file("absent.png"), {8, 8, 1}, false);
  BOOST_REQUIRE(!absent);
  BOOST_TEST((absent.error() == errc::file_error));
}

// Issue 50, item 13: a PNG declaring 100000x100000 pixels cost 1.5 GB before its error.
BOOST_AUTO_TEST_CASE(a_header_declaring_a_giant_image_is_refused_before_decoding) {
  temp_dir dir;
  run_python(dir, "import struct, zlib\n"
                  "def chunk(kind, data):\n"
                  "    return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))\n"
                  "ihdr = struct.pack('>IIBBBBB', 100000, 100000, 8, 0, 0, 0, 0)\n"
                  "png = b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', ihdr) + chunk(b'IDAT', zlib.compress(b'\\0' * 1000))"
                  " + chunk(b'IEND', b'')\n"
                  "open(d + '/huge.png', 'wb').write(png)\n");
  auto got = decode_png(dir.file("huge.png"));
  BOOST_REQUIRE(!got);
  BOOST_TEST(got.error() == errc::corrupt_data);
  BOOST_TEST(describe(got.error()).find("huge.png: its header declares 100000x100000 pixels") != std::string::npos,
             describe(got.error()));
}

// A fuzzer's damaged copies of a valid PNG (seeded: bytes overwritten, runs set to extremes, cut
// short, junk inserted, bytes swapped; the header most often): each is decoded or refused naming
// the file, none crashes or throws (actorps-predict read 150 such copies of each input kind by
// hand first).
BOOST_AUTO_TEST_CASE(damaged_copies_are_decoded_or_refused_by_name) {
  temp_dir dir;
  write_png(dir.file("ok.png"), 28, 28, PNG_FORMAT_GRAY, grey_ramp(28 * 28, 7));
  const auto refused = read_damaged(read_bytes(dir.file("ok.png")), dir.file("x.png"), 1, 400,
                                    [](const std::string& p) { return decode_png(p); });
  BOOST_TEST(refused > 100u); // (most damage shows: the CRCs)
}

BOOST_AUTO_TEST_SUITE_END()
