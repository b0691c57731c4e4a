// Tests of data/image_folder on files PIL writes: classes in sorted folder order, val/ used,
// colour conversion, resizing, a test class train/ lacks, data.resize's syntax.
#include "data/image_folder.hpp"

#include "common/errc.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>

using namespace actorps;
using namespace actorps::test;

BOOST_AUTO_TEST_SUITE(image_folder)

BOOST_AUTO_TEST_CASE(classes_in_sorted_order_with_val_and_one_colour_mode) {
  temp_dir dir;
  run_python(dir, "for split, n in (('train', 3), ('test', 1), ('val', 1)):\n"
           "    for c, colour in (('zebra', (0, 255, 0)), ('ant', (0, 0, 255))):\n"
           "        for i in range(n):\n"
           "            put(f'/{split}/{c}/{i}.png' if c == 'ant' else f'/{split}/{c}/{i}.jpg', Image.new('RGB', (4, 3), colour))\n");
  image_folder_options grey;
  grey.color = color_mode::grey;
  auto s = load_image_folder(dir.file(""), 0, grey);
  BOOST_REQUIRE(s);
  BOOST_TEST((s->class_names == std::vector<std::string>{"ant", "zebra"}));
  BOOST_TEST(s->train.rows == 6);
  BOOST_TEST(s->validation.rows == 2);
  BOOST_TEST(s->test.rows == 2);
  BOOST_TEST(s->train.shape.text() == "3x4x1");
  float ant = 0.0f, zebra = 1.0f; // blue ants are darker than green zebras in grey (the brightest ant, the darkest zebra)
  for (int i = 0; i < s->train.rows; ++i) {
    float px = s->train.images[static_cast<size_t>(i) * 12];
    if (s->train.labels[static_cast<size_t>(i)] == 0.0f)
      ant = std::max(ant, px);
    else
      zebra = std::min(zebra, px);
  }
  BOOST_TEST(ant < zebra);
  BOOST_TEST(ant > 0.0f);
  image_folder_options scaled;
  scaled.resize = image_shape{6, 8, 1};
  auto big = load_image_folder(dir.file(""), 0, scaled);
  BOOST_REQUIRE(big);
  BOOST_TEST(big->train.shape.text() == "6x8x3");
}

BOOST_AUTO_TEST_CASE(a_test_class_train_lacks_is_named) {
  temp_dir dir;
  run_python(dir, "put('/train/a/0.png', Image.new('L', (2, 2)))\nput('/train/a/1.png', Image.new('L', (2, 2)))\n"
           "put('/test/b/0.png', Image.new('L', (2, 2)))\n");
  auto s = load_image_folder(dir.file(""), 1, {});
  BOOST_REQUIRE(!s);
  BOOST_TEST(describe(s.error()).find("/test/b: a class train/ does not have") != std::string::npos, describe(s.error()));
}

// Issue 50, item 13: a symbolic link in a loop ended the process with an uncaught filesystem_error.
BOOST_AUTO_TEST_CASE(a_symbolic_link_loop_is_named) {
  for (const char* at : {"/train/a/loop.png", "/train/loop"}) { // (an image's place, then a class's)
    temp_dir dir;
    run_python(dir, std::string{"put('/train/a/0.png', Image.new('L', (2, 2)))\nput('/test/a/0.png', Image.new('L', (2, 2)))\n"
                                "os.symlink(d + '"} + at + "', d + '" + at + "')\n");
    auto s = load_image_folder(dir.file(""), 1, {});
    BOOST_REQUIRE(!s);
    BOOST_TEST(s.error() == errc::file_error);
    BOOST_TEST(describe(s.error()).find(std::string{at} + ": cannot be read (Too many levels of symbolic links)") != std::string::npos,
               describe(s.error()));
  }
}

BOOST_AUTO_TEST_CASE(resize_syntax) {
  bool ok = false;
  BOOST_TEST(!parse_resize("", &ok).has_value());
  BOOST_TEST(ok);
  auto r = parse_resize("24x32", &ok);
  BOOST_TEST((ok && r && r->height == 24 && r->width == 32));
  for (auto bad : {"24", "24x", "x32", "0x4", "4x4x3", "-1x4"}) {
    parse_resize(bad, &ok);
    BOOST_TEST(!ok, bad);
  }
}

BOOST_AUTO_TEST_SUITE_END()
