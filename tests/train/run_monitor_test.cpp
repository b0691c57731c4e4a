// Tests of train/run_monitor: a new best model found by an evaluation that read only part of the
// model (a cluster's evaluation by an embedding table's rows) is kept once the caller has read
// the model whole, with that model's own figures; a whole evaluation keeps it at once.
#include "train/run_monitor.hpp"

#include "compute/cpu_backend.hpp"
#include "config/train_options.hpp"
#include "train/evaluate.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/synthetic_data.hpp"

#include <boost/test/unit_test.hpp>

#include <random>

using namespace actorps;
using namespace actorps::test;

namespace {

struct monitor_fixture {
  temp_dir dir;
  train_settings s;
  data_splits data = quadrant_data(200, 100, 100);
  std::unique_ptr<backend> be = make_cpu_backend(1);
  std::unique_ptr<network> net;
  std::vector<std::vector<float>> first, second; // two models: the one evaluated, the one read after

  monitor_fixture() {
    option_values v;
    v.data_dir = dir.path();
    v.run_dir = dir.file("runs");
    v.hidden = {8};
    v.classes = 4;
    v.device = "cpu";
    auto checked = validate(v);
    BOOST_REQUIRE(checked);
    s = *checked;
    auto spec = with_input(s.model, data.model_input());
    auto made = network::make(*be, spec, evaluation_batch(spec), 1);
    BOOST_REQUIRE(made);
    net = std::move(*made);
    BOOST_REQUIRE(!net->get_parameters(first));
    std::mt19937 gen{5};
    std::normal_distribution<float> draw{0.0f, 0.5f};
    for (auto& var : first)
      for (auto& x : var)
        x = draw(gen);
    second = first;
    for (auto& var : second)
      for (auto& x : var)
        x = draw(gen);
  }

  run_monitor make(const std::string& name) {
    auto log = run_log::open(s.run_dir, name);
    BOOST_REQUIRE(log);
    return run_monitor{s, "test", *net, data, std::move(*log)};
  }

  batch_metrics test_figures(const std::vector<std::vector<float>>& values) {
    BOOST_REQUIRE(!net->set_parameters(values));
    auto m = evaluate(*net, data.test);
    BOOST_REQUIRE(m);
    return *m;
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(run_monitor)

BOOST_FIXTURE_TEST_CASE(a_best_found_by_part_of_the_model_is_kept_once_read_whole, monitor_fixture) {
  const auto of_second = test_figures(second), of_first = test_figures(first);
  BOOST_REQUIRE(of_second.loss != of_first.loss); // (the two models tell apart)
  auto m = make("part");
  BOOST_REQUIRE(!m.evaluate(10, 200, {}, std::nullopt, false)); // (net holds `first`)
  BOOST_TEST(m.last_improved());
  BOOST_TEST(m.best_due());
  BOOST_REQUIRE(!net->set_parameters(second)); // the whole model, read a moment later
  BOOST_REQUIRE(!m.keep_best());
  BOOST_TEST(!m.best_due());
  BOOST_REQUIRE(!net->set_parameters(first)); // (the final model)
  auto sum = m.finish(run_summary{}, 200, {});
  BOOST_REQUIRE_MESSAGE(sum, error_text(sum));
  BOOST_TEST(!sum->best_model.empty());
  BOOST_TEST(sum->test_loss == of_second.loss); // the kept model's own figures
  BOOST_TEST(sum->final_test_loss == of_first.loss);
}

BOOST_FIXTURE_TEST_CASE(a_whole_evaluation_keeps_its_best_at_once, monitor_fixture) {
  const auto of_first = test_figures(first);
  auto m = make("whole");
  BOOST_REQUIRE(!m.evaluate(10, 200)); // (net holds `first`)
  BOOST_TEST(m.last_improved());
  BOOST_TEST(!m.best_due());
  BOOST_REQUIRE(!net->set_parameters(second));
  BOOST_REQUIRE(!m.keep_best()); // (nothing due: changes nothing)
  auto sum = m.finish(run_summary{}, 200, {});
  BOOST_REQUIRE_MESSAGE(sum, error_text(sum));
  BOOST_TEST(sum->test_loss == of_first.loss);
}

BOOST_AUTO_TEST_SUITE_END()
