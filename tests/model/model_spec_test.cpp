// Tests of model/model_spec: layer texts and their errors, shapes, variable names and order,
// validation naming the layer, and the dense-stack conversion model parallelism needs.
#include "model/model_spec.hpp"

#include "common/errc.hpp"
#include "compute/optimizer_rules.hpp"
#include "model/mlp_spec.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;

namespace {

actorps::model_spec cnn() {
  actorps::model_spec spec;
  spec.layers = *parse_layers({"conv 3x3x32 relu", "maxpool 2", "conv 3x3x64 relu", "maxpool 2",
                               "dense 128 relu", "dense 10"});
  return spec;
}

std::string error_of(const std::vector<std::string>& texts) {
  auto parsed = parse_layers(texts);
  BOOST_REQUIRE(!parsed);
  BOOST_TEST(parsed.error() == errc::invalid_config);
  return describe(parsed.error());
}

} // namespace

BOOST_AUTO_TEST_SUITE(model_spec)

BOOST_AUTO_TEST_CASE(layer_texts_parse_with_defaults_and_round_trip) {
  auto l = *parse_layer("conv 5x5x16 stride 2 valid tanh");
  BOOST_TEST((l.kind == layer_kind::conv));
  BOOST_TEST(l.kernel == 5);
  BOOST_TEST(l.units == 16);
  BOOST_TEST(l.stride == 2);
  BOOST_TEST((l.padding == padding_mode::valid));
  BOOST_TEST((l.act == activation::tanh));
  BOOST_TEST(l.text() == "conv 5x5x16 stride 2 valid tanh");
  auto pool = *parse_layer("maxpool 3");
  BOOST_TEST(pool.stride == 3);
  BOOST_TEST((pool.padding == padding_mode::valid));
  BOOST_TEST(pool.text() == "maxpool 3");
  BOOST_TEST(parse_layer("maxpool 3 stride 2 same")->text() == "maxpool 3 stride 2 same");
  BOOST_TEST(parse_layer("dense 10")->text() == "dense 10");
  BOOST_TEST(!parse_layer("dense 10")->act);
  BOOST_TEST(parse_layer("dropout 0.25")->rate == 0.25f);
  for (auto text : {"conv 3x3x8 leaky-relu", "dense 7 sigmoid", "dropout 0.5", "maxpool 2 stride 1"})
    BOOST_TEST(parse_layer(text)->text() == text);
  // flatten is implied and dropped
  BOOST_TEST(parse_layers({"conv 3x3x4 relu", "flatten", "dense 10"})->size() == 2u);
}

BOOST_AUTO_TEST_CASE(bad_layers_name_their_position_and_what_is_wrong) {
  BOOST_TEST(error_of({"dense 10", "conv 3x3 relu"})
             == "invalid_config: model.layers[1] \"conv 3x3 relu\": expected \"conv KxKxCHANNELS [stride S] "
                "[same|valid] [ACTIVATION]\", e.g. \"conv 3x3x32 relu\"");
  BOOST_TEST(error_of({"dense ten"}).find("model.layers[0] \"dense ten\": expected \"dense UNITS") != std::string::npos);
  BOOST_TEST(error_of({"dense 10", "pool 2"}).find("model.layers[1] \"pool 2\": unknown layer kind \"pool\"")
             != std::string::npos);
  BOOST_TEST(error_of({"dense 10 swish"}).find("unexpected \"swish\"") != std::string::npos);
  BOOST_TEST(error_of({"dense 10 relu elu"}).find("more than one activation") != std::string::npos);
  BOOST_TEST(error_of({"dropout 1.0"}).find("0 <= RATE < 1") != std::string::npos);
  BOOST_TEST(error_of({"conv 3x5x8"}).find("only square kernels") != std::string::npos);
  BOOST_TEST(error_of({"maxpool 2 relu"}).find("unexpected \"relu\"") != std::string::npos);
  BOOST_TEST(error_of({"conv 3x3x8 stride"}).find("\"stride\" needs a positive integer") != std::string::npos);
  BOOST_TEST(error_of({}) == "invalid_config: model.layers has no layers");
}

BOOST_AUTO_TEST_CASE(shapes_and_variables_of_the_cnn) {
  auto spec = cnn();
  BOOST_REQUIRE(spec.validate().empty());
  auto shapes = spec.output_shapes();
  BOOST_TEST(shapes[0].text() == "28x28x32");
  BOOST_TEST(shapes[1].text() == "14x14x32");
  BOOST_TEST(shapes[3].text() == "7x7x64");
  BOOST_TEST(shapes[5].text() == "1x1x10");
  auto vars = spec.variables();
  BOOST_REQUIRE_EQUAL(vars.size(), 8u);
  BOOST_TEST(vars[0].name == "conv0/weights");
  BOOST_TEST(vars[0].rows == 9);
  BOOST_TEST(vars[0].cols == 32);
  BOOST_TEST(vars[2].name == "conv1/weights");
  BOOST_TEST(vars[2].rows == 3 * 3 * 32);
  BOOST_TEST(vars[4].name == "dense0/weights");
  BOOST_TEST(vars[4].rows == 7 * 7 * 64);
  BOOST_TEST(vars[6].name == "logits/weights");
  BOOST_TEST(vars[7].name == "logits/bias");
  BOOST_TEST(spec.classes() == 10);
  BOOST_TEST((spec.first_variable() == std::vector<int>{0, -1, 2, -1, 4, 6}));
  BOOST_TEST(spec.forward_macs() == 28u * 28 * 32 * 9 + 14u * 14 * 64 * 288 + 3136u * 128 + 1280u);
  auto g = spec.geometry(2);
  BOOST_TEST(g.in_h == 14);
  BOOST_TEST(g.channels == 32);
  BOOST_TEST(g.pad_top == 1);
  BOOST_TEST(g.out_w == 14);
}

BOOST_AUTO_TEST_CASE(same_and_valid_padding_follow_tensorflow) {
  actorps::model_spec spec;
  spec.input = {7, 7, 1};
  spec.layers = *parse_layers({"conv 3x3x2 stride 2", "conv 2x2x2 stride 2 valid", "dense 2"});
  auto shapes = spec.output_shapes();
  BOOST_TEST(shapes[0].text() == "4x4x2"); // ceil(7 / 2)
  BOOST_TEST(spec.geometry(0).pad_top == 1); // (4 - 1) * 2 + 3 - 7 = 2, half on top
  BOOST_TEST(shapes[1].text() == "2x2x2"); // (4 - 2) / 2 + 1
}

BOOST_AUTO_TEST_CASE(validation_names_the_layer_whose_sizes_do_not_fit) {
  actorps::model_spec spec;
  spec.input = {4, 4, 1};
  spec.layers = *parse_layers({"maxpool 2", "conv 3x3x4 valid relu", "dense 3"});
  BOOST_TEST(spec.validate() == "layer 1 (conv 3x3x4 valid relu): its input is 2x2x1, smaller than the 3x3 window (valid padding)");
  spec.layers = *parse_layers({"dense 8 relu", "conv 3x3x4 relu", "dense 3"});
  BOOST_TEST(spec.validate().find("layer 1 (conv 3x3x4 relu): follows a dense layer") == 0);
  spec.layers = *parse_layers({"dense 8 relu", "dense 3 relu"});
  BOOST_TEST(spec.validate().find("the last layer must be the logits layer") == 0);
  spec.layers = *parse_layers({"conv 3x3x4 relu", "dense 1"});
  BOOST_TEST(spec.validate() == "the logits layer needs at least 2 classes, got 1");
}

BOOST_AUTO_TEST_CASE(the_dense_shorthand_keeps_the_reference_names) {
  mlp_spec reference;
  auto vars = reference.variables();
  BOOST_REQUIRE_EQUAL(vars.size(), 12u);
  BOOST_TEST(vars[0].name == "dense0/weights");
  BOOST_TEST(vars[0].rows == 784);
  BOOST_TEST(vars[9].name == "dense4/bias");
  BOOST_TEST(vars[10].name == "logits/weights");
  actorps::model_spec as_image = dense_model({28, 28, 1}, reference.hidden, activation::elu, 10);
  auto image_vars = as_image.variables();
  for (size_t i = 0; i < vars.size(); ++i) {
    BOOST_TEST(image_vars[i].name == vars[i].name);
    BOOST_TEST(image_vars[i].size() == vars[i].size());
  }
}

BOOST_AUTO_TEST_CASE(model_parallelism_takes_dense_stacks_only) {
  auto dense = dense_stack(dense_model({28, 28, 1}, {20, 30}, activation::tanh, 4));
  BOOST_REQUIRE(dense);
  BOOST_TEST(dense->input_size == 784);
  BOOST_TEST((dense->hidden == std::vector<int>{20, 30}));
  BOOST_TEST((dense->hidden_activation == activation::tanh));
  BOOST_TEST(dense->classes == 4);
  auto conv = dense_stack(cnn());
  BOOST_REQUIRE(!conv);
  BOOST_TEST(describe(conv.error()) == "invalid_config: train.mode = model-parallel splits dense layers only; "
                                       "layer 0 (conv 3x3x32 relu) is a conv layer");
  actorps::model_spec mixed;
  mixed.layers = *parse_layers({"dense 8 relu", "dense 8 elu", "dense 2"});
  BOOST_TEST(describe(dense_stack(mixed).error()).find("layer 1 (dense 8 elu) differs") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(model_text_round_trips) {
  auto spec = cnn();
  spec.input = {32, 32, 3};
  spec.layers.insert(spec.layers.begin() + 2, *parse_layer("dropout 0.25"));
  BOOST_TEST(spec.text() == "32x32x3: conv 3x3x32 relu, maxpool 2, dropout 0.25, conv 3x3x64 relu, maxpool 2, "
                            "dense 128 relu, dense 10");
  auto back = parse_model_text(spec.text(), "m");
  BOOST_TEST_REQUIRE(static_cast<bool>(back));
  BOOST_TEST((back->input == spec.input));
  BOOST_TEST((back->layers == spec.layers));
  auto shape = parse_image_shape("28x28x1");
  BOOST_TEST_REQUIRE(shape.has_value());
  BOOST_TEST((*shape == image_shape{28, 28, 1}));
  for (const char* bad : {"28x28", "28x28x0", "28x28x1x", "axbxc", ""})
    BOOST_TEST(!parse_image_shape(bad).has_value());
}

BOOST_AUTO_TEST_CASE(bad_model_texts_are_named) {
  auto check = [](const std::string& text, const std::string& want) {
    auto m = parse_model_text(text, "ckpt/manifest.bin");
    BOOST_TEST_INFO("text: " << text);
    BOOST_TEST_REQUIRE(!m);
    BOOST_TEST((m.error() == errc::corrupt_data));
    BOOST_TEST(describe(m.error()).find("ckpt/manifest.bin: the model") != std::string::npos);
    BOOST_TEST(describe(m.error()).find(want) != std::string::npos, describe(m.error()));
  };
  check("784-160x5-10 elu", "is not");
  check("28x28: dense 10", "input shape");
  check("28x28x1: dense ten", "does not parse");
  check("2x2x1: conv 3x3x4 valid relu, dense 10", "does not fit");
}

BOOST_AUTO_TEST_CASE(batchnorm_avgpool_and_residual_blocks_parse_and_round_trip) {
  auto bn = *parse_layer("batchnorm relu");
  BOOST_TEST((bn.kind == layer_kind::batchnorm));
  BOOST_TEST((bn.act == activation::relu));
  BOOST_TEST(bn.text() == "batchnorm relu");
  BOOST_TEST(parse_layer("batchnorm")->text() == "batchnorm");
  BOOST_TEST((parse_layer("avgpool global")->kind == layer_kind::avgpool));
  BOOST_TEST(parse_layer("avgpool global")->text() == "avgpool global");
  auto block = *parse_layer("residual [conv 3x3x16 stride 2, batchnorm relu, conv 3x3x16, batchnorm] relu");
  BOOST_TEST((block.kind == layer_kind::residual));
  BOOST_TEST(block.body.size() == 4u);
  BOOST_TEST((block.act == activation::relu));
  BOOST_TEST(block.text() == "residual [conv 3x3x16 stride 2, batchnorm relu, conv 3x3x16, batchnorm] relu");
  BOOST_TEST(parse_layer("residual [batchnorm]")->text() == "residual [batchnorm]");
  actorps::model_spec spec;
  spec.input = {8, 8, 3};
  spec.layers = *parse_layers({"conv 3x3x4", "batchnorm relu", "residual [conv 3x3x4, batchnorm relu, conv 3x3x4, batchnorm] relu",
                               "residual [conv 3x3x8 stride 2, batchnorm relu, conv 3x3x8, batchnorm] relu", "avgpool global",
                               "dense 10"});
  BOOST_TEST(spec.validate() == "");
  auto back = parse_model_text(spec.text(), "m"); // (commas inside a block do not split the model)
  BOOST_TEST_REQUIRE(static_cast<bool>(back), test::error_text(back));
  BOOST_TEST((back->layers == spec.layers));
  auto shapes = spec.output_shapes();
  BOOST_TEST((shapes[2] == image_shape{8, 8, 4}));
  BOOST_TEST((shapes[3] == image_shape{4, 4, 8}));
  BOOST_TEST((shapes[4] == image_shape{1, 1, 8}));
}

BOOST_AUTO_TEST_CASE(depthwise_and_separable_layers_parse_shape_and_name_their_variables) {
  BOOST_TEST(parse_layer("depthwise 3x3 stride 2 valid relu")->text() == "depthwise 3x3 stride 2 valid relu");
  BOOST_TEST(parse_layer("separable 3x3x64 relu")->text() == "separable 3x3x64 relu");
  BOOST_TEST(error_of({"depthwise 3x3x8"}).find("expected \"depthwise KxK [stride S]") != std::string::npos);
  BOOST_TEST(error_of({"separable 3x3"}).find("expected \"separable KxKxCHANNELS") != std::string::npos);
  actorps::model_spec spec;
  spec.input = {8, 8, 3};
  spec.layers = *parse_layers({"depthwise 3x3 stride 2", "separable 3x3x16 relu", "dense 10"});
  BOOST_TEST(spec.validate() == "");
  BOOST_TEST((spec.output_shapes()[0] == image_shape{4, 4, 3}));
  BOOST_TEST((spec.output_shapes()[1] == image_shape{4, 4, 16}));
  std::vector<std::string> names;
  for (auto& v : spec.variables())
    names.push_back(v.name + " " + std::to_string(v.rows) + "x" + std::to_string(v.cols));
  BOOST_TEST(names == (std::vector<std::string>{"depthwise0/weights 9x3", "depthwise0/bias 1x3", "separable0/depthwise_weights 9x3",
                                                "separable0/pointwise_weights 3x16", "separable0/bias 1x16", "logits/weights 256x10",
                                                "logits/bias 1x10"}),
             boost::test_tools::per_element());
  BOOST_TEST((spec.variables()[3].shape == std::vector<int>{1, 1, 3, 16}));
  BOOST_TEST(spec.forward_macs() == 16u * 3 * 9 + 16u * 3 * (9 + 16) + 256u * 10);
}

BOOST_AUTO_TEST_CASE(lrn_parses_with_tensorflows_defaults_and_round_trips) {
  auto l = *parse_layer("lrn");
  BOOST_TEST((l.kind == layer_kind::lrn));
  BOOST_TEST(l.lrn.radius == 5);
  BOOST_TEST(l.lrn.beta == 0.5f);
  auto tutorial = *parse_layer("lrn radius 4 alpha 0.000111111 beta 0.75");
  BOOST_TEST(tutorial.lrn.radius == 4);
  BOOST_TEST(tutorial.lrn.alpha == 0.000111111f);
  BOOST_TEST(tutorial.text() == "lrn radius 4 alpha 0.000111111 beta 0.75");
  layer_spec exact = tutorial;
  exact.lrn.alpha = 0.001f / 9.0f; // (printed with the digits that read it back)
  BOOST_TEST((*parse_layer(exact.text()) == exact));
  BOOST_TEST(error_of({"lrn radius -1"}).find("expected \"lrn [radius R] [bias B] [alpha A] [beta BETA]\"") != std::string::npos);
  BOOST_TEST(error_of({"lrn depth 3"}).find("got \"depth 3\"") != std::string::npos);
  BOOST_TEST(error_of({"lrn bias 0"}).find("got \"bias 0\"") != std::string::npos);
  BOOST_TEST(error_of({"lrn relu"}).find("got \"relu\"") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(new_layers_name_their_variables_as_tensorflow_does) {
  actorps::model_spec spec;
  spec.input = {8, 8, 3};
  spec.layers = *parse_layers({"conv 3x3x4", "batchnorm relu", "residual [conv 3x3x4, batchnorm relu, conv 3x3x4, batchnorm] relu",
                               "residual [conv 3x3x8 stride 2, batchnorm relu] relu", "avgpool global", "dense 10"});
  std::vector<std::string> names;
  for (auto& v : spec.variables())
    names.push_back(v.name + " " + std::to_string(v.rows) + "x" + std::to_string(v.cols));
  std::vector<std::string> want = {
    "conv0/weights 27x4", "conv0/bias 1x4",
    "bn0/gamma 1x4", "bn0/beta 1x4", "bn0/moving_mean 1x4", "bn0/moving_variance 1x4",
    "block0/conv0/weights 36x4", "block0/conv0/bias 1x4",
    "block0/bn0/gamma 1x4", "block0/bn0/beta 1x4", "block0/bn0/moving_mean 1x4", "block0/bn0/moving_variance 1x4",
    "block0/conv1/weights 36x4", "block0/conv1/bias 1x4",
    "block0/bn1/gamma 1x4", "block0/bn1/beta 1x4", "block0/bn1/moving_mean 1x4", "block0/bn1/moving_variance 1x4",
    "block1/conv0/weights 36x8", "block1/conv0/bias 1x8",
    "block1/bn0/gamma 1x8", "block1/bn0/beta 1x8", "block1/bn0/moving_mean 1x8", "block1/bn0/moving_variance 1x8",
    "block1/shortcut/weights 4x8", "block1/shortcut/bias 1x8", // (8x8x4 -> 4x4x8: a 1x1 projection, stride 2)
    "logits/weights 8x10", "logits/bias 1x10"};
  BOOST_TEST(names == want, boost::test_tools::per_element());
  BOOST_TEST((spec.first_variable() == std::vector<int>{0, 2, 6, 18, -1, 26}));
  BOOST_TEST((spec.variable_counts() == std::vector<int>{2, 4, 12, 8, 0, 2}));
  BOOST_TEST((spec.variables()[24].shape == std::vector<int>{1, 1, 4, 8}));
  BOOST_TEST((spec.variables()[2].shape == std::vector<int>{4}));
  BOOST_TEST((spec.variables()[26].shape == std::vector<int>{8, 10}));
  BOOST_TEST(is_moving_statistic("block0/bn1/moving_variance"));
  BOOST_TEST(!is_moving_statistic("bn0/gamma"));
}

// TF1's tf.layers.batch_normalization(decay=D) (Keras' momentum): "batchnorm decay D" or
// "batchnorm decay=D", 0 < D < 1, default 0.99; the moving statistics carry it, nothing else does.
BOOST_AUTO_TEST_CASE(batchnorm_takes_a_decay) {
  auto bn = parse_layer("batchnorm decay=0.9 relu");
  BOOST_REQUIRE(bn);
  BOOST_TEST(bn->decay == 0.9f);
  BOOST_TEST(bn->text() == "batchnorm decay 0.9 relu");
  BOOST_TEST((*parse_layer(bn->text()) == *bn));
  BOOST_TEST(parse_layer("batchnorm relu")->decay == 0.99f);
  BOOST_TEST(parse_layer("batchnorm relu")->text() == "batchnorm relu");
  BOOST_TEST(!(*parse_layer("batchnorm decay 0.5") == *parse_layer("batchnorm")));
  for (std::string bad : {"batchnorm decay", "batchnorm decay 1", "batchnorm decay 0", "batchnorm decay=x",
                          "batchnorm decay -0.5", "batchnorm decay=nan"})
    BOOST_TEST(error_of({bad}).find("expected \"batchnorm [decay D] [ACTIVATION]\" with 0 < D < 1") != std::string::npos,
               bad << ": " << error_of({bad}));
  actorps::model_spec spec;
  spec.input = {4, 4, 2};
  spec.layers = *parse_layers({"residual [conv 3x3x2, batchnorm decay 0.8 relu] relu", "batchnorm", "dense 3"});
  std::vector<std::string> decays;
  for (auto& v : spec.variables())
    if (v.moving_decay != 0.0f)
      decays.push_back(v.name + " " + std::to_string(v.moving_decay).substr(0, 4));
  BOOST_TEST(decays == std::vector<std::string>({"block0/bn0/moving_mean 0.80", "block0/bn0/moving_variance 0.80",
                                                 "bn0/moving_mean 0.99", "bn0/moving_variance 0.99"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(bad_blocks_name_their_position) {
  BOOST_TEST(error_of({"dense 10", "residual conv 3x3x4"}).find("model.layers[1] \"residual conv 3x3x4\": expected \"residual [LAYER, ...] [ACTIVATION]\"")
             != std::string::npos);
  BOOST_TEST(error_of({"residual [conv 3x3x4, dense ten] relu"}).find("model.layers[0] \"residual [conv 3x3x4, dense ten] relu\": "
                                                                   "layer 1 of the block: expected \"dense UNITS")
             != std::string::npos);
  BOOST_TEST(error_of({"residual [conv 3x3x4, residual [batchnorm]]"}).find("blocks do not nest") != std::string::npos);
  BOOST_TEST(error_of({"residual []"}).find("an empty block") != std::string::npos);
  BOOST_TEST(error_of({"residual [batchnorm] relu tanh"}).find("more than one activation") != std::string::npos);
  BOOST_TEST(error_of({"avgpool 2"}).find("expected \"avgpool global\"") != std::string::npos);
  BOOST_TEST(error_of({"batchnorm 3"}).find("unexpected \"3\"") != std::string::npos);
  actorps::model_spec spec;
  spec.input = {8, 8, 3};
  spec.layers = *parse_layers({"residual [conv 3x3x4 valid] relu", "dense 10"});
  BOOST_TEST(spec.validate().find("layer 0 (residual [conv 3x3x4 valid] relu): its block turns 8x8x3 into 6x6x4") != std::string::npos,
             spec.validate());
  spec.layers = *parse_layers({"residual [dense 5] relu", "dense 10"});
  BOOST_TEST(spec.validate().find("layer 0 (residual [dense 5] relu): its block turns 8x8x3 into 1x1x5") != std::string::npos,
             spec.validate());
  spec.input = {1, 1, 5};
  spec.layers = *parse_layers({"residual [dense 5 elu, dense 5] elu", "dense 10"}); // (a dense block keeps its shape)
  BOOST_TEST(spec.validate() == "");
  spec.layers = *parse_layers({"dense 5", "batchnorm", "avgpool global", "dense 10"});
  BOOST_TEST(spec.validate().find("layer 2 (avgpool global): follows a dense layer") != std::string::npos, spec.validate());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(model_spec)

// The embedding bag's text, variable and checks: only first, B in [1, 30], no activation.
BOOST_AUTO_TEST_CASE(an_embedding_layer_parses_names_its_table_and_comes_first) {
  auto l = parse_layer("embedding 12 8");
  BOOST_REQUIRE(l);
  BOOST_TEST(l->text() == "embedding 12 8 mean");
  BOOST_TEST(parse_layer("embedding 12 8 sum")->text() == "embedding 12 8 sum");
  actorps::model_spec spec;
  spec.input = {1, 20, 1};
  spec.layers = *parse_layers({"embedding 12 8 mean", "dense 16 relu", "dense 2"});
  BOOST_TEST(spec.validate().empty());
  auto vars = spec.variables();
  BOOST_TEST(vars[0].name == "embedding0/weights");
  BOOST_TEST(vars[0].rows == 4096);
  BOOST_TEST(vars[0].cols == 8);
  BOOST_TEST(spec.output_shapes()[0].text() == "1x1x8");
  BOOST_TEST(vars[1].rows == 8); // the dense layer reads the bag
  for (auto bad : {"embedding 31 8", "embedding 0 8", "embedding 12", "embedding 12 8 max", "embedding 12 8 relu"})
    BOOST_TEST(!parse_layer(bad), bad);
  spec.layers = *parse_layers({"dense 16 relu", "embedding 12 8", "dense 2"});
  BOOST_TEST(spec.validate().find("only as the first layer") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
