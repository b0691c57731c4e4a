// The single-process training loop.
#include "train/trainer.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "data/batcher.hpp"
#include "data/dataset.hpp"
#include "gpu/device_select.hpp"
#include "model/init.hpp"
#include "model/mlp.hpp"
#include "model/optimizer.hpp"
#include "train/evaluate.hpp"
#include "train/run_log.hpp"
#include "train/stop_rule.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace actorps {

namespace {

constexpr int eval_batch = 1000;
const char* tag = "train";

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Everything one run needs, built by prepare().
struct session {
  mnist_data data;
  std::unique_ptr<backend> be;
  std::unique_ptr<mlp> net;
  std::optional<optimizer> opt;
  std::optional<run_log> log;
};

caf::expected<session> prepare(const train_settings& s) {
  session out;
  auto t0 = std::chrono::steady_clock::now();
  auto data = load_mnist_dir(s.data_dir, s.validation_size);
  if (!data)
    return std::move(data.error());
  out.data = std::move(*data);
  log_line(tag, cat("loaded ", out.data.train.rows, " training, ", out.data.validation.rows,
                    " validation and ", out.data.test.rows, " test examples from ", s.data_dir,
                    " in ", seconds_since(t0), " s"));
  mlp_spec spec = s.model;
  spec.input_size = out.data.train.cols;
  int max_label = std::max({out.data.train.max_label, out.data.validation.max_label,
                            out.data.test.max_label});
  if (max_label >= spec.classes)
    return caf::make_error(errc::invalid_config, cat("model.classes = ", spec.classes, " but ",
                                                     s.data_dir, " has label ", max_label));
  auto be = select_backend(s.device, tag);
  if (!be)
    return std::move(be.error());
  out.be = std::move(*be);
  auto net = mlp::make(*out.be, spec, std::max(s.batch_size, eval_batch));
  if (!net)
    return std::move(net.error());
  out.net = std::move(*net);
  if (auto err = out.net->set_parameters(initial_values(spec, s.init, s.seed)))
    return err;
  std::vector<size_t> sizes;
  for (auto& var : spec.variables())
    sizes.push_back(var.size());
  auto opt = optimizer::make(*out.be, s.optimizer, sizes);
  if (!opt)
    return std::move(opt.error());
  out.opt.emplace(std::move(*opt));
  auto log = run_log::open(s.run_dir, s.name);
  if (!log)
    return std::move(log.error());
  out.log.emplace(std::move(*log));
  log_line(tag, cat("model ", spec.input_size, " -> ", spec.hidden.size(), " hidden (",
                    to_string(spec.hidden_activation), ") -> ", spec.classes, ", ",
                    spec.variables().size(), " variables; optimizer ", to_string(s.optimizer.kind),
                    " lr ", s.optimizer.learning_rate, "; batch ", s.batch_size, "; backend ",
                    out.be->name()));
  return out;
}

} // namespace

caf::expected<run_summary> train_single_process(const train_settings& s) {
  auto prepared = prepare(s);
  if (!prepared)
    return std::move(prepared.error());
  session& ss = *prepared;
  mlp& net = *ss.net;
  const dataset& train = ss.data.train;
  batcher batches{train, partition_range(train.rows, 0, 1), s.batch_size, s.seed};
  std::vector<float> images(static_cast<size_t>(s.batch_size) * train.cols);
  std::vector<float> labels(static_cast<size_t>(s.batch_size));
  stop_rule rule{{s.max_steps, s.max_epochs, s.target_accuracy, s.patience}};
  std::vector<std::vector<float>> best_params;

  run_summary sum;
  sum.backend = ss.be->name();
  int64_t step = 0, examples = 0, interval_rows = 0;
  double interval_loss = 0.0, train_seconds = 0.0, interval_train_start = 0.0;
  int64_t interval_examples_start = 0;
  const auto start = std::chrono::steady_clock::now();
  auto epochs_done = [&] { return static_cast<double>(examples) / train.rows; };

  int64_t last_eval_step = -1;
  // Evaluates on validation and test, updates the stop rule and the best model, logs a row.
  auto run_evaluation = [&]() -> caf::error {
    auto pending = net.take_metrics(); // evaluate() needs empty running metrics
    if (!pending)
      return std::move(pending.error());
    interval_loss += pending->loss * pending->rows;
    interval_rows += pending->rows;
    auto val = evaluate(net, ss.data.validation);
    if (!val)
      return std::move(val.error());
    auto test = evaluate(net, ss.data.test);
    if (!test)
      return std::move(test.error());
    double t = seconds_since(start);
    if (rule.observe_evaluation(val->loss, val->accuracy, t))
      if (auto err = net.get_parameters(best_params))
        return err;
    json_object row;
    row.add("mode", "single").add("step", step).add("epoch", epochs_done())
      .add("wall_seconds", t).add("examples", examples)
      .add("validation_loss", val->loss).add("validation_accuracy", val->accuracy)
      .add("test_loss", test->loss).add("test_accuracy", test->accuracy);
    if (auto err = ss.log->append_metrics(row))
      return err;
    log_line(tag, cat("eval at step ", step, " epoch ", epochs_done(), ": validation loss ",
                      val->loss, " accuracy ", val->accuracy, ", test accuracy ", test->accuracy));
    last_eval_step = step;
    return caf::none;
  };

  for (;;) {
    auto t_step = std::chrono::steady_clock::now();
    batch_view view = batches.next(images.data(), labels.data());
    net.load_batch(images.data(), labels.data(), view.rows);
    net.forward();
    net.backward();
    ss.opt->apply(net.parameters(), net.gradients());
    ++step;
    examples += view.rows;
    bool progress = step % s.progress_every == 0;
    bool eval = view.ends_epoch || (s.eval_every > 0 && step % s.eval_every == 0);
    if (progress || eval) {
      auto m = net.take_metrics();
      if (!m)
        return std::move(m.error());
      if (!std::isfinite(m->loss))
        return caf::make_error(errc::non_finite, cat("training diverged at step ", step, " (loss ",
                                                     m->loss, "); lower train.learning-rate"));
      interval_loss += m->loss * m->rows;
      interval_rows += m->rows;
    }
    train_seconds += seconds_since(t_step);
    if (progress) {
      double dt = train_seconds - interval_train_start;
      auto rate = static_cast<int64_t>((examples - interval_examples_start) / std::max(dt, 1e-9));
      log_line(tag, cat("step ", step, " epoch ", epochs_done(), " | ", rate, " examples/s | loss ",
                        interval_rows > 0 ? interval_loss / interval_rows : 0.0));
      interval_loss = 0.0;
      interval_rows = 0;
      interval_train_start = train_seconds;
      interval_examples_start = examples;
    }
    if (eval)
      if (auto err = run_evaluation())
        return err;
    if (auto why = rule.should_stop(step, epochs_done())) {
      sum.stop_reason = *why;
      if (last_eval_step != step) // the final model is always evaluated once
        if (auto err = run_evaluation())
          return err;
      break;
    }
  }
  sum.wall_seconds = seconds_since(start);
  auto final_test = evaluate(net, ss.data.test);
  if (!final_test)
    return std::move(final_test.error());
  sum.final_test_accuracy = final_test->accuracy;
  if (!best_params.empty())
    if (auto err = net.set_parameters(best_params))
      return err;
  auto best_test = evaluate(net, ss.data.test);
  if (!best_test)
    return std::move(best_test.error());
  sum.test_accuracy = best_test->accuracy;
  sum.test_loss = best_test->loss;
  sum.best_validation_accuracy = rule.best_validation_accuracy();
  sum.best_validation_loss = rule.best_validation_loss();
  sum.train_seconds = train_seconds;
  sum.examples_per_second = examples / std::max(train_seconds, 1e-9);
  sum.steps = step;
  sum.epochs = epochs_done();
  sum.seconds_to_target = rule.seconds_to_target();
  log_line(tag, cat("stopped: ", sum.stop_reason, "; test accuracy ", sum.test_accuracy,
                    " (best validation model), ", sum.final_test_accuracy, " (final model)"));
  json_object out;
  out.add("mode", "single").add("backend", sum.backend).add("test_accuracy", sum.test_accuracy)
    .add("test_loss", sum.test_loss).add("final_test_accuracy", sum.final_test_accuracy)
    .add("best_validation_accuracy", sum.best_validation_accuracy)
    .add("best_validation_loss", sum.best_validation_loss).add("wall_seconds", sum.wall_seconds)
    .add("train_seconds", sum.train_seconds).add("examples_per_second", sum.examples_per_second)
    .add("steps", sum.steps).add("epochs", sum.epochs)
    .add("target_accuracy", s.target_accuracy).add("seconds_to_target", sum.seconds_to_target)
    .add("stop_reason", sum.stop_reason).add("batch_size", s.batch_size)
    .add("optimizer", to_string(s.optimizer.kind)).add("learning_rate", double{s.optimizer.learning_rate})
    .add("seed", static_cast<int64_t>(s.seed));
  if (auto err = ss.log->write_summary(out))
    return err;
  return sum;
}

} // namespace actorps
