// The Chief actor: validates what peers send, feeds control/run_control (the run's state machine
// and failure policy) and carries out the commands it returns: shard set-up and restore,
// evaluation, checkpoints, the summary, starting and stopping everyone.
#include "actors/chief.hpp"
#include "actors/exception_log.hpp"
#include "actors/chief_state.hpp"

#include "actors/chief_checkpoints.hpp"
#include "control/placement.hpp"
#include "control/chief_commands.hpp"
#include "control/run_control.hpp"
#include "actors/shard_reads.hpp"
#include "control/slicing.hpp"
#include "checkpoint/checkpoint_store.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"
#include "compute/cpu_backend.hpp"
#include "model/column_split.hpp"
#include "model/init.hpp"
#include "model/network.hpp"
#include "train/run_telemetry.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

namespace actorps {

using namespace detail;

namespace {

const char* tag = "chief";

// {"dense0/weights": "/job:ps/task:0/device:CPU:0", ...}: where each variable (or part) lives.
std::string variable_devices(const placement_plan& plan) {
  json_object out;
  for (uint32_t i = 0; i < plan.parts.size(); ++i)
    out.add(part_name(plan, i), ps_device(plan.parts[i].shard));
  return out.str();
}

// Per worker: its devices with TensorFlow's names (a tower each with compute.devices) and the
// most memory each held, for summary.json.
std::string worker_devices(const chief_state& st) {
  std::vector<std::string> rows;
  for (uint32_t j = 0; j < st.hellos.size(); ++j) {
    const auto& names = st.hellos[j].devices;
    std::vector<uint64_t> peaks(names.size(), 0);
    if (j < st.memory_peaks.size())
      for (size_t d = 0; d < peaks.size() && d < st.memory_peaks[j].size(); ++d)
        peaks[d] = st.memory_peaks[j][d];
    json_object row;
    row.add("worker", static_cast<int64_t>(j)).add_raw("devices", json_array(names)).add_raw("memory_peak_bytes", json_array(peaks));
    rows.push_back(row.str());
  }
  return "[" + join(rows, ", ") + "]";
}

void note_memory_peaks(chief_state& st, const progress_report& rep) {
  if (rep.worker >= st.memory_peaks.size())
    st.memory_peaks.resize(rep.worker + 1);
  auto& mine = st.memory_peaks[rep.worker];
  mine.resize(std::max(mine.size(), rep.memory_peak.size()), 0);
  for (size_t d = 0; d < rep.memory_peak.size(); ++d)
    mine[d] = std::max(mine[d], rep.memory_peak[d]);
}

// The shards' counters at an evaluation: stale drops, tensor bytes per worker step, the sync
// stragglers (per worker: steps that waited for it last) and the lag histogram.
void observe_counters(telemetry& t, int64_t step, const shard_stats& first, int64_t stale, double sent, double received) {
  std::vector<std::pair<std::string, double>> scalars{{"stale_dropped", static_cast<double>(stale)},
                                                      {"tensor_bytes/sent_per_step", sent},
                                                      {"tensor_bytes/received_per_step", received}};
  for (size_t j = 0; j < first.waited_on.size(); ++j) {
    scalars.emplace_back(cat("stragglers/worker_", j), static_cast<double>(first.waited_on[j]));
    t.metrics().set("actorps_straggler_steps", static_cast<double>(first.waited_on[j]), {"worker", std::to_string(j)});
  }
  t.scalars(step, scalars);
  histogram_data lag;
  for (size_t i = 0; i < first.lag_histogram.size(); ++i) {
    lag.bucket_limit.push_back(static_cast<double>(i));
    lag.bucket.push_back(static_cast<double>(first.lag_histogram[i]));
  }
  if (!lag.bucket.empty())
    t.histogram(step, "lag", lag);
}

} // namespace

std::string outcome_failure(const chief_outcome& outcome, const caf::error& exit_reason) {
  if (outcome.ok && outcome.summary)
    return {};
  if (!outcome.message.empty())
    return outcome.message;
  return exit_reason ? cat("stopped without a result (its exit reason: ", describe(exit_reason), ")")
                     : std::string{"stopped without a result"};
}

void detail::fail_run(chief_pointer self, caf::error err, peers what) {
  auto& st = self->state;
  auto text = describe(err);
  log_line(tag, text);
  {
    std::lock_guard<std::mutex> guard{st.cfg.outcome->mtx};
    st.cfg.outcome->ok = false;
    st.cfg.outcome->message = text;
    st.cfg.outcome->code = code_of(err);
  }
  for (auto& w : st.workers)
    if (w && what == peers::stop)
      self->send(w, stop_atom_v);
  for (auto& s : st.cfg.shards)
    if (what == peers::stop)
      self->send(s, stop_atom_v);
  self->quit(std::move(err));
}

namespace {

// Reports a failed op to the controller (which drops it, skips it, or fails the run).
failed_fn op_failed(chief_pointer self, uint64_t op, errc code = errc::peer_unreachable) {
  return [=](std::string why) { execute(self, self->state.ctl->failed(op, code, why, self->clock().now())); };
}

// Reads every shard's counters (the metrics row's fields), then pulls the model into the
// evaluation net (pull_model_then) and calls next with the row.
void read_model_then(chief_pointer self, uint64_t op, model_read how, std::function<void(json_object)> next) {
  auto& st = self->state;
  auto with_counters = [=](std::vector<shard_stats>& stats) {
    if (!self->state.ctl->wanted(op))
      return;
    uint64_t stale = 0;
    for (auto& one : stats)
      stale += one.stale_dropped;
    for (uint32_t s = 0; s < stats.size(); ++s)
      heard_from_shard(self, s);
    auto& first = stats.front(); // every push reaches every shard: shard 0 speaks for all
    self->state.global_step = static_cast<int64_t>(first.version / self->state.cfg.cluster.slices);
    self->state.stale_dropped = static_cast<int64_t>(stale);
    self->state.stragglers = first.waited_on;
    json_object row;
    row.add("global_step", self->state.global_step)
      .add("stale_dropped", self->state.stale_dropped)
      .add_raw("waited_on", json_array(first.waited_on))
      .add_raw("lag_histogram", json_array(first.lag_histogram));
    self->state.traffic.describe(row, self->state.ctl->worker_steps());
    auto& st = self->state;
    if (st.cfg.observed)
      observe_counters(*st.cfg.observed, st.global_step, first, st.stale_dropped,
                       st.traffic.per_step_sent(st.ctl->worker_steps()), st.traffic.per_step_received(st.ctl->worker_steps()));
    pull_model_then(self, op, how, [=] { next(row); }, op_failed(self, op));
  };
  ask_every_shard<shard_stats>(self, st.cfg.shards, st.cfg.cluster.request_timeout, "reading the counters",
                               with_counters, op_failed(self, op), stats_atom_v);
}

// An evaluation by the table's rows that finds a best model to keep reads the whole model for it
// (the model a moment after the one evaluated: training goes on meanwhile).
void evaluate(chief_pointer self, const run_command& c) {
  read_model_then(self, c.op, model_read::rows, [=](json_object row) {
    auto& st = self->state;
    if (st.ctl->phase() != run_phase::training)
      return execute(self, st.ctl->evaluated(c.op, false, self->clock().now()));
    if (auto err = st.monitor->evaluate(c.step, c.examples, row, c.train_loss, !st.eval_rows))
      return execute(self, st.ctl->failed(0, errc::file_error, cat("evaluation failed: ", describe(err))));
    auto evaluated = [=] { execute(self, self->state.ctl->evaluated(c.op, self->state.monitor->last_improved(), self->clock().now())); };
    if (!st.monitor->best_due())
      return evaluated();
    pull_model_then(
      self, c.op, model_read::whole,
      [=] {
        if (auto err = self->state.monitor->keep_best())
          return execute(self, self->state.ctl->failed(0, errc::file_error, cat("keeping the best model failed: ", describe(err))));
        evaluated();
      },
      op_failed(self, c.op));
  });
}

// Writes a checkpoint (c.best: the best-validation one) from the shards' kept snapshots
// (actors/chief_save.cpp).
void save(chief_pointer self, const run_command& c) {
  save_checkpoint(self, c, op_failed(self, c.op), op_failed(self, c.op, errc::file_error));
}

// The run's monitor (evaluations, metrics.jsonl, summary.json), opened once: when training starts,
// or at the finish of a resumed run whose checkpoint had already reached max-steps.
void open_monitor(chief_pointer self) {
  auto& st = self->state;
  if (st.monitor)
    return;
  st.monitor.emplace(st.cfg.train, to_string(st.cfg.cluster.mode), *st.net, st.eval_rows ? st.eval_rows->data : *st.cfg.data,
                     std::move(*st.log));
  if (st.eval_rows) // (the net holds the evaluation's rows of the table: the kept models are written as they are read)
    st.monitor->models_published_by(st.spec, [self](const std::string& path, const checkpoint_manifest& m) -> caf::expected<std::string> {
      auto& staged = self->state.staged;
      if (!staged)
        return caf::make_error(errc::invalid_argument, cat(path, ": the whole model was not read before it was kept"));
      if (auto err = staged->publish(m, path))
        return err;
      return path;
    });
  st.monitor->report_to(st.cfg.observed);
  if (st.restored)
    st.monitor->resume(st.restored->manifest.train_seconds);
  st.log.reset();
}

// The final evaluation and summary.json.
void finish(chief_pointer self, uint64_t op, std::optional<double> train_loss) {
  open_monitor(self); // (not yet open: a resumed run that had reached max-steps finishes at once)
  read_model_then(self, op, model_read::last, [=](json_object counters) {
    auto& st = self->state;
    auto& ctl = *st.ctl;
    if (st.monitor->last_evaluated_step() != ctl.steps())
      if (auto err = st.monitor->evaluate(ctl.steps(), ctl.examples(), counters, train_loss))
        return execute(self, ctl.failed(0, errc::file_error, cat("the final evaluation failed: ", describe(err))));
    auto digest = final_digest(st); // the final model
    if (!digest)
      return execute(self, ctl.failed(0, errc::file_error, cat("reading the final model failed: ", describe(digest.error()))));
    log_line(tag, cat("final weights digest ", *digest));
    auto workers = static_cast<int64_t>(st.cfg.cluster.workers.size()); // (elastic: those it started with)
    run_summary sum;
    sum.backend = cat("workers: ", workers, ", shards: ", st.plan.shards);
    sum.steps = ctl.steps();
    sum.stop_reason = ctl.stop_reason();
    sum.resumed_examples = st.restored ? st.restored->manifest.examples : 0;
    sum.train_seconds = ctl.seconds(self->clock().now());
    sum.resumed_seconds = st.restored ? st.restored->manifest.train_seconds : 0.0;
    json_object extra;
    extra.add("workers", workers)
      .add("shards", static_cast<int64_t>(st.plan.shards))
      .add("placement", st.plan.strategy)
      .add_raw("variable_devices", variable_devices(st.plan))
      .add_raw("worker_devices", worker_devices(st))
      .add("partitioner", st.plan.partitioner)
      .add("scope", st.plan.scope)
      .add("shard_learning_rate", double{st.shard_opt.learning_rate})
      .add("shard_momentum", double{st.shard_opt.momentum})
      .add("replication", to_string(st.cfg.cluster.replicate))
      .add("replicas_to_aggregate", static_cast<int64_t>(st.cfg.cluster.replicas_to_aggregate))
      .add("staleness", static_cast<int64_t>(st.cfg.cluster.staleness))
      .add("global_step", st.global_step)
      .add("worker_steps", ctl.worker_steps())
      .add("stale_dropped", st.stale_dropped)
      .add("stale_steps", ctl.stale_steps())
      .add("split_steps", ctl.split_steps())
      .add("workers_lost", ctl.workers_lost())
      .add_raw("stragglers", json_array(st.stragglers))
      .add("stalls", st.stalls)
      .add("weights_digest", *digest)
      .add("wire_precision", to_string(st.cfg.cluster.wire.precision))
      .add("gradient_compression", to_string(st.cfg.cluster.wire.compression))
      .add("value_compression", to_string(st.cfg.cluster.wire.value_compression))
      .add("resumed_from_step", st.restored ? st.restored->manifest.global_step : int64_t{-1})
      .add("attached_at_step", st.ctl->attached_step());
    if (st.cfg.cluster.wire.compression == sparsifier::topk || st.cfg.cluster.wire.value_compression == sparsifier::topk)
      extra.add("topk_ratio", st.cfg.cluster.wire.topk_ratio)
        .add("topk_warmup_steps", static_cast<int64_t>(st.cfg.cluster.wire.topk_warmup_steps));
    st.traffic.describe(extra, ctl.worker_steps());
    describe_elastic(self, extra);
    auto done = st.monitor->finish(std::move(sum), ctl.examples(), extra);
    if (!done)
      return execute(self, ctl.failed(0, errc::file_error, cat("writing the summary failed: ", describe(done.error()))));
    {
      std::lock_guard<std::mutex> guard{st.cfg.outcome->mtx};
      st.cfg.outcome->ok = true;
      st.cfg.outcome->summary = *done;
    }
    execute(self, ctl.finished(op));
  });
}

void start_workers(chief_pointer self) {
  auto& st = self->state;
  open_monitor(self);
  watch_stalls(self);
  const uint32_t slices = st.cfg.cluster.slices;
  for (uint32_t g = 0; g * slices < st.workers.size(); ++g) {
    slice_group group{g, {}};
    for (uint32_t k = 0; k < slices; ++k)
      group.slices.push_back(caf::actor_cast<caf::strong_actor_ptr>(st.workers[g * slices + k]));
    for (uint32_t k = 0; k < slices; ++k)
      if (!st.workers[g * slices + k])
        continue; // (an elastic id nobody holds)
      else if (st.cfg.cluster.model_parallel())
        self->send(st.workers[g * slices + k], start_atom_v, group);
      else
        self->send(st.workers[g * slices + k], start_atom_v);
  }
}

} // namespace

namespace {

// The actor's primitives for run_control's commands, whose meaning is control/chief_commands'.
class command_host final : public chief_command_host {
public:
  explicit command_host(chief_pointer self) : self_(self) {
  }
  bool ended() override {
    return self_->getf(caf::abstract_actor::is_terminated_flag);
  }
  void log(const run_command& c) override {
    auto& st = self_->state;
    log_line(tag, c.text);
    if (c.figures && st.cfg.observed)
      report_progress(*st.cfg.observed, st.shard_opt, c.figures->step, c.figures->examples_per_sec,
                      c.figures->steps_per_sec, c.figures->loss);
  }
  void membership(const run_command& c) override { record_membership(self_, c); }
  void tick_after(std::chrono::milliseconds after) override { self_->delayed_send(self_, after, tick_atom_v); }
  void start_workers() override { actorps::start_workers(self_); }
  void start_worker(uint32_t j) override { self_->send(self_->state.workers[j], start_atom_v); }
  void step_soon() override { self_->send(self_, step_atom_v); }
  void grant(uint32_t j, int64_t steps) override { self_->send(self_->state.workers[j], grant_atom_v, steps); }
  void stop_worker(uint32_t j) override { self_->send(self_->state.workers[j], stop_atom_v); }
  void evaluate(const run_command& c) override { actorps::evaluate(self_, c); }
  void save(const run_command& c) override { actorps::save(self_, c); }
  void finish(const run_command& c) override { actorps::finish(self_, c.op, c.train_loss); }
  void restore_shard(uint32_t s) override { detail::restore_shard(self_, s); }
  void quit() override {
    for (auto& s : self_->state.cfg.shards)
      self_->send(s, stop_atom_v);
    self_->quit();
  }
  void fail(errc code, const std::string& text) override { fail_run(self_, caf::make_error(code, text)); }

private:
  chief_pointer self_;
};

} // namespace

void detail::execute(chief_pointer self, run_commands cmds) {
  command_host host{self};
  carry_out(cmds, *self->state.ctl, host, self->state.in_graph.driver.get());
}

namespace {

caf::result<worker_welcome> on_register(chief_pointer self, const worker_hello& hello) {
  auto& st = self->state;
  auto hdl = caf::actor_cast<worker_replica_actor>(self->current_sender());
  if (!hdl)
    return caf::make_error(errc::protocol_error, "an anonymous registration (no worker to answer)");
  auto verdict = st.ctl->worker_registered(hello.worker, self->clock().now());
  if (verdict.code != errc::none)
    return caf::make_error(verdict.code, verdict.text);
  if (auto err = check_hello(self, hello)) // (after the index: an unknown one is named as such)
    return err;
  if (hello.worker >= st.workers.size())
    st.workers.resize(hello.worker + 1);
  st.workers[hello.worker] = hdl;
  if (hello.worker >= st.hellos.size())
    st.hellos.resize(hello.worker + 1);
  st.hellos[hello.worker] = hello;
  self->monitor(hdl);
  log_line(tag, cat("worker ", hello.worker, " is at ", hello.host));
  execute(self, std::move(verdict.then));
  worker_welcome welcome;
  welcome.plan = st.plan;
  welcome.workers = st.ctl->live();
  welcome.index = hello.worker;
  welcome.steps_left = verdict.steps_left;
  welcome.more = verdict.more;
  return welcome;
}

void on_down(chief_pointer self, const caf::down_msg& msg) {
  auto& st = self->state;
  const bool ours = msg.reason && msg.reason.category() == caf::atom("actorps");
  auto why = ours ? describe(msg.reason) : caf::to_string(msg.reason);
  for (uint32_t j = 0; j < st.workers.size(); ++j)
    if (st.workers[j] && msg.source == st.workers[j].address()) {
      elastic_worker_down(self, j);
      execute(self, st.ctl->worker_down(j, why, self->clock().now(), ours ? static_cast<errc>(msg.reason.code()) : errc::none));
      if (st.ctl->phase() != run_phase::done)
        in_graph_worker_down(self, j);
      return;
    }
  for (uint32_t s = 0; s < st.cfg.shards.size(); ++s)
    if (msg.source == st.cfg.shards[s].address())
      return execute(self, st.ctl->shard_down(s, why));
  for (uint32_t s = 0; s < st.cfg.row_links.size(); ++s) // (its stream ended: the shard's handle from now on)
    if (msg.source == st.cfg.row_links[s].address() && st.cfg.row_links[s] != st.cfg.shards[s]) {
      st.cfg.row_links[s] = st.cfg.shards[s];
      return log_line(tag, cat("evaluations read shard ", s, "'s rows through its handle from now on (their tensor "
                               "stream ended: ", why, ")"));
    }
}

chief_actor::behavior_type chief_behavior(chief_pointer self, chief_config cfg, bool detached) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.detached = detached;
  st.shard_opt = st.cfg.shard_optimizer;
  log_exceptions(self, tag);
  if (auto err = prepare(self)) {
    fail_run(self, caf::make_error(code_of(err), cat("cannot start: ", context_of(err))), peers::leave); // (its code:
    // invalid_config exits 2, a file that cannot be read 1)
  } else {
    log_line(tag, cat(to_string(st.cfg.cluster.mode), " with ", st.cfg.cluster.workers.size(), " workers: shards apply ",
                      to_string(st.shard_opt.kind), " with learning rate ", st.shard_opt.learning_rate,
                      st.shard_opt.kind == optimizer_kind::momentum ? cat(", momentum ", st.shard_opt.momentum) : ""));
    for (auto& s : st.cfg.shards)
      self->monitor(s);
    for (auto& link : st.cfg.row_links)
      self->monitor(link);
    self->set_down_handler([=](caf::down_msg& msg) { on_down(self, msg); });
    init_shards(self);
    execute(self, st.ctl->begin(self->clock().now()));
  }
  return {
    [=](register_atom, const worker_hello& hello) { return on_register(self, hello); },
    [=](join_atom, const worker_hello& hello) { return on_join(self, hello); },
    [=](lease_atom, const lease_request& req) { return on_lease(self, req); },
    [=](leave_atom, const lease_request& req) { return on_leave(self, req); },
    [=](progress_atom, const progress_report& rep) {
      auto from = caf::actor_cast<caf::actor_addr>(self->current_sender());
      if (rep.worker >= self->state.workers.size() || from != self->state.workers[rep.worker].address())
        return log_line(tag, cat("ignored a progress report for worker ", rep.worker, " from another sender"));
      auto& st = self->state;
      const auto now = self->clock().now();
      st.traffic.add(rep.bytes_sent, rep.bytes_received);
      note_memory_peaks(st, rep);
      st.reports.note(rep.worker, now);
      execute(self, st.ctl->progress(rep.worker, rep.steps, rep.examples, rep.loss_sum, rep.final, now, rep.global_step,
                                     rep.stale_steps, rep.split_steps));
      st.stall.observe(st.ctl->steps(), now);
    },
    [=](tick_atom) {
      if (self->current_sender() != self->ctrl())
        return log_line(tag, "ignored a tick from another sender: ticks are the chief's own");
      execute(self, self->state.ctl->tick(self->clock().now()));
    },
    [=](stall_atom) {
      if (self->current_sender() == self->ctrl())
        check_stall(self);
    },
    [=](step_atom) {
      if (self->current_sender() != self->ctrl())
        return log_line(tag, "ignored a step message from another sender: in-graph steps are the chief's own");
      in_graph_step(self);
    },
    [=](stop_atom) {
      auto from = self->current_sender();
      if (!from || from->node() != self->node())
        return log_line(tag, "ignored a stop from another node: only the chief's own node stops it (SIGTERM)");
      execute(self, self->state.ctl->terminate(self->clock().now()));
    },
    [=](stop_atom, uint32_t s) {
      auto& st = self->state;
      auto from = self->current_sender();
      if (s >= st.cfg.shards.size() || !from || from->node() != st.cfg.shards[s].node())
        return log_line(tag, cat("ignored a stop for shard ", s, " that did not come from its node"));
      execute(self, st.ctl->terminate(self->clock().now(), cat("shard ", s)));
    },
  };
}

} // namespace

chief_config chief_config_for(const train_settings& train, const cluster_settings& cluster) {
  chief_config cfg;
  cfg.train = train;
  cfg.cluster = cluster; // (its run_settings part)
  cfg.shard_optimizer = shard_optimizer(train.optimizer, cluster);
  return cfg;
}

chief_actor make_chief(caf::actor_system& sys, chief_config cfg, bool detached) {
  if (detached)
    return sys.spawn<caf::detached>(chief_behavior, std::move(cfg), true);
  return sys.spawn(chief_behavior, std::move(cfg), false);
}

} // namespace actorps
