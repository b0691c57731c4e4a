// Tests of data/npz_source on files numpy writes: NHW, NHWC and NCHW images into NHWC, uint8
// scaled and floats kept, x_val used, class names kept, an ambiguous layout named.
#include "data/npz_source.hpp"

#include "common/errc.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>


using namespace actorps;
using namespace actorps::test;

BOOST_AUTO_TEST_SUITE(npz_source)

BOOST_AUTO_TEST_CASE(channels_first_become_channels_last) {
  temp_dir dir;
  run_python(dir, "x = np.arange(2 * 3 * 2 * 2, dtype=np.uint8).reshape(2, 3, 2, 2)\n"  // N C H W
             "np.savez(d + 'a.npz', x_train=x, y_train=np.array([0, 1]), x_test=x, y_test=np.array([1, 0]),\n"
             "         x_val=x[:1], y_val=np.array([1]), class_names=np.array(['cat', 'dog']))\n");
  auto s = load_npz_data(dir.file("a.npz"), 0, pixel_layout::automatic);
  BOOST_REQUIRE(s);
  BOOST_TEST(s->train.shape.text() == "2x2x3");
  // pixel (y 0, x 1) of image 0: channel c holds value c * 4 + 1
  BOOST_TEST(s->train.images[3] == 1.0f / 255.0f);
  BOOST_TEST(s->train.images[4] == 5.0f / 255.0f);
  BOOST_TEST(s->train.images[5] == 9.0f / 255.0f);
  BOOST_TEST(s->validation.rows == 1);
  BOOST_TEST((s->class_names == std::vector<std::string>{"cat", "dog"}));
}

BOOST_AUTO_TEST_CASE(floats_are_taken_as_they_are_and_grey_images_need_no_channel_axis) {
  temp_dir dir;
  run_python(dir, "x = np.full((12, 5, 4), 0.5, dtype=np.float32)\n"
             "np.savez(d + 'g.npz', x_train=x, y_train=np.arange(12) % 3, x_test=x[:2], y_test=np.array([2.0, 0.0]))\n");
  auto s = load_npz_data(dir.file("g.npz"), 2, pixel_layout::automatic);
  BOOST_REQUIRE(s);
  BOOST_TEST(s->train.shape.text() == "5x4x1");
  BOOST_TEST(s->train.images[0] == 0.5f);
  BOOST_TEST(s->validation.rows == 2);
  BOOST_TEST(s->train.rows == 10);
  BOOST_TEST(s->test.labels[0] == 2.0f);
}

BOOST_AUTO_TEST_CASE(an_ambiguous_layout_names_the_option_and_a_declared_one_reads) {
  temp_dir dir;
  run_python(dir, "x = np.zeros((4, 3, 5, 1), dtype=np.uint8)\n"
             "np.savez(d + 'm.npz', x_train=x, y_train=np.zeros(4, np.int32), x_test=x, y_test=np.zeros(4, np.int32))\n");
  auto s = load_npz_data(dir.file("m.npz"), 1, pixel_layout::automatic);
  BOOST_REQUIRE(!s);
  BOOST_TEST(describe(s.error()).find("set data.layout to nhwc or nchw") != std::string::npos, describe(s.error()));
  auto nchw = load_npz_data(dir.file("m.npz"), 1, pixel_layout::nchw);
  BOOST_REQUIRE(nchw);
  BOOST_TEST(nchw->train.shape.text() == "5x1x3");
  auto nhwc = load_npz_data(dir.file("m.npz"), 1, pixel_layout::nhwc);
  BOOST_REQUIRE(nhwc);
  BOOST_TEST(nhwc->train.shape.text() == "3x5x1");
}

BOOST_AUTO_TEST_CASE(labels_must_be_whole_classes) {
  temp_dir dir;
  run_python(dir, "x = np.zeros((3, 2, 2), dtype=np.uint8)\n"
             "np.savez(d + 'f.npz', x_train=x, y_train=np.array([0.0, 1.5, 1.0]), x_test=x, y_test=np.zeros(3))\n");
  auto s = load_npz_data(dir.file("f.npz"), 1, pixel_layout::automatic);
  BOOST_REQUIRE(!s);
  BOOST_TEST(describe(s.error()).find("y_train[1] = 1.5 is not a class") != std::string::npos, describe(s.error()));
}

BOOST_AUTO_TEST_SUITE_END()
