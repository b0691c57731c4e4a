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
  BOOST_TEST(s->model.hidden == std::vector<int>(5, 160));
  BOOST_TEST((s->model.hidden_activation == activation::elu));
  BOOST_TEST(s->data_dir == "/usr/share/datasets/fashion-mnist");
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
  expect([](option_values& v) { v.optimizer = "rmsprop"; }, "train.optimizer must be sgd, momentum or adam");
  expect([](option_values& v) { v.learning_rate = 0; }, "train.learning-rate must be > 0");
  expect([](option_values& v) { v.momentum = 1.0; }, "train.momentum must be in [0, 1)");
  expect([](option_values& v) { v.target_accuracy = 1.5; }, "train.target-accuracy must be in [0, 1]");
  expect([](option_values& v) { v.name = "a/b"; }, "train.name must be a non-empty name without '/'");
  expect([](option_values& v) { v.hidden = {160, -3}; }, "hidden layer 1 must have positive width");
  expect([](option_values& v) { v.init = "xavier"; }, "model.init must be truncated-normal or he");
  expect([](option_values& v) { v.gpu_memory_fraction = 0; }, "compute.gpu-memory-fraction must be in (0, 1]");
  expect([](option_values& v) { v.threads = 0; }, "compute.threads must be >= 1");
  expect([](option_values& v) { v.validation_size = -5; }, "data.validation-size must be >= 0");
  expect([](option_values& v) {
    v.max_epochs = 0;
    v.patience = 0;
  }, "nothing else");
}

BOOST_AUTO_TEST_SUITE_END()
