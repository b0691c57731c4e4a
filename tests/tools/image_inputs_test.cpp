// Tests of tools/image_inputs: inputs recognised by content (PNG, IDX raw and gzip, CIFAR-10),
// and named errors for unrecognised files and shapes the model does not take.
#include "tools/image_inputs.hpp"

#include "common/errc.hpp"
#include "compute/token_ids.hpp"
#include "data/text_corpus.hpp"
#include "tests/support/helpers.hpp"

#include <png.h>

#include <boost/test/unit_test.hpp>

#include <cstring>


using namespace actorps;
using namespace actorps::test;

namespace {

void write_grey_png(const std::string& path, int w, int h) {
  std::vector<png_byte> px(static_cast<size_t>(w * h), 200);
  write_png(path, w, h, PNG_FORMAT_GRAY, px.data());
}

} // namespace

BOOST_AUTO_TEST_SUITE(image_inputs)

BOOST_AUTO_TEST_CASE(kinds_are_recognised_by_content) {
  temp_dir dir;
  const image_shape mnist{4, 4, 1};
  write_grey_png(dir.file("a.img"), 4, 4);
  write_file(dir.file("b.img"), idx_bytes({2, 4, 4}, std::vector<uint8_t>(32, 51)));
  write_gz_file(dir.file("c.img"), idx_bytes({3, 4, 4}, std::vector<uint8_t>(48, 0)));
  write_file(dir.file("d.img"), cifar_records(2));
  auto a = load_image_input(dir.file("a.img"), input_kind::automatic, mnist, false);
  BOOST_REQUIRE_MESSAGE(a, error_text(a));
  BOOST_TEST(a->images.rows == 1);
  BOOST_TEST(a->images.images[0] == 200.0f / 255.0f, boost::test_tools::tolerance(1e-6f));
  auto b = load_image_input(dir.file("b.img"), input_kind::automatic, mnist, false);
  BOOST_REQUIRE_MESSAGE(b, error_text(b));
  BOOST_TEST(b->images.rows == 2);
  BOOST_TEST(!b->labelled);
  BOOST_TEST(load_image_input(dir.file("c.img"), input_kind::automatic, mnist, false)->images.rows == 3);
  auto d = load_image_input(dir.file("d.img"), input_kind::automatic, {32, 32, 3}, false);
  BOOST_REQUIRE_MESSAGE(d, error_text(d));
  BOOST_TEST(d->labelled);
  BOOST_TEST(d->images.labels[1] == 1.0f);
  BOOST_TEST((parse_input_kind("cifar10") == input_kind::cifar10));
  BOOST_TEST((parse_input_kind("jpeg") == input_kind::jpeg));
  BOOST_TEST(!parse_input_kind("gif"));
}

// Issue 50, item 3: predict refused JPEG although training reads JPEG folders, and --resize kept
// an RGB image's colours where the model wants grey.
BOOST_AUTO_TEST_CASE(jpeg_inputs_and_resize_converts_colours) {
  temp_dir dir;
  run_python(dir, "put('/rgb.jpg', Image.new('RGB', (8, 6), (200, 200, 200)))\nput('/rgb.png', Image.new('RGB', (4, 4), (0, 0, 0)))\n");
  const image_shape grey{4, 4, 1};
  auto refused = load_image_input(dir.file("rgb.jpg"), input_kind::automatic, grey, false);
  BOOST_REQUIRE(!refused);
  BOOST_TEST(describe(refused.error()).find("rgb.jpg: an RGB image (3 channels), the model takes 1 (grey) (pass --resize to "
                                            "convert it)") != std::string::npos, describe(refused.error()));
  auto jpeg = load_image_input(dir.file("rgb.jpg"), input_kind::automatic, grey, true);
  BOOST_REQUIRE_MESSAGE(jpeg, error_text(jpeg));
  BOOST_TEST(jpeg->images.images.size() == 16u); // scaled to 4x4, one channel
  BOOST_TEST(jpeg->images.images[5] == 200.0f / 255.0f, boost::test_tools::tolerance(0.03f));
  auto named = load_image_input(dir.file("rgb.jpg"), input_kind::jpeg, {6, 8, 3}, false); // as it is
  BOOST_REQUIRE_MESSAGE(named, error_text(named));
  BOOST_TEST(named->images.images.size() == 144u);
  auto png = load_image_input(dir.file("rgb.png"), input_kind::automatic, grey, true); // PNG alike
  BOOST_REQUIRE_MESSAGE(png, error_text(png));
  BOOST_TEST(png->images.images.size() == 16u);
}

BOOST_AUTO_TEST_CASE(unrecognised_and_misfit_inputs_are_named) {
  temp_dir dir;
  write_file(dir.file("notes.txt"), {'h', 'e', 'l', 'l', 'o'});
  auto what = load_image_input(dir.file("notes.txt"), input_kind::automatic, {4, 4, 1}, false);
  BOOST_REQUIRE(!what);
  BOOST_TEST(describe(what.error()).find("notes.txt: not a PNG or JPEG image, an IDX image file or a CIFAR-10") !=
             std::string::npos);
  write_file(dir.file("b.idx"), idx_bytes({2, 5, 5}, std::vector<uint8_t>(50, 0)));
  auto misfit = load_image_input(dir.file("b.idx"), input_kind::automatic, {4, 4, 1}, true);
  BOOST_REQUIRE(!misfit);
  BOOST_TEST(describe(misfit.error()) ==
             "shape_mismatch: " + dir.file("b.idx") + ": images are 5x5x1, the model takes 4x4x1 (only PNG and JPEG images are resized)");
  auto absent = load_image_input(dir.file("absent.png"), input_kind::automatic, {4, 4, 1}, false);
  BOOST_REQUIRE(!absent);
  BOOST_TEST((absent.error() == errc::file_error));
}

// A text file for a model of token ids: one example, its words (and bigrams) hashed as in
// training, the slots after them empty; a missing file named.
BOOST_AUTO_TEST_CASE(a_text_file_is_one_example_of_token_ids) {
  temp_dir dir;
  const auto path = dir.file("mail.txt");
  const std::string text = "Win a FREE prize now";
  write_file(path, std::vector<uint8_t>(text.begin(), text.end()));
  for (bool bigrams : {true, false}) {
    auto in = load_text_input(path, {1, 16, 1}, bigrams);
    BOOST_REQUIRE(in);
    BOOST_TEST(in->images.rows == 1);
    BOOST_TEST(in->images.cols == 16);
    text_options o;
    o.max_tokens = 16;
    o.bigrams = bigrams;
    std::vector<float> want(16);
    encode_tokens(text_token_ids(text, o), 16, want.data());
    BOOST_TEST(std::memcmp(in->images.images.data(), want.data(), sizeof(float) * 16) == 0);
    uint32_t id = 0;
    BOOST_TEST(!decode_token(in->images.images[bigrams ? 9 : 5], id)); // 5 words (+ 4 bigrams), then empty
  }
  auto missing = load_text_input(dir.file("none.txt"), {1, 16, 1}, true);
  BOOST_REQUIRE(!missing);
  BOOST_TEST(describe(missing.error()).find(dir.file("none.txt")) != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
