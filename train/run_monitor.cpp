// Evaluation rows, best-model tracking and the summary.
#include "train/run_monitor.hpp"

#include "train/model_report.hpp"

#include "common/log.hpp"
#include "train/evaluate.hpp"

#include <algorithm>

namespace actorps {

run_monitor::run_monitor(const train_settings& s, std::string mode, network& net, const data_splits& data,
                         run_log log)
  : settings_(s),
    mode_(std::move(mode)),
    net_(net),
    data_(data),
    log_(std::move(log)),
    rule_({s.max_steps, s.max_epochs, s.target_accuracy, s.patience, s.max_seconds}),
    start_(std::chrono::steady_clock::now()) {
}

double run_monitor::seconds() const {
  return resumed_ + std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

double run_monitor::epochs(int64_t examples) const {
  return static_cast<double>(examples) / std::max(1, data_.train.rows);
}

caf::error run_monitor::evaluate(int64_t step, int64_t examples, const json_object& extra) {
  auto val = actorps::evaluate(net_, data_.validation);
  if (!val)
    return std::move(val.error());
  auto test = actorps::evaluate(net_, data_.test);
  if (!test)
    return std::move(test.error());
  double t = seconds();
  last_improved_ = rule_.observe_evaluation(val->loss, val->accuracy, t);
  last_validation_accuracy_ = val->accuracy;
  if (last_improved_)
    if (auto err = net_.get_parameters(best_params_))
      return err;
  json_object row;
  row.add("mode", mode_).add("step", step).add("epoch", epochs(examples)).add("wall_seconds", t)
    .add("examples", examples).add("validation_loss", val->loss)
    .add("validation_accuracy", val->accuracy).add("test_loss", test->loss)
    .add("test_accuracy", test->accuracy);
  row.merge(extra);
  if (auto err = log_.append_metrics(row))
    return err;
  log_line(mode_, cat("eval at step ", step, " epoch ", epochs(examples), ": validation loss ",
                      val->loss, " accuracy ", val->accuracy, ", test accuracy ", test->accuracy));
  last_step_ = step;
  return caf::none;
}

std::optional<std::string> run_monitor::should_stop(int64_t step, int64_t examples) const {
  return rule_.should_stop(step, epochs(examples), seconds());
}

caf::expected<run_summary> run_monitor::finish(run_summary sum, int64_t examples,
                                               const json_object& extra) {
  sum.mode = mode_;
  sum.wall_seconds = seconds();
  auto final_test = actorps::evaluate(net_, data_.test);
  if (!final_test)
    return std::move(final_test.error());
  sum.final_test_accuracy = final_test->accuracy;
  sum.final_test_loss = final_test->loss;
  if (!best_params_.empty())
    if (auto err = net_.set_parameters(best_params_))
      return err;
  auto best_test = actorps::evaluate(net_, data_.test);
  if (!best_test)
    return std::move(best_test.error());
  sum.test_accuracy = best_test->accuracy;
  sum.test_loss = best_test->loss;
  sum.best_validation_accuracy = rule_.best_validation_accuracy();
  sum.best_validation_loss = rule_.best_validation_loss();
  sum.examples_per_second = (examples - sum.resumed_examples) / std::max(sum.train_seconds - sum.resumed_seconds, 1e-9);
  sum.epochs = epochs(examples);
  sum.seconds_to_target = rule_.seconds_to_target();
  log_line(mode_, cat("stopped: ", sum.stop_reason, "; test accuracy ", sum.test_accuracy,
                      " (best validation model), ", sum.final_test_accuracy, " (final model)"));
  const auto& s = settings_;
  json_object out;
  out.add("mode", sum.mode).add("backend", sum.backend).add("test_accuracy", sum.test_accuracy)
    .add("test_loss", sum.test_loss).add("final_test_accuracy", sum.final_test_accuracy)
    .add("final_test_loss", sum.final_test_loss)
    .add("best_validation_accuracy", sum.best_validation_accuracy)
    .add("best_validation_loss", sum.best_validation_loss).add("wall_seconds", sum.wall_seconds)
    .add("train_seconds", sum.train_seconds).add("examples_per_second", sum.examples_per_second)
    .add("steps", sum.steps).add("epochs", sum.epochs)
    .add("target_accuracy", s.target_accuracy).add("seconds_to_target", sum.seconds_to_target)
    .add("stop_reason", sum.stop_reason).add("batch_size", s.batch_size)
    .add("optimizer", to_string(s.optimizer.kind))
    .add("learning_rate", double{s.optimizer.learning_rate})
    .add("seed", static_cast<int64_t>(s.seed));
  add_model(out, s.preset, net_.spec());
  out.merge(extra);
  if (auto err = log_.write_summary(out))
    return err;
  return sum;
}

} // namespace actorps
