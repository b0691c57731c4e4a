// Tests of saved_model/inference: logits equal the network's own forward pass, softmax and top-k,
// and shape and label checks naming the data.
#include "saved_model/inference.hpp"

#include "common/errc.hpp"
#include "compute/cpu_backend.hpp"
#include "model/network.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>

using namespace actorps;
using namespace actorps::test;

namespace {

saved_model small_model() {
  saved_model m;
  m.spec.input = {6, 6, 1};
  m.spec.layers = *parse_layers({"conv 3x3x2 relu", "maxpool 2", "dense 4"});
  for (auto& v : m.spec.variables())
    m.values.push_back(random_values(v.size(), static_cast<uint32_t>(v.size())));
  return m;
}

dataset images(int n, const image_shape& shape) {
  dataset d;
  d.rows = n;
  d.shape = shape;
  d.cols = static_cast<int>(shape.size());
  d.images = random_values(static_cast<size_t>(n) * shape.size(), 3, 0.0f, 1.0f);
  d.labels.assign(static_cast<size_t>(n), 1.0f);
  return d;
}

} // namespace

BOOST_AUTO_TEST_SUITE(inference)

BOOST_AUTO_TEST_CASE(logits_equal_the_forward_pass) {
  auto m = small_model();
  auto data = images(2500, m.spec.input); // more than one evaluation batch
  auto be = make_cpu_backend(1);
  auto logits = model_logits(m, data, *be);
  BOOST_REQUIRE_MESSAGE(logits, error_text(logits));
  BOOST_REQUIRE_EQUAL(logits->size(), 2500u * 4u);
  auto net = network::make(*be, m.spec, 1);
  BOOST_REQUIRE(net);
  BOOST_REQUIRE(!(*net)->set_parameters(m.values));
  for (int row : {0, 999, 1000, 2499}) {
    (*net)->load_batch(data.images.data() + static_cast<size_t>(row) * data.cols, data.labels.data(), 1);
    (*net)->forward(false);
    std::vector<float> one;
    BOOST_REQUIRE(!(*net)->download_logits(one));
    for (int c = 0; c < 4; ++c)
      BOOST_TEST((*logits)[static_cast<size_t>(row) * 4 + c] == one[c], boost::test_tools::tolerance(1e-5f));
  }
}

BOOST_AUTO_TEST_CASE(softmax_and_top_classes) {
  const float logits[] = {1.0f, 3.0f, 3.0f, -2.0f};
  auto p = softmax(logits, 4);
  double sum = 0;
  for (double x : p)
    sum += x;
  BOOST_TEST(sum == 1.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(p[1] == std::exp(2.0) / (2 * std::exp(2.0) + 1 + std::exp(-3.0)), boost::test_tools::tolerance(1e-12));
  auto top = top_classes(p, 3);
  BOOST_REQUIRE_EQUAL(top.size(), 3u);
  BOOST_TEST(top[0].first == 1); // a tie: the lower class first
  BOOST_TEST(top[1].first == 2);
  BOOST_TEST(top[2].first == 0);
  BOOST_TEST(top_classes(p, 10).size() == 4u);
}

BOOST_AUTO_TEST_CASE(data_that_does_not_fit_is_named) {
  auto m = small_model();
  auto wrong = images(3, {6, 6, 3});
  auto err = check_fits(m, wrong, "cifar dir", true);
  BOOST_TEST((err == errc::shape_mismatch));
  BOOST_TEST(describe(err) == "shape_mismatch: cifar dir: images are 6x6x3, the model takes 6x6x1");
  auto labelled = images(3, m.spec.input);
  labelled.labels[2] = 4.0f;
  BOOST_TEST(describe(check_fits(m, labelled, "d", true)) == "shape_mismatch: d: example 2 has label 4, the model has 4 classes");
  BOOST_TEST(!check_fits(m, labelled, "d", false)); // labels of images to classify do not matter
  // a model trained on central 6x6 crops of 8x8 images takes 8x8 images
  m.scaling.crop_size = 6;
  m.scaling.source_height = m.scaling.source_width = 8;
  BOOST_TEST(describe(check_fits(m, images(3, m.spec.input), "d", false))
             == "shape_mismatch: d: images are 6x6x1, the model takes 8x8x1 (its central 6x6x1 window)");
  BOOST_TEST(!check_fits(m, images(3, {8, 8, 1}), "d", false));
}

BOOST_AUTO_TEST_SUITE_END()
