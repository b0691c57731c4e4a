// Tests of config/train_options: defaults are the reference workload; bad values name their key.
#include "config/train_options.hpp"

#include "common/errc.hpp"

#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(train_options)

BOOST_AUTO_TEST_CASE(defaults_are_the_reference_workload) {
  auto s = validate(option_values{});
  BOOST_REQUIRE(s);
  BOOST_TEST(s->batch_size == 50);
  BOOST_TEST((s->optimizer.kind == optimizer_kind::momentum));
  BOOST_TEST(s->optimizer.learning_rate == 0.01f);
  BOOST_TEST(s->optimizer.momentum == 0.95f);
  BOOST_TEST(s->preset == "reference");
  BOOST_TEST((s->model.layer_texts() == std::vector<std::string>{"dense 160 elu", "dense 160 elu", "dense 160 elu",
                                                                  "dense 160 elu", "dense 160 elu", "dense 10"}));
  BOOST_TEST((s->init.scheme == init_scheme::notebook));
  BOOST_TEST((s->optimizer.schedule == lr_schedule::constant));
  BOOST_TEST(s->data.dir == "/usr/share/datasets/fashion-mnist");
  BOOST_TEST((s->data.format == data_format::automatic));
  BOOST_TEST(!s->data.augment.any());
  BOOST_TEST((s->device.mode == device_mode::auto_select));
  BOOST_TEST(s->device.cpu_threads == 1);
}

BOOST_AUTO_TEST_CASE(bad_values_name_their_key) {
  auto expect = [](auto mutate, const std::string& text) {
    option_values v;
    mutate(v);
    auto s = validate(v);
    BOOST_REQUIRE(!s);
    BOOST_TEST(s.error() == actorps::errc::invalid_config);
    BOOST_TEST(describe(s.error()).find(text) != std::string::npos, describe(s.error()));
  };
  expect([](option_values& v) { v.batch_size = -1; }, "train.batch-size must be > 0, got -1");
  expect([](option_values& v) { v.optimizer = "adadelta"; },
         "train.optimizer must be one of sgd, momentum, nesterov, adam, adagrad, rmsprop, got \"adadelta\"");
  expect([](option_values& v) { v.learning_rate = -1; }, "train.learning-rate must be > 0");
  expect([](option_values& v) { v.momentum = 1.0; }, "train.momentum must be in [0, 1)");
  expect([](option_values& v) { v.target_accuracy = 1.5; }, "train.target-accuracy must be in [0, 1]");
  expect([](option_values& v) { v.name = "a/b"; }, "train.name must be a non-empty name without '/'");
  expect([](option_values& v) { v.scope = "a b"; }, "train.scope must be at most 128 letters, digits and _-./");
  expect([](option_values& v) { v.scope = "problem_1/"; }, "not starting or ending with '/', got \"problem_1/\"");
  expect([](option_values& v) { v.hidden = {160, -3}; }, "model.hidden[1] must be > 0, got -3");
  expect([](option_values& v) { v.init = "xavier"; },
         "model.init must be one of notebook, truncated-normal, random-normal, glorot-uniform, he");
  expect([](option_values& v) { v.preset = "resnet"; },
         "model.preset must be one of reference, seed-sigmoid, softmax, cnn, cifar10-tutorial, resnet20, xception-mini, text-hash, got \"resnet\"");
  expect([](option_values& v) { v.layers = {"conv 3x3x8 relu", "maxpool two", "dense 10"}; },
         "model.layers[1] \"maxpool two\": expected \"maxpool K [stride S] [same|valid]\"");
  expect([](option_values& v) { v.layers = {"dense 8 relu", "dense 4 relu"}; },
         "model.layers: the last layer must be the logits layer");
  expect([](option_values& v) {
    v.layers = {"dense 10"};
    v.hidden = {5};
  }, "model.layers and model.hidden both describe the model");
  expect([](option_values& v) {
    v.layers = {"dense 10"};
    v.activation = "relu";
  }, "model.activation applies to model.hidden and presets");
  expect([](option_values& v) { v.lr_schedule = "step"; }, "train.lr-schedule must be one of constant, exponential");
  expect([](option_values& v) {
    v.lr_schedule = "piecewise";
    v.lr_boundaries = {10};
  }, "train.lr-values needs one more entry than train.lr-boundaries");
  expect([](option_values& v) { v.lr_values = {0.1}; }, "apply to train.lr-schedule = piecewise only");
  expect([](option_values& v) { v.data_format = "png"; }, "data.format must be auto, idx, cifar10, npz, image-folder or text");
  expect([](option_values& v) {
    v.data_format = "text";
    v.augment = "flip";
  }, "data.format = text reads token ids: data.augment, crop-size");
  expect([](option_values& v) { v.layout = "hwc"; }, "data.layout must be auto, nhwc or nchw");
  expect([](option_values& v) { v.color = "gray"; }, "data.color must be auto, grey or rgb");
  expect([](option_values& v) { v.resize = "32"; }, "data.resize must be \"\" or HxW");
  expect([](option_values& v) { v.resize = "0x5"; }, "data.resize must be");
  expect([](option_values& v) { v.data_threads = 0; }, "data.threads must be in [1, 64]");
  expect([](option_values& v) { v.devices = {"gpu:0", "tpu:1"}; }, "compute.devices: \"tpu:1\" is not a device");
  expect([](option_values& v) { v.devices = {"cpu:0", "/device:CPU:0"}; }, "compute.devices names /device:CPU:0 twice");
  expect([](option_values& v) { v.prefetch_batches = -1; }, "data.prefetch-batches must be in [0, 1024]");
  expect([](option_values& v) { v.normalize = "global"; }, "data.normalize must be none or per-channel");
  expect([](option_values& v) { v.augment = "rotate"; }, "data.augment must be none, crop, flip or crop-flip");
  expect([](option_values& v) { v.crop_size = -2; }, "data.crop-size must be in [0, 4096] (-1: the preset's), got -2");
  expect([](option_values& v) { v.brightness = -0.5; }, "data.brightness must be >= 0 (-1: the preset's), got -0.5");
  expect([](option_values& v) { v.contrast = "1.8,0.2"; }, "data.contrast must be \"LOWER,UPPER\" with 0 <= LOWER <= UPPER");
  expect([](option_values& v) { v.contrast = "0.2"; }, "or none, got \"0.2\"");
  expect([](option_values& v) { v.contrast = "0.2,1.8x"; }, "got \"0.2,1.8x\"");
  expect([](option_values& v) { v.standardize = "global"; }, "data.standardize must be per-image or none, got \"global\"");
  expect([](option_values& v) { v.gpu_memory = "fraction:0"; }, "compute.gpu-memory must be grow or fraction:F");
  expect([](option_values& v) { v.gpu_memory = "half"; }, "got \"half\"");
  expect([](option_values& v) { v.threads = 0; }, "compute.threads must be >= 1");
  expect([](option_values& v) { v.validation_size = -5; }, "data.validation-size must be >= 0");
  expect([](option_values& v) {
    v.max_epochs = 0;
    v.patience = 0;
  }, "nothing else");
  expect([](option_values& v) { v.eval_every_epochs = -1; }, "train.eval-every-epochs must be >= 0, got -1");
  expect([](option_values& v) { v.eval_every_epochs = 0; },
         "train.patience counts evaluations, but train.eval-every and train.eval-every-epochs are both 0");
  expect([](option_values& v) { v.early_stopping_metric = "validation-accuracy"; },
         "train.early-stopping-metric must be validation-loss or train-loss, got \"validation-accuracy\"");
}

BOOST_AUTO_TEST_CASE(the_notebooks_early_stopping_settings_validate) {
  option_values v;
  v.eval_every_epochs = 5;
  v.patience = 6;
  v.early_stopping_metric = "train-loss";
  auto s = validate(v);
  BOOST_REQUIRE(s);
  BOOST_TEST(s->eval_every_epochs == 5);
  BOOST_TEST(s->patience == 6);
  BOOST_TEST((s->early_stopping == stop_metric::train_loss));
  BOOST_TEST(to_string(s->early_stopping) == std::string{"train-loss"});
}

BOOST_AUTO_TEST_CASE(presets_bring_their_defaults_and_explicit_options_win) {
  option_values v;
  v.preset = "seed-sigmoid";
  auto s = validate(v);
  BOOST_REQUIRE(s);
  BOOST_TEST((s->optimizer.kind == optimizer_kind::sgd));
  BOOST_TEST(s->optimizer.learning_rate == 0.001f);
  BOOST_TEST(s->batch_size == 100);
  BOOST_TEST((s->init.scheme == init_scheme::random_normal));
  BOOST_TEST((s->model.layer_texts() == std::vector<std::string>{"dense 100 sigmoid", "dense 10"}));
  v.learning_rate = 0.05;
  v.batch_size = 20;
  v.optimizer = "momentum";
  v.activation = "tanh";
  v.classes = 4;
  s = validate(v);
  BOOST_REQUIRE(s);
  BOOST_TEST(s->optimizer.learning_rate == 0.05f);
  BOOST_TEST(s->batch_size == 20);
  BOOST_TEST(s->optimizer.momentum == 0.9f); // momentum for a preset without one: 0.9
  BOOST_TEST((s->model.layer_texts() == std::vector<std::string>{"dense 100 tanh", "dense 4"}));
  option_values cnn;
  cnn.preset = "cnn";
  s = validate(cnn);
  BOOST_REQUIRE(s);
  BOOST_TEST(s->model.layers.size() == 6u);
  BOOST_TEST(s->optimizer.momentum == 0.9f);
  // cifar10-tutorial brings TF's input pipeline; each part can be set or switched off alone
  option_values tut;
  tut.preset = "cifar10-tutorial";
  s = validate(tut);
  BOOST_REQUIRE(s);
  BOOST_TEST(describe(s->data.augment) == "flip, crop 24x24, brightness 0.247059, contrast [0.2, 1.8], "
                                          "per-image standardisation");
  tut.augment = "none";
  tut.crop_size = 20;
  tut.brightness = 0;
  tut.contrast = "none";
  tut.standardize = "none";
  s = validate(tut);
  BOOST_REQUIRE(s);
  BOOST_TEST(describe(s->data.augment) == "crop 20x20");
  tut.crop_size = 0;
  tut.contrast = "0.5,1.5";
  s = validate(tut);
  BOOST_REQUIRE(s);
  BOOST_TEST(describe(s->data.augment) == "contrast [0.5, 1.5]");
  option_values rms;
  rms.optimizer = "rmsprop";
  s = validate(rms);
  BOOST_REQUIRE(s);
  BOOST_TEST(s->optimizer.momentum == 0.0f); // TF1's RMSProp defaults
  BOOST_TEST(s->optimizer.epsilon == 1e-10f);
}

BOOST_AUTO_TEST_CASE(the_dense_shorthand_and_a_layer_list) {
  option_values v;
  v.hidden = {30, 20};
  v.activation = "relu";
  auto s = validate(v);
  BOOST_REQUIRE(s);
  BOOST_TEST((s->model.layer_texts() == std::vector<std::string>{"dense 30 relu", "dense 20 relu", "dense 10"}));
  option_values l;
  l.layers = {"conv 5x5x6 relu", "flatten", "dropout 0.5", "dense 3"};
  s = validate(l);
  BOOST_REQUIRE(s);
  BOOST_TEST(s->model.classes() == 3);
  BOOST_TEST(s->model.layers.size() == 3u);
}

BOOST_AUTO_TEST_CASE(lr_decay_rate_alone_still_means_exponential_decay) {
  option_values v;
  v.lr_decay_rate = 0.5;
  auto s = validate(v);
  BOOST_REQUIRE(s);
  BOOST_TEST((s->optimizer.schedule == lr_schedule::exponential));
}

BOOST_AUTO_TEST_SUITE_END()
