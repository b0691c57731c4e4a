// Tests of model/presets: every preset is a valid model with usable training defaults.
#include "model/presets.hpp"

#include "compute/optimizer_rules.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(presets)

BOOST_AUTO_TEST_CASE(every_preset_is_a_valid_model_on_both_input_shapes) {
  BOOST_TEST(preset_names()
             == "reference, seed-sigmoid, softmax, cnn, cifar10-tutorial, resnet20, xception-mini, text-hash");
  for (auto& p : model_presets()) {
    model_spec spec;
    auto layers = parse_layers(p.layers);
    BOOST_REQUIRE_MESSAGE(layers, p.name);
    spec.layers = *layers;
    for (image_shape input : {image_shape{28, 28, 1}, image_shape{32, 32, 3}}) {
      spec.input = input;
      BOOST_TEST(spec.validate().empty(), p.name << " on " << input.text() << ": " << spec.validate());
    }
    BOOST_TEST(spec.classes() == (std::string{p.name} == "text-hash" ? 2 : 10)); // (spam or ham)
    BOOST_TEST(p.learning_rate > 0.0f);
    BOOST_TEST(p.batch_size > 0);
  }
}

BOOST_AUTO_TEST_CASE(presets_carry_their_documents_settings) {
  auto* seed = find_preset("seed-sigmoid");
  BOOST_REQUIRE(seed);
  BOOST_TEST((seed->optimizer == optimizer_kind::sgd));
  BOOST_TEST(seed->learning_rate == 0.001f);
  BOOST_TEST(seed->batch_size == 100);
  BOOST_TEST((seed->init.scheme == init_scheme::random_normal));
  BOOST_TEST((find_preset("reference")->init.scheme == init_scheme::notebook));
  BOOST_TEST(find_preset("cnn")->layers.front() == "conv 3x3x32 relu");
  BOOST_TEST(!find_preset("resnet"));
  // ResNet-20: 19 convolutions (9 blocks of 2 and the stem) and the logits, 2 projections
  model_spec resnet;
  resnet.input = {32, 32, 3};
  resnet.layers = *parse_layers(find_preset("resnet20")->layers);
  int convs = 0, projections = 0, parameters = 0;
  for (auto& v : resnet.variables()) {
    convs += v.shape.size() == 4 && v.shape[0] == 3;
    projections += v.name.find("shortcut/weights") != std::string::npos;
    parameters += static_cast<int>(v.size());
  }
  BOOST_TEST(convs == 19);
  // the presets' batch norm keeps 0.9 per step (PyTorch's default), so 200 steps evaluate well
  int statistics = 0;
  for (auto& name : {"resnet20", "xception-mini"}) {
    model_spec m;
    m.input = {28, 28, 1};
    m.layers = *parse_layers(find_preset(name)->layers);
    for (auto& v : m.variables())
      if (is_moving_statistic(v.name)) {
        ++statistics;
        BOOST_TEST(v.moving_decay == 0.9f, name << " " << v.name);
      }
  }
  BOOST_TEST(statistics == 2 * (19 + 15)); // resnet20: the stem and 9 blocks of 2; xception-mini: 2 + 4 + 6 + 2 + 1
  BOOST_TEST(projections == 2);
  BOOST_TEST(resnet.output_shapes().back().channels == 10);
  BOOST_TEST(resnet.output_shapes()[resnet.layers.size() - 2].channels == 64); // after global pooling
  BOOST_TEST_MESSAGE("resnet20 on 32x32x3: " << parameters << " values");
  BOOST_TEST(parameters > 270000); // He et al.: 0.27 M parameters
  BOOST_TEST(parameters < 280000);
  // xception-mini: 28x28 -> 14 -> 7 -> 4 -> 2, separable convolutions throughout the blocks
  model_spec xception;
  xception.input = {28, 28, 1};
  xception.layers = *parse_layers(find_preset("xception-mini")->layers);
  auto shapes = xception.output_shapes();
  BOOST_TEST((shapes[4] == image_shape{7, 7, 128}));
  BOOST_TEST((shapes[5] == image_shape{4, 4, 256}));
  BOOST_TEST((shapes[8] == image_shape{2, 2, 384}));
  BOOST_TEST((shapes[10] == image_shape{2, 2, 512}));
  int separables = 0;
  for (auto& v : xception.variables())
    separables += v.name.find("pointwise_weights") != std::string::npos;
  BOOST_TEST(separables == 13); // (12 in blocks, the exit flow's last)
}

BOOST_AUTO_TEST_SUITE_END()
