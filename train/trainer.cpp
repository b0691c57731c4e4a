// The single-process training loop.
#include "train/trainer.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "data/batch_pipeline.hpp"
#include "data/dataset.hpp"
#include "gpu/device_select.hpp"
#include "model/init.hpp"
#include "model/layers.hpp"
#include "model/network.hpp"
#include "model/optimizer.hpp"
#include "saved_model/saved_model.hpp"
#include "train/evaluate.hpp"
#include "train/model_report.hpp"
#include "train/run_log.hpp"
#include "train/run_telemetry.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>

namespace actorps {

namespace {

const char* tag = "train";

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The metrics row's training seconds (wall_seconds includes evaluations and start-up).
json_object training_time(double train_seconds) {
  json_object out;
  out.add("train_seconds", train_seconds);
  return out;
}

// Everything one run needs, built by prepare().
struct session {
  data_splits data;
  std::unique_ptr<backend> be;
  std::unique_ptr<network> net;
  std::optional<optimizer> opt;
  std::optional<run_log> log;
  std::shared_ptr<telemetry> observed;
};

// Puts the starting values into the network: init.from's, or those the seed makes, an embedding
// table's by rows, 65,536 at a time, straight into the network (its whole host copy beside the
// network's was 512 MiB more at a 2^22 x 32 table's peak).
caf::error load_start(network& net, const model_spec& spec, const train_settings& s) {
  const bool tables_by_rows = s.init.from.empty();
  auto start = starting_values(spec, s.init, s.seed, !tables_by_rows);
  if (!start)
    return std::move(start.error());
  if (!s.init.from.empty())
    log_line(tag, cat("starting from the values of ", s.init.from, " (weights digest ", weights_digest(*start), ")"));
  const auto vars = spec.variables();
  for (size_t k = 0; k < vars.size(); ++k) {
    const auto& v = (*start)[k];
    if (v.size() == vars[k].size() || !vars[k].table) { // (a wrong size is refused by name)
      if (auto err = net.upload_parameter(k, 0, v.data(), v.size()))
        return err;
      continue;
    }
    constexpr size_t chunk_rows = 65536;
    const auto rows = static_cast<size_t>(vars[k].rows), cols = static_cast<size_t>(vars[k].cols);
    std::vector<float> part;
    for (size_t first = 0; first < rows; first += chunk_rows) {
      const size_t n = std::min(chunk_rows, rows - first);
      part.resize(n * cols);
      table_rows_initial(s.seed, static_cast<uint32_t>(first), 1, n, static_cast<int>(cols), part.data());
      if (auto err = net.upload_parameter(k, first * cols, part.data(), part.size()))
        return err;
    }
  }
  return caf::none;
}

caf::expected<session> prepare(const train_settings& s) {
  if (!s.device.devices.empty())
    return caf::make_error(errc::invalid_config, "compute.devices: towers are a cluster worker's (actorps-node); "
                                                 "actorps-train computes on one device (compute.device)");
  session out;
  auto data = load_training_data(s, tag);
  if (!data)
    return std::move(data.error());
  out.data = std::move(*data);
  model_spec spec = with_input(s.model, out.data.model_input());
  if (auto err = check_model_reads(out.data, spec))
    return err;
  auto be = select_backend(s.device, tag);
  if (!be)
    return std::move(be.error());
  out.be = std::move(*be);
  auto net = network::make(*out.be, spec, std::max(s.batch_size, evaluation_batch(spec)), s.seed);
  if (!net)
    return std::move(net.error());
  out.net = std::move(*net);
  if (auto err = load_start(*out.net, spec, s))
    return err;
  auto opt = optimizer::make(*out.be, s.optimizer, spec.variables());
  if (!opt)
    return std::move(opt.error());
  out.opt.emplace(std::move(*opt));
  auto log = run_log::open(s.run_dir, s.name);
  if (!log)
    return std::move(log.error());
  out.log.emplace(std::move(*log));
  auto observed = open_run_telemetry(s, "trainer", 0, {{"backend", out.be->name()}});
  if (!observed)
    return std::move(observed.error());
  out.observed = std::move(*observed);
  log_model(tag, s, spec);
  log_line(tag, cat("optimizer ", to_string(s.optimizer.kind), " lr ", s.optimizer.learning_rate,
                    " (", to_string(s.optimizer.schedule), "); batch ", s.batch_size, "; backend ",
                    out.be->name()));
  return out;
}

} // namespace

caf::expected<run_summary> train_single_process(const train_settings& s) {
  if (auto err = run_log::check_free(s.run_dir, s.name)) // (a run in use: refused before anything is loaded)
    return err;
  auto prepared = prepare(s);
  if (!prepared)
    return std::move(prepared.error());
  session& ss = *prepared;
  network& net = *ss.net;
  const dataset& train = ss.data.train;
  // With an embedding the pipeline's threads also find the rows each batch's ids touch, ahead of
  // its step (on the training thread that was a third of a text-hash step), as workers renumber theirs
  std::function<batch_finisher()> collecting;
  if (net.embedding_table_rows() > 0 && s.data.prefetch_batches > 0) {
    const auto tokens = static_cast<int>(net.spec().input.size());
    collecting = [table = net.embedding_table_rows(), slots = static_cast<size_t>(s.batch_size) * net.spec().input.size(),
                  tokens] {
      auto mine = std::make_shared<touched_rows>(table, slots);
      return batch_finisher{[mine, tokens](float* images, int rows, batch_extras& out) {
        const auto& touched = mine->collect(images, rows, tokens);
        out.listed.assign(touched.begin(), touched.end());
        mine->give_positions(out.positions);
      }};
    };
  }
  batch_pipeline batches{train, partition_range(train.rows, 0, 1), s.batch_size, s.seed, s.data.augment,
                         s.data.threads, s.data.prefetch_batches, collecting};
  batch_extras extras;
  std::vector<float> images(static_cast<size_t>(s.batch_size) * net.spec().input.size());
  std::vector<float> labels(static_cast<size_t>(s.batch_size));
  run_monitor monitor{s, "single", net, ss.data, std::move(*ss.log)};
  monitor.report_to(ss.observed);

  run_summary sum;
  sum.backend = ss.be->name();
  int64_t step = 0, examples = 0, interval_rows = 0, interval_examples_start = 0;
  double interval_loss = 0.0, train_seconds = 0.0, interval_train_start = 0.0, input_waited = 0.0;
  loss_mean since_eval; // the training loss since the previous evaluation

  // Moves the training loss accumulated on the backend into the interval sums.
  auto collect_loss = [&]() -> caf::error {
    auto m = net.take_metrics();
    if (!m)
      return std::move(m.error());
    if (auto err = check_divergence(*m, cat("step ", step)))
      return err;
    interval_loss += m->loss * m->rows;
    interval_rows += m->rows;
    since_eval.add(m->loss * m->rows, m->rows);
    return caf::none;
  };
  auto evaluate = [&] {
    return monitor.evaluate(step, examples, training_time(train_seconds), since_eval.take());
  };

  for (;;) {
    auto t_step = std::chrono::steady_clock::now();
    batch_view view = batches.next(images.data(), labels.data(), &extras);
    // (a batch without positions, none collected, is loaded as load_batch does)
    net.load_collected_batch(images.data(), labels.data(), view.rows, extras.listed, extras.positions);
    net.forward(true);
    net.backward();
    ss.opt->apply(net.parameters(), net.gradients(), net.sparse_rows());
    ++step;
    examples += view.rows;
    bool progress = step % s.progress_every == 0;
    // (an epoch ends after exactly train.rows examples: examples / rows counts whole epochs)
    bool eval = (view.ends_epoch && s.eval_every_epochs > 0 && (examples / train.rows) % s.eval_every_epochs == 0)
                || (s.eval_every > 0 && step % s.eval_every == 0);
    if (progress || eval)
      if (auto err = collect_loss())
        return err;
    train_seconds += seconds_since(t_step);
    if (progress) {
      double dt = train_seconds - interval_train_start;
      auto rate = static_cast<int64_t>((examples - interval_examples_start) / std::max(dt, 1e-9));
      const double loss = interval_rows > 0 ? interval_loss / interval_rows : 0.0;
      log_line(tag, cat("step ", step, " epoch ", monitor.epochs(examples), " | ", rate, " examples/s | loss ", loss));
      report_progress(*ss.observed, s.optimizer, step, static_cast<double>(rate), s.progress_every / std::max(dt, 1e-9),
                      loss);
      const double waited = batches.take_waited_seconds();
      input_waited += waited;
      ss.observed->scalars(step, {{"input/wait_ms", 1000.0 * waited / s.progress_every}});
      interval_loss = 0.0;
      interval_rows = 0;
      interval_train_start = train_seconds;
      interval_examples_start = examples;
    }
    if (eval)
      if (auto err = evaluate())
        return err;
    if (auto why = monitor.should_stop(step, examples)) {
      sum.stop_reason = *why;
      if (monitor.last_evaluated_step() != step) { // the final model is always evaluated once
        if (auto err = collect_loss())
          return err;
        if (auto err = evaluate())
          return err;
      }
      break;
    }
  }
  sum.train_seconds = train_seconds;
  sum.steps = step;
  input_waited += batches.take_waited_seconds();
  json_object extra;
  extra.add("input_wait_seconds", input_waited); // (inside train_seconds: the steps waited for their batches)
  const auto memory = ss.be->memory();
  extra.add("device_memory", ss.be->is_gpu() ? to_string(s.device.gpu_memory) : std::string{"host"})
    .add("device_memory_peak_bytes", static_cast<int64_t>(memory.peak))
    .add("device_memory_reserved_bytes", static_cast<int64_t>(memory.reserved));
  log_line(tag, cat("device memory: peak ", memory.peak >> 20, " MiB",
                    memory.reserved > 0 ? cat(" of ", memory.reserved >> 20, " MiB reserved") : std::string{}));
  return monitor.finish(std::move(sum), examples, extra);
}

} // namespace actorps
