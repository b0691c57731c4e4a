// Tests of train/trainer: a real training run on a small learnable IDX data set written by the
// test, its run files, the target-accuracy stop, and named failures.
#include "train/trainer.hpp"

#include "common/errc.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <random>
#include <sstream>

using namespace actorps;
using namespace actorps::test;

namespace {

// 4 classes of 4x4 images: class c lights up quadrant c, plus noise. Learnable, not trivial.
void write_quadrants(const temp_dir& dir, uint32_t train, uint32_t test) {
  std::mt19937 gen{3};
  for (auto [prefix, count] : {std::pair{"train", train}, std::pair{"t10k", test}}) {
    std::vector<uint8_t> px(count * 16), labels(count);
    for (uint32_t i = 0; i < count; ++i) {
      int c = static_cast<int>(gen() % 4);
      labels[i] = static_cast<uint8_t>(c);
      for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 4; ++x) {
          int quadrant = (y / 2) * 2 + x / 2;
          int base = quadrant == c ? 110 : 50;
          px[i * 16 + y * 4 + x] = static_cast<uint8_t>(base + gen() % 100);
        }
    }
    write_file(dir.file(std::string{prefix} + "-images-idx3-ubyte"), idx_bytes({count, 4, 4}, px));
    write_file(dir.file(std::string{prefix} + "-labels-idx1-ubyte"), idx_bytes({count}, labels));
  }
}

train_settings small_run(const temp_dir& dir) {
  option_values v;
  v.data_dir = dir.path();
  v.run_dir = dir.file("runs");
  v.name = "t";
  v.hidden = {16, 16};
  v.classes = 4;
  v.batch_size = 20;
  v.max_epochs = 15;
  v.learning_rate = 0.05;
  v.momentum = 0.9;
  v.device = "cpu";
  v.progress_every = 50;
  v.patience = 0;
  auto s = validate(v);
  BOOST_REQUIRE(s);
  return *s;
}

} // namespace

BOOST_AUTO_TEST_SUITE(trainer)

BOOST_AUTO_TEST_CASE(learns_and_writes_metrics_and_summary) {
  temp_dir dir;
  write_quadrants(dir, 600, 200);
  auto s = small_run(dir);
  auto sum = train_single_process(s);
  BOOST_REQUIRE_MESSAGE(sum, error_text(sum));
  BOOST_TEST(sum->test_accuracy > 0.9); // chance is 0.25
  BOOST_TEST(sum->best_validation_accuracy > 0.9);
  BOOST_TEST(sum->epochs == 15.0);
  BOOST_TEST(sum->steps == 15 * 28); // 550 training examples: 27 full batches and one of 10
  BOOST_TEST(sum->examples_per_second > 0.0);
  auto metrics = read_text(dir.file("runs/t/metrics.jsonl"));
  BOOST_TEST(std::count(metrics.begin(), metrics.end(), '\n') == 15); // one evaluation per epoch
  BOOST_TEST(metrics.find("\"validation_accuracy\": ") != std::string::npos);
  auto summary = read_text(dir.file("runs/t/summary.json"));
  for (auto key : {"\"mode\": \"single\"", "\"test_accuracy\": ", "\"best_validation_accuracy\": ",
                   "\"wall_seconds\": ", "\"examples_per_second\": ", "\"steps\": 420",
                   "\"epochs\": 15", "\"seconds_to_target\": null"})
    BOOST_TEST(summary.find(key) != std::string::npos, key << " in " << summary);
}

BOOST_AUTO_TEST_CASE(stops_at_the_target_accuracy_and_records_when) {
  temp_dir dir;
  write_quadrants(dir, 600, 200);
  auto s = small_run(dir);
  s.target_accuracy = 0.8;
  s.eval_every = 5;
  auto sum = train_single_process(s);
  BOOST_REQUIRE_MESSAGE(sum, error_text(sum));
  BOOST_REQUIRE(sum->seconds_to_target);
  BOOST_TEST(*sum->seconds_to_target <= sum->wall_seconds);
  BOOST_TEST(sum->epochs < 15.0);
  BOOST_TEST(sum->stop_reason.find("target validation accuracy") == 0);
  BOOST_TEST(read_text(dir.file("runs/t/summary.json")).find("\"seconds_to_target\": null") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_step_limit_between_evaluations_still_evaluates_the_final_model) {
  temp_dir dir;
  write_quadrants(dir, 300, 100);
  auto s = small_run(dir);
  s.max_steps = 7;
  auto sum = train_single_process(s);
  BOOST_REQUIRE_MESSAGE(sum, error_text(sum));
  BOOST_TEST(sum->steps == 7);
  BOOST_TEST(sum->stop_reason == "max steps 7 reached");
  BOOST_TEST(sum->best_validation_accuracy > 0.0);
  auto metrics = read_text(dir.file("runs/t/metrics.jsonl"));
  BOOST_TEST(std::count(metrics.begin(), metrics.end(), '\n') == 1);
  BOOST_TEST(metrics.find("\"step\": 7,") != std::string::npos, metrics);
}

BOOST_AUTO_TEST_CASE(evaluates_every_k_epochs_and_stops_early_on_the_training_loss) {
  temp_dir dir;
  write_quadrants(dir, 600, 200);
  auto s = small_run(dir);
  s.max_epochs = 6;
  s.eval_every_epochs = 2;
  auto sum = train_single_process(s);
  BOOST_REQUIRE_MESSAGE(sum, error_text(sum));
  auto metrics = read_text(dir.file("runs/t/metrics.jsonl"));
  BOOST_TEST(std::count(metrics.begin(), metrics.end(), '\n') == 3); // epochs 2, 4 and 6
  for (auto step : {"\"step\": 56,", "\"step\": 112,", "\"step\": 168,"})
    BOOST_TEST(metrics.find(step) != std::string::npos, step << " in " << metrics);
  BOOST_TEST(metrics.find("\"train_loss\": ") != std::string::npos);
  // Gradient ascent (a negative rate, which validation would refuse) raises the training loss
  // every epoch: patience 2 stops after the third evaluation.
  temp_dir again;
  write_quadrants(again, 600, 200);
  s = small_run(again);
  s.optimizer.learning_rate = -0.002f;
  s.optimizer.momentum = 0.0f;
  s.patience = 2;
  s.early_stopping = stop_metric::train_loss;
  sum = train_single_process(s);
  BOOST_REQUIRE_MESSAGE(sum, error_text(sum));
  BOOST_TEST(sum->stop_reason == "early stopping: no lower training loss in 2 evaluations");
  BOOST_TEST(sum->epochs == 3.0);
}

BOOST_AUTO_TEST_CASE(seeded_runs_are_reproducible) {
  temp_dir dir;
  write_quadrants(dir, 300, 100);
  auto s = small_run(dir);
  s.max_epochs = 2;
  auto a = train_single_process(s), b = train_single_process(s);
  BOOST_REQUIRE(a && b);
  BOOST_TEST(a->test_loss == b->test_loss);
}

// The best validation model's test figures are those of the evaluation that found it: the same
// whether its parameters are kept to be saved (save-model both) or not (none: no copy of the
// model is held), and equal to that evaluation's row in metrics.jsonl (here an earlier one than the
// last: the final model's test accuracy is 1, the best's 0.99).
BOOST_AUTO_TEST_CASE(the_best_models_test_figures_need_no_copy_of_it) {
  temp_dir dir;
  write_quadrants(dir, 300, 100);
  auto s = small_run(dir);
  s.max_epochs = 12;
  s.optimizer.learning_rate = 0.1f;
  s.save_model = model_saving::both;
  s.name = "kept";
  auto kept = train_single_process(s);
  s.save_model = model_saving::none;
  s.name = "not-kept";
  auto not_kept = train_single_process(s);
  BOOST_REQUIRE_MESSAGE(kept, error_text(kept));
  BOOST_REQUIRE_MESSAGE(not_kept, error_text(not_kept));
  BOOST_TEST(kept->test_loss == not_kept->test_loss);
  BOOST_TEST(kept->test_accuracy == not_kept->test_accuracy);
  BOOST_TEST(!kept->best_model.empty());
  BOOST_TEST(not_kept->best_model.empty());
  // the row of the lowest validation loss (the best model's evaluation) holds its test loss
  std::istringstream rows{read_text(dir.file("runs/not-kept/metrics.jsonl"))};
  std::string row, best_row;
  double lowest = 1e30;
  auto number_after = [](const std::string& text, const std::string& key) {
    auto at = text.find("\"" + key + "\": ");
    BOOST_REQUIRE(at != std::string::npos);
    return std::stod(text.substr(at + key.size() + 4));
  };
  while (std::getline(rows, row))
    if (double loss = number_after(row, "validation_loss"); loss < lowest) {
      lowest = loss;
      best_row = row;
    }
  BOOST_TEST(number_after(best_row, "test_loss") == not_kept->test_loss, boost::test_tools::tolerance(1e-5));
}

BOOST_AUTO_TEST_CASE(too_few_classes_for_the_labels_is_named) {
  temp_dir dir;
  write_quadrants(dir, 120, 40);
  auto s = small_run(dir);
  s.model.layers.back().units = 3;
  auto sum = train_single_process(s);
  BOOST_REQUIRE(!sum);
  BOOST_TEST(describe(sum.error()) == "invalid_config: the model has 3 classes but " + dir.path()
                                        + " has label 3 (set model.classes or the logits layer)");
}

BOOST_AUTO_TEST_CASE(divergence_is_an_error) {
  temp_dir dir;
  write_quadrants(dir, 300, 100);
  auto s = small_run(dir);
  s.optimizer.learning_rate = 1e6f;
  auto sum = train_single_process(s);
  BOOST_REQUIRE(!sum);
  BOOST_TEST(sum.error() == actorps::errc::non_finite);
}

BOOST_AUTO_TEST_SUITE_END()
