// Tests of train/run_monitor: a new best model found by an evaluation that read only part of the
// model (a cluster's evaluation by an embedding table's rows) is kept once the caller has read
// the model whole, with that model's own figures; a whole evaluation keeps it at once; models
// the caller writes (a cluster whose net holds a table's rows alone) are published when kept and
// at the finish, described as the run's model.
#include "train/run_monitor.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "compute/cpu_backend.hpp"
#include "config/train_options.hpp"
#include "train/evaluate.hpp"
#include "tests/support/helpers.hpp"
#include "tests/support/synthetic_data.hpp"

#include <boost/test/unit_test.hpp>

#include <fstream>
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

BOOST_FIXTURE_TEST_CASE(models_written_by_the_caller_are_published_when_kept_and_at_the_finish, monitor_fixture) {
  auto m = make("published");
  model_spec run_model = net->spec(); // (what the summary and the kept models describe)
  run_model.input = {1, 1, 3};       // (unlike the net's, to tell them apart)
  std::vector<std::pair<std::string, int64_t>> published; // (path, step) in order
  m.models_published_by(run_model, [&](const std::string& path, const checkpoint_manifest& man) -> caf::expected<std::string> {
    BOOST_TEST(man.model == run_model.text());
    published.emplace_back(path, man.global_step);
    return path;
  });
  BOOST_REQUIRE(!m.evaluate(10, 200, {}, std::nullopt, false));
  BOOST_TEST(m.best_due());
  BOOST_TEST(published.empty()); // (not before the caller has read the whole model)
  BOOST_REQUIRE(!m.keep_best());
  BOOST_REQUIRE_EQUAL(published.size(), 1u);
  BOOST_TEST(published[0].first == cat(s.run_dir, "/", s.name, "/model/best"));
  BOOST_TEST(published[0].second == 10);
  auto sum = m.finish(run_summary{}, 200, {});
  BOOST_REQUIRE_MESSAGE(sum, error_text(sum));
  BOOST_REQUIRE_EQUAL(published.size(), 2u);
  BOOST_TEST(published[1].first == cat(s.run_dir, "/", s.name, "/model/final"));
  BOOST_TEST(sum->best_model == published[0].first);
  BOOST_TEST(sum->final_model == published[1].first);
  std::ifstream summary{dir.file("runs/published/summary.json")};
  std::string text{std::istreambuf_iterator<char>(summary), {}};
  BOOST_TEST(text.find("1x1x3") != std::string::npos, "the summary describes the net's model, not the run's");
}

BOOST_FIXTURE_TEST_CASE(a_model_the_caller_cannot_publish_fails_the_keep_by_name, monitor_fixture) {
  auto m = make("unpublished");
  m.models_published_by(net->spec(), [](const std::string& path, const checkpoint_manifest&) -> caf::expected<std::string> {
    return caf::make_error(errc::file_error, cat(path, ": no space left on device"));
  });
  auto err = m.evaluate(10, 200); // a whole evaluation: its best is published at once
  BOOST_TEST(describe(err).find("model/best: no space left on device") != std::string::npos, describe(err));
  auto sum = m.finish(run_summary{}, 200, {});
  BOOST_TEST(!sum);
  BOOST_TEST(error_text(sum).find("model/final: no space left on device") != std::string::npos, error_text(sum));
}

BOOST_AUTO_TEST_SUITE_END()
