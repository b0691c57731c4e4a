// Evaluation rows, best-model tracking and the summary.
#include "train/run_monitor.hpp"

#include "train/model_report.hpp"

#include "checkpoint/checkpoint_store.hpp"
#include "saved_model/saved_model.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "train/evaluate.hpp"

#include <algorithm>
#include <filesystem>

namespace actorps {

run_monitor::run_monitor(const train_settings& s, std::string mode, network& net, const data_splits& data,
                         run_log log)
  : settings_(s),
    mode_(std::move(mode)),
    net_(net),
    data_(data),
    log_(std::move(log)),
    rule_({s.max_steps, s.max_epochs, s.target_accuracy, s.patience, s.max_seconds, s.early_stopping}),
    start_(std::chrono::steady_clock::now()) {
}

double run_monitor::seconds() const {
  return resumed_ + std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

double run_monitor::epochs(int64_t examples) const {
  return static_cast<double>(examples) / std::max(1, data_.train.rows);
}

caf::error run_monitor::record(json_object row) {
  row.add("wall_seconds", seconds());
  return log_.append_metrics(row);
}

caf::expected<run_monitor::set_figures> run_monitor::evaluate_sets() {
  auto val = actorps::evaluate(net_, data_.validation);
  if (!val)
    return std::move(val.error());
  auto test = actorps::evaluate(net_, data_.test);
  if (!test)
    return std::move(test.error());
  return set_figures{*val, *test};
}

void run_monitor::models_published_by(model_spec spec, model_publisher publish) {
  spec_ = std::move(spec);
  publish_ = std::move(publish);
}

caf::error run_monitor::keep(const best_model& b) {
  if (keeps_best_model() && publish_) { // (the whole model is written: published now)
    auto path = publish_model("best", b.step, b.validation_accuracy);
    if (!path)
      return std::move(path.error());
    best_path_ = *path;
  } else if (keeps_best_model()) { // (to be saved; its test figures are its evaluation's: no copy otherwise)
    if (auto err = net_.get_parameters(best_params_))
      return err;
  }
  best_step_ = b.step;
  best_validation_accuracy_ = b.validation_accuracy;
  best_test_ = b.test;
  return caf::none;
}

// The whole model, read a moment after the evaluation that found it (training went on): its
// figures are its own, so that the saved best model gives what the summary says.
caf::error run_monitor::keep_best() {
  if (!due_)
    return caf::none;
  auto figures = evaluate_sets();
  if (!figures)
    return std::move(figures.error());
  if (auto err = keep({due_->step, figures->validation.accuracy, figures->test}))
    return err;
  due_.reset();
  return caf::none;
}

caf::error run_monitor::evaluate(int64_t step, int64_t examples, const json_object& extra,
                                 std::optional<double> train_loss, bool whole) {
  auto figures = evaluate_sets();
  if (!figures)
    return std::move(figures.error());
  const auto& val = figures->validation;
  const auto& test = figures->test;
  double t = seconds();
  last_improved_ = rule_.observe_evaluation(val.loss, val.accuracy, t, train_loss);
  last_validation_accuracy_ = val.accuracy;
  due_.reset();
  if (last_improved_) {
    const best_model found{step, val.accuracy, test};
    if (keeps_best_model() && !whole) // (its parameters once the caller has read them all)
      due_ = found;
    else if (auto err = keep(found))
      return err;
  }
  json_object row;
  row.add("mode", mode_).add("step", step).add("epoch", epochs(examples)).add("wall_seconds", t)
    .add("examples", examples).add("validation_loss", val.loss)
    .add("validation_accuracy", val.accuracy).add("test_loss", test.loss)
    .add("test_accuracy", test.accuracy);
  if (train_loss)
    row.add("train_loss", *train_loss);
  row.merge(extra);
  if (auto err = log_.append_metrics(row))
    return err;
  if (telemetry_) {
    std::vector<std::pair<std::string, double>> scalars{{"validation/loss", val.loss},
                                                        {"validation/accuracy", val.accuracy},
                                                        {"test/loss", test.loss},
                                                        {"test/accuracy", test.accuracy}};
    if (train_loss)
      scalars.emplace_back("train/loss", *train_loss);
    telemetry_->scalars(step, scalars);
  }
  log_line(mode_, cat("eval at step ", step, " epoch ", epochs(examples), ": validation loss ",
                      val.loss, " accuracy ", val.accuracy, ", test accuracy ", test.accuracy));
  last_step_ = step;
  return caf::none;
}

std::optional<std::string> run_monitor::should_stop(int64_t step, int64_t examples) const {
  return rule_.should_stop(step, epochs(examples), seconds());
}

caf::expected<std::string> run_monitor::model_folder() const {
  auto dir = cat(settings_.run_dir, "/", settings_.name, "/model");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return caf::make_error(errc::file_error, cat(dir, ": cannot create: ", ec.message()));
  return dir;
}

checkpoint_manifest run_monitor::kept_manifest(int64_t step, double validation_accuracy) const {
  saved_model m;
  m.spec = spec();
  m.scaling = data_.scaling;
  m.step = step;
  m.validation_accuracy = validation_accuracy;
  m.class_names = data_.class_names;
  auto man = saved_manifest(m);
  man.mode = mode_;
  man.batch_size = settings_.batch_size;
  man.seed = settings_.seed;
  return man;
}

caf::expected<std::string> run_monitor::save_model(const char* which, std::vector<std::vector<float>> values,
                                                   int64_t step, double validation_accuracy) {
  auto dir = model_folder();
  if (!dir)
    return std::move(dir.error());
  auto path = cat(*dir, "/", which);
  checkpoint c;
  c.manifest = kept_manifest(step, validation_accuracy);
  c.shards.push_back(saved_shard(std::move(values)));
  if (auto err = write_checkpoint(c, path))
    return err;
  log_line(mode_, cat(which, " model saved: ", path, " (step ", step, ", validation accuracy ", validation_accuracy,
                      ")"));
  return path;
}

caf::expected<std::string> run_monitor::publish_model(const char* which, int64_t step, double validation_accuracy) {
  auto dir = model_folder();
  if (!dir)
    return std::move(dir.error());
  auto path = publish_(cat(*dir, "/", which), kept_manifest(step, validation_accuracy));
  if (!path)
    return path;
  log_line(mode_, cat(which, " model saved: ", *path, " (step ", step, ", validation accuracy ", validation_accuracy,
                      ")"));
  return path;
}

bool run_monitor::keeps_best_model() const {
  return settings_.save_model == model_saving::both || settings_.save_model == model_saving::best_only;
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
  const auto saving = settings_.save_model;
  if ((saving == model_saving::both || saving == model_saving::final_only) && publish_) {
    auto path = publish_model("final", last_step_, last_validation_accuracy_);
    if (!path)
      return std::move(path.error());
    sum.final_model = *path;
  } else if (saving == model_saving::both || saving == model_saving::final_only) {
    std::vector<std::vector<float>> final_params;
    if (auto err = net_.get_parameters(final_params))
      return err;
    auto path = save_model("final", std::move(final_params), last_step_, last_validation_accuracy_);
    if (!path)
      return std::move(path.error());
    sum.final_model = *path;
  }
  if ((saving == model_saving::both || saving == model_saving::best_only) && !best_params_.empty()) {
    auto path = save_model("best", std::move(best_params_), best_step_, best_validation_accuracy_);
    if (!path)
      return std::move(path.error());
    sum.best_model = *path;
  }
  if (!best_path_.empty())
    sum.best_model = best_path_;
  // The best validation model's test figures: those of its evaluation (the same parameters on the
  // same examples), or the final model's where no evaluation of this process found one.
  const auto& best_test = best_test_ ? *best_test_ : *final_test;
  sum.test_accuracy = best_test.accuracy;
  sum.test_loss = best_test.loss;
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
  add_model(out, s.preset, spec());
  out.add_raw("class_names", json_array(data_.class_names));
  json_object data; // (what actorps-eval reads a run's model against by default)
  data.add("dir", s.data.dir).add("format", to_string(s.data.format))
    .add("validation_size", static_cast<int64_t>(s.data.validation_size));
  out.add_raw("data", data.str());
  json_object models;
  models.add("final", sum.final_model).add("best", sum.best_model);
  out.add_raw("models", models.str());
  out.merge(extra);
  if (auto err = log_.write_summary(out))
    return err;
  return sum;
}

} // namespace actorps
