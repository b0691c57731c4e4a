// The Chief actor: shard set-up, the worker barrier, global progress, evaluation and stop.
#include "actors/chief.hpp"

#include "actors/chief_checkpoints.hpp"
#include "actors/parameter_store.hpp"
#include "actors/placement.hpp"
#include "actors/slicing.hpp"
#include "checkpoint/checkpoint_store.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"
#include "compute/cpu_backend.hpp"
#include "model/column_split.hpp"
#include "model/init.hpp"
#include "model/mlp.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>

namespace actorps {

namespace {

constexpr int eval_batch = 1000;
const char* tag = "chief";

enum class phase { init_shards, waiting, training, stopping, finishing, done };

struct chief_state {
  chief_config cfg;
  std::unique_ptr<backend> be;
  std::unique_ptr<mlp> net;
  std::optional<run_log> log;
  std::optional<run_monitor> monitor;
  placement_plan plan;
  phase ph = phase::init_shards;
  size_t pending = 0;
  std::vector<worker_replica_actor> workers;
  std::vector<bool> finished;
  std::vector<std::vector<float>> params;
  int64_t steps = 0;        // global steps (updates)
  int64_t worker_steps = 0; // steps summed over workers
  int64_t examples = 0;
  double line_loss = 0.0;
  int64_t line_examples = 0;
  int64_t next_line_step = 0;
  double line_start = 0.0;
  double next_eval_epoch = 1.0;
  int64_t next_eval_step = 0;
  bool eval_in_flight = false;
  std::string stop_reason;
  std::chrono::steady_clock::time_point train_start;
  std::chrono::steady_clock::time_point deadline; // of the current wait; earlier ticks are stale
  optimizer_params shard_opt;                     // what the shards apply (async-adjusted)
  std::vector<bool> gone;                         // workers whose actor went down
  int64_t workers_lost = 0;
  int64_t global_step = 0;                        // shard 0's version at the last counters
  int64_t stale_dropped = 0;
  std::optional<checkpoint_store> store;          // checkpoint.dir, if set
  std::optional<checkpoint> restored;             // what the run resumes from
  int64_t next_save_step = 0;
  double next_save_seconds = 0.0;
  bool save_in_flight = false;
  std::vector<bool> recovering;                   // shards that went down and are being restored
  static inline const char* name = "chief";
};

using chief_pointer = chief_actor::stateful_pointer<chief_state>;

size_t worker_count(chief_pointer self) {
  return self->state.cfg.cluster.workers.size();
}

// What a registering worker is told: the plan, and (when its steps are the global steps: one
// data-parallel worker or one model-parallel group, not sync, whose aggregators count globally
// anyway) how many steps are left to train.max-steps.
worker_welcome welcome(chief_pointer self) {
  auto& st = self->state;
  worker_welcome out{st.plan, static_cast<uint32_t>(worker_count(self))};
  if (st.cfg.cluster.replicas() == 1 && st.cfg.train.max_steps > 0 && st.cfg.cluster.mode != "sync")
    out.steps_left = std::max<int64_t>(0, st.cfg.train.max_steps - st.steps);
  return out;
}

// The global step a shard's version stands for: every push in async/ssp, every aggregated step
// in sync; model-parallel: every slice of a group pushes once per step.
int64_t global_step_of(chief_pointer self, uint64_t version) {
  return static_cast<int64_t>(version / self->state.cfg.cluster.slices);
}

std::string worker_name(chief_pointer self, size_t j) {
  return cat("worker ", j, " at ", self->state.cfg.cluster.workers[j].str());
}

void stop_peers(chief_pointer self) {
  for (auto& w : self->state.workers)
    if (w)
      self->send(w, stop_atom_v);
  for (auto& s : self->state.cfg.shards)
    self->send(s, stop_atom_v);
}

void fail(chief_pointer self, caf::error err, const std::string& what) {
  auto& st = self->state;
  if (st.ph == phase::done)
    return;
  st.ph = phase::done;
  std::string text = cat(what, ": ", describe(err));
  log_line(tag, text);
  {
    std::lock_guard<std::mutex> guard{st.cfg.outcome->mtx};
    st.cfg.outcome->ok = false;
    st.cfg.outcome->message = text;
  }
  stop_peers(self);
  self->quit(std::move(err));
}

// Pulls every variable from every shard into a buffer of its own (evaluations and the final pull
// may overlap), loads it into the evaluation model and calls next with it.
// A request to a shard failed: while a shard is being restored that only drops the evaluation
// it served; otherwise the run fails.
void shard_failed(chief_pointer self, caf::error err, const std::string& what) {
  auto& st = self->state;
  if (std::any_of(st.recovering.begin(), st.recovering.end(), [](bool b) { return b; })) {
    log_line(tag, cat(what, " while a shard is being restored (", describe(err), "); skipped"));
    st.eval_in_flight = false;
    return;
  }
  fail(self, std::move(err), what);
}

void pull_model_then(chief_pointer self, std::function<void(const std::vector<std::vector<float>>&)> next) {
  auto& st = self->state;
  auto params = std::make_shared<std::vector<std::vector<float>>>(st.params); // sized like the model
  auto remaining = std::make_shared<size_t>(0);
  std::vector<std::pair<uint32_t, pull_request>> requests;
  for (uint32_t s = 0; s < st.plan.shards; ++s)
    for (auto& req : pull_requests_for(held_ranges(st.plan, s), chief_worker_id, st.cfg.cluster.max_slice_floats))
      requests.emplace_back(s, std::move(req));
  *remaining = requests.size();
  for (auto& [s, req] : requests) {
    auto shard = s;
    self->request(st.cfg.shards[shard], st.cfg.cluster.request_timeout, pull_atom_v, std::move(req))
      .then(
        [=](const pull_reply& reply) {
          if (auto err = scatter_slices(reply, *params))
            return fail(self, std::move(err), cat("pulling the model from shard ", shard, " failed"));
          if (--*remaining > 0)
            return;
          if (auto err = self->state.net->set_parameters(*params))
            return fail(self, std::move(err), "loading the pulled model failed");
          next(*params);
        },
        [=](caf::error& err) { shard_failed(self, std::move(err), cat("pulling the model from shard ", shard, " failed")); });
  }
}

// Asks every shard for its counters, then calls next with the metrics-row fields they give.
void collect_stats_then(chief_pointer self, std::function<void(json_object)> next) {
  auto& st = self->state;
  auto stats = std::make_shared<std::vector<shard_stats>>(st.cfg.shards.size());
  auto remaining = std::make_shared<size_t>(st.cfg.shards.size());
  for (size_t s = 0; s < st.cfg.shards.size(); ++s)
    self->request(st.cfg.shards[s], st.cfg.cluster.request_timeout, stats_atom_v)
      .then(
        [=](shard_stats& x) {
          (*stats)[s] = std::move(x);
          if (--*remaining > 0)
            return;
          uint64_t stale = 0;
          for (auto& one : *stats)
            stale += one.stale_dropped;
          auto& first = stats->front(); // every push reaches every shard: shard 0 speaks for all
          self->state.global_step = global_step_of(self, first.version);
          self->state.stale_dropped = static_cast<int64_t>(stale);
          json_object row;
          row.add("global_step", self->state.global_step)
            .add("stale_dropped", static_cast<int64_t>(stale))
            .add_raw("waited_on", json_array(first.waited_on))
            .add_raw("lag_histogram", json_array(first.lag_histogram));
          next(std::move(row));
        },
        [=](caf::error& err) { shard_failed(self, std::move(err), cat("reading shard ", s, "'s counters failed")); });
}

// FNV-1a over the bytes of every variable in creation order: equal digests, equal weights.
std::string weights_digest(const std::vector<std::vector<float>>& params) {
  uint64_t h = 1469598103934665603ULL;
  for (auto& var : params) {
    auto* bytes = reinterpret_cast<const unsigned char*>(var.data());
    for (size_t i = 0; i < var.size() * sizeof(float); ++i) {
      h ^= bytes[i];
      h *= 1099511628211ULL;
    }
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// Takes every shard's snapshot and writes a checkpoint (best: the best-validation one), then
// calls next. A failed save is logged and training goes on with the previous checkpoints.
void save_checkpoint_then(chief_pointer self, bool best, std::function<void()> next) {
  auto& st = self->state;
  if (!st.store || st.save_in_flight)
    return next();
  st.save_in_flight = true;
  auto snaps = std::make_shared<std::vector<shard_snapshot>>(st.cfg.shards.size());
  auto remaining = std::make_shared<size_t>(st.cfg.shards.size());
  auto failed = std::make_shared<bool>(false);
  run_position at{st.steps, st.examples, st.monitor ? st.monitor->seconds() : 0.0,
                  st.monitor ? st.monitor->last_validation_accuracy() : 0.0};
  auto started = std::chrono::steady_clock::now();
  auto done = [=](caf::error err) {
    auto& st = self->state;
    st.save_in_flight = false;
    if (err) {
      log_line(tag, cat("checkpoint at step ", at.global_step, " failed: ", describe(err),
                        "; training goes on, the previous checkpoints are intact"));
    } else {
      auto c = make_checkpoint(st.plan, st.net->spec(), st.shard_opt, st.cfg.train, st.cfg.cluster, at, *snaps);
      auto path = best ? st.store->save_best(c) : st.store->save(c);
      if (!path)
        log_line(tag, cat("checkpoint at step ", at.global_step, " failed: ", describe(path.error()),
                          "; training goes on, the previous checkpoints are intact"));
      else
        log_line(tag, cat(best ? "best model saved: " : "checkpoint saved: ", *path, " (step ", at.global_step, ", ",
                          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), " s)"));
    }
    next();
  };
  for (size_t s = 0; s < st.cfg.shards.size(); ++s)
    self->request(st.cfg.shards[s], st.cfg.cluster.request_timeout, save_atom_v)
      .then(
        [=](shard_snapshot& x) {
          (*snaps)[s] = std::move(x);
          if (--*remaining == 0 && !*failed)
            done(caf::none);
        },
        [=](caf::error& err) {
          if (*failed)
            return;
          *failed = true;
          done(caf::make_error(errc::peer_unreachable, cat("shard ", s, ": ", describe(err))));
        });
}

// Saves a regular checkpoint when checkpoint.every-steps or every-seconds says so.
void maybe_checkpoint(chief_pointer self) {
  auto& st = self->state;
  if (!st.store || st.save_in_flight || st.ph != phase::training)
    return;
  auto& c = st.cfg.cluster;
  bool by_steps = c.checkpoint_every_steps > 0 && st.steps >= st.next_save_step;
  bool by_time = c.checkpoint_every_seconds > 0 && st.monitor->seconds() >= st.next_save_seconds;
  if (!by_steps && !by_time)
    return;
  while (c.checkpoint_every_steps > 0 && st.next_save_step <= st.steps)
    st.next_save_step += c.checkpoint_every_steps;
  st.next_save_seconds = st.monitor->seconds() + c.checkpoint_every_seconds;
  save_checkpoint_then(self, false, [] {});
}

void finish_run(chief_pointer self) {
  auto& st = self->state;
  if (st.ph == phase::finishing || st.ph == phase::done)
    return;
  st.ph = phase::finishing;
  collect_stats_then(self, [=](json_object counters) {
  pull_model_then(self, [=](const std::vector<std::vector<float>>& final_params) {
    auto& st = self->state;
    if (st.monitor->last_evaluated_step() != st.steps)
      if (auto err = st.monitor->evaluate(st.steps, st.examples, counters))
        return fail(self, std::move(err), "the final evaluation failed");
    auto digest = weights_digest(final_params); // the final model, before finish() restores the best
    log_line(tag, cat("final weights digest ", digest));
    run_summary sum;
    sum.backend = "workers: " + std::to_string(worker_count(self)) + ", shards: "
                  + std::to_string(st.plan.shards);
    sum.steps = st.steps;
    sum.stop_reason = st.stop_reason;
    sum.resumed_examples = st.restored ? st.restored->manifest.examples : 0;
    sum.train_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - st.train_start).count();
    json_object extra;
    extra.add("workers", static_cast<int64_t>(worker_count(self)))
      .add("shards", static_cast<int64_t>(st.plan.shards))
      .add("placement", st.plan.strategy)
      .add("shard_learning_rate", double{st.shard_opt.learning_rate})
      .add("shard_momentum", double{st.shard_opt.momentum})
      .add("replicas_to_aggregate", static_cast<int64_t>(st.cfg.cluster.replicas_to_aggregate))
      .add("staleness", static_cast<int64_t>(st.cfg.cluster.staleness))
      .add("global_step", st.global_step)
      .add("worker_steps", st.worker_steps)
      .add("stale_dropped", st.stale_dropped)
      .add("workers_lost", st.workers_lost)
      .add("weights_digest", digest)
      .add("resumed_from_step", st.restored ? st.restored->manifest.global_step : int64_t{-1});
    auto done = st.monitor->finish(std::move(sum), st.examples, extra);
    if (!done)
      return fail(self, std::move(done.error()), "writing the summary failed");
    {
      std::lock_guard<std::mutex> guard{st.cfg.outcome->mtx};
      st.cfg.outcome->ok = true;
      st.cfg.outcome->summary = *done;
    }
    st.ph = phase::done;
    st.save_in_flight = false; // a periodic save still in flight ends with the final one
    save_checkpoint_then(self, false, [=] {
      for (auto& s : self->state.cfg.shards)
        self->send(s, stop_atom_v);
      self->quit();
    });
  });
  });
}

// Arms a tick after `in`; on_tick ignores ticks armed for an earlier wait.
void arm_deadline(chief_pointer self, std::chrono::milliseconds in) {
  self->state.deadline = std::chrono::steady_clock::now() + in;
  self->delayed_send(self, in, tick_atom_v);
}

void begin_stop(chief_pointer self, std::string reason) {
  auto& st = self->state;
  if (st.ph != phase::training)
    return;
  st.ph = phase::stopping;
  st.stop_reason = std::move(reason);
  log_line(tag, cat("stopping: ", st.stop_reason, "; waiting for the workers' final reports"));
  for (auto& w : st.workers)
    self->send(w, stop_atom_v);
  arm_deadline(self, st.cfg.cluster.request_timeout);
}

void check_stop(chief_pointer self) {
  auto& st = self->state;
  if (auto why = st.monitor->should_stop(st.steps, st.examples))
    begin_stop(self, *why);
}

void maybe_evaluate(chief_pointer self) {
  auto& st = self->state;
  double epochs = st.monitor->epochs(st.examples);
  bool due = epochs >= st.next_eval_epoch
             || (st.cfg.train.eval_every > 0 && st.steps >= st.next_eval_step);
  if (!due || st.eval_in_flight) {
    check_stop(self);
    return;
  }
  while (st.next_eval_epoch <= epochs)
    st.next_eval_epoch += 1.0;
  while (st.cfg.train.eval_every > 0 && st.next_eval_step <= st.steps)
    st.next_eval_step += st.cfg.train.eval_every;
  st.eval_in_flight = true;
  auto step = st.steps, examples = st.examples;
  collect_stats_then(self, [=](json_object counters) {
    pull_model_then(self, [=](const std::vector<std::vector<float>>&) {
      auto& st = self->state;
      st.eval_in_flight = false;
      if (st.ph != phase::training)
        return;
      if (auto err = st.monitor->evaluate(step, examples, counters))
        return fail(self, std::move(err), "evaluation failed");
      if (st.monitor->last_improved())
        save_checkpoint_then(self, true, [] {});
      check_stop(self);
    });
  });
}

void on_progress(chief_pointer self, const progress_report& rep) {
  auto& st = self->state;
  if (st.ph != phase::training && st.ph != phase::stopping)
    return;
  // The global step counts updates: every push in async and ssp, every aggregated step in sync.
  st.worker_steps += rep.steps;
  st.steps = st.cfg.cluster.mode == "sync" ? st.worker_steps / st.cfg.cluster.replicas_to_aggregate
                                           : st.worker_steps;
  st.examples += rep.examples;
  st.line_loss += rep.loss_sum;
  st.line_examples += rep.examples;
  if (rep.final && rep.worker < st.finished.size())
    st.finished[rep.worker] = true;
  if (st.steps >= st.next_line_step) {
    double now = st.monitor->seconds();
    double rate = st.line_examples / std::max(now - st.line_start, 1e-9);
    log_line(tag, cat("step ", st.steps, " epoch ", st.monitor->epochs(st.examples), " | ",
                      static_cast<int64_t>(rate), " examples/s | loss ",
                      st.line_examples > 0 ? st.line_loss / st.line_examples : 0.0));
    st.line_loss = 0.0;
    st.line_examples = 0;
    st.line_start = now;
    while (st.next_line_step <= st.steps)
      st.next_line_step += st.cfg.train.progress_every;
  }
  bool all_final = std::all_of(st.finished.begin(), st.finished.end(), [](bool b) { return b; });
  if (st.ph == phase::training && all_final) {
    // sync workers stop by themselves at train.max-steps, so every run stops at the same step
    st.ph = phase::stopping;
    st.stop_reason = cat("max steps ", st.cfg.train.max_steps, " reached");
    log_line(tag, cat("every worker stopped at the step limit"));
  }
  if (st.ph == phase::training) {
    maybe_evaluate(self);
    maybe_checkpoint(self);
  }
  if (st.ph == phase::stopping
      && std::all_of(st.finished.begin(), st.finished.end(), [](bool b) { return b; }))
    finish_run(self);
}

void maybe_start(chief_pointer self) {
  auto& st = self->state;
  if (st.ph != phase::waiting)
    return;
  for (auto& w : st.workers)
    if (!w)
      return;
  auto log = std::move(*st.log);
  st.log.reset();
  st.monitor.emplace(st.cfg.train, st.cfg.cluster.mode, *st.net, *st.cfg.data, std::move(log));
  st.ph = phase::training;
  st.train_start = std::chrono::steady_clock::now();
  st.next_line_step = st.cfg.train.progress_every;
  st.next_eval_step = st.cfg.train.eval_every;
  if (st.restored) { // resume the global step and the data position
    auto& m = st.restored->manifest;
    st.steps = m.global_step;
    st.worker_steps = st.cfg.cluster.mode == "sync" ? m.global_step * st.cfg.cluster.replicas_to_aggregate : m.global_step;
    st.examples = m.examples;
    st.next_line_step = st.steps + st.cfg.train.progress_every;
    st.next_eval_step = st.steps + st.cfg.train.eval_every;
    st.next_eval_epoch = std::floor(st.monitor->epochs(st.examples)) + 1.0;
  }
  st.next_save_step = st.steps + st.cfg.cluster.checkpoint_every_steps;
  st.next_save_seconds = st.cfg.cluster.checkpoint_every_seconds;
  log_line(tag, cat("all ", worker_count(self), " workers registered; training (", st.cfg.cluster.mode, ")"));
  if (!st.cfg.cluster.model_parallel()) {
    for (auto& w : st.workers)
      self->send(w, start_atom_v);
    return;
  }
  const uint32_t slices = st.cfg.cluster.slices;
  for (uint32_t g = 0; g * slices < st.workers.size(); ++g) {
    slice_group group{g, {}};
    for (uint32_t k = 0; k < slices; ++k)
      group.slices.push_back(caf::actor_cast<caf::strong_actor_ptr>(st.workers[g * slices + k]));
    for (uint32_t k = 0; k < slices; ++k)
      self->send(st.workers[g * slices + k], start_atom_v, group);
  }
}

// Sends every shard its setup; a shard that is already initialised keeps its values.
// Shard s's setup: from ckpt when given, else the seeded initial values (computed once by the
// caller and passed as values).
caf::expected<shard_setup> setup_for(chief_pointer self, uint32_t s, const checkpoint* ckpt,
                                     const std::vector<std::vector<float>>* values) {
  auto& st = self->state;
  shard_setup setup;
  setup.shard = s;
  setup.plan = st.plan;
  setup.optimizer = to_optimizer_config(st.shard_opt);
  setup.workers = static_cast<uint32_t>(worker_count(self));
  if (ckpt) {
    if (auto err = restore_into(*ckpt, setup))
      return err;
    return setup;
  }
  for (uint32_t k : variables_of(st.plan, s))
    setup.initial.push_back({k, 0, {(*values)[k]}});
  return setup;
}

void init_shards(chief_pointer self) {
  auto& st = self->state;
  std::vector<std::vector<float>> values; // only needed without a checkpoint
  if (!st.restored)
    values = initial_values(st.net->spec(), st.cfg.train.init, st.cfg.train.seed);
  st.pending = st.plan.shards;
  for (uint32_t s = 0; s < st.plan.shards; ++s) {
    auto setup = setup_for(self, s, st.restored ? &*st.restored : nullptr, &values);
    if (!setup)
      return fail(self, std::move(setup.error()), "restoring the checkpoint failed");
    self->request(st.cfg.shards[s], st.cfg.cluster.request_timeout, init_atom_v, std::move(*setup))
      .then(
        [=](const setup_reply& reply) {
          auto& st = self->state;
          log_line(tag, reply.already_initialized
                          ? cat("shard ", s, " at ", st.cfg.cluster.ps[s].str(), " was already initialised (version ",
                                reply.version, ", global step ", global_step_of(self, reply.version),
                                "); keeping its values")
                          : cat("initialised shard ", s, " at ", st.cfg.cluster.ps[s].str()));
          if (--st.pending == 0 && st.ph == phase::init_shards) {
            st.ph = phase::waiting;
            maybe_start(self);
          }
        },
        [=](caf::error& err) {
          fail(self, std::move(err), cat("initialising shard ", s, " at ", self->state.cfg.cluster.ps[s].str(), " failed"));
        });
  }
}

caf::error prepare(chief_pointer self) {
  auto& st = self->state;
  st.be = make_cpu_backend(1);
  mlp_spec spec = st.cfg.train.model;
  spec.input_size = st.cfg.data->train.cols;
  auto net = mlp::make(*st.be, spec, eval_batch);
  if (!net)
    return std::move(net.error());
  st.net = std::move(*net);
  if (st.cfg.cluster.model_parallel())
    if (auto why = check_split(spec, static_cast<int>(st.cfg.cluster.slices)); !why.empty())
      return caf::make_error(errc::invalid_config, why);
  auto log = run_log::open(st.cfg.train.run_dir, st.cfg.train.name);
  if (!log)
    return std::move(log.error());
  st.log.emplace(std::move(*log));
  auto strategy = parse_placement(st.cfg.cluster.placement);
  st.plan = make_placement(spec.variables(), static_cast<uint32_t>(st.cfg.shards.size()), *strategy);
  log_line(tag, placement_table(st.plan));
  if (!st.cfg.cluster.checkpoint_dir.empty()) {
    auto store = checkpoint_store::open(st.cfg.cluster.checkpoint_dir, st.cfg.cluster.checkpoint_keep);
    if (!store)
      return std::move(store.error());
    st.store.emplace(std::move(*store));
    if (st.cfg.cluster.checkpoint_restore) {
      auto found = st.store->load_latest();
      if (!found)
        return std::move(found.error());
      if (*found) {
        for (auto& why : (*found)->skipped)
          log_line(tag, cat("skipping a checkpoint that does not verify: ", why));
        auto& m = (*found)->ckpt.manifest;
        if (auto err = check_same_model(m, model_string(spec), checkpoint_variables(st.plan), (*found)->path))
          return err;
        log_line(tag, cat("restoring ", (*found)->path, ": global step ", m.global_step, ", ", m.examples,
                          " examples"));
        st.restored = std::move((*found)->ckpt);
      } else {
        log_line(tag, cat("no checkpoint in ", st.cfg.cluster.checkpoint_dir, "; starting from initial values"));
      }
    }
  }
  st.params.resize(st.plan.variables.size());
  for (size_t k = 0; k < st.params.size(); ++k)
    st.params[k].assign(static_cast<size_t>(st.plan.variables[k].rows) * st.plan.variables[k].cols, 0.0f);
  st.workers.resize(worker_count(self));
  st.finished.assign(worker_count(self), false);
  st.gone.assign(worker_count(self), false);
  st.recovering.assign(st.cfg.shards.size(), false);
  if (st.cfg.cluster.aggregated())
    for (uint32_t s = 0; s < st.plan.shards; ++s)
      if (pull_requests_for(held_ranges(st.plan, s), 0, st.cfg.cluster.max_slice_floats).size() > 1)
        return caf::make_error(errc::invalid_config,
                               cat("train.mode = ", st.cfg.cluster.mode, " needs each shard's variables in one message, but shard ",
                                   s, " holds ", bytes_per_shard(st.plan)[s], " bytes: raise cluster.max-message-bytes"));
  return caf::none;
}

caf::result<worker_welcome> on_register(chief_pointer self, const worker_hello& hello) {
  auto& st = self->state;
  if (hello.worker >= worker_count(self))
    return caf::make_error(errc::unknown_worker, cat("worker ", hello.worker, " registered but cluster.workers lists ",
                                                     worker_count(self), " workers"));
  if (!(hello.byte_order_probe == std::vector<float>{byte_order_probe_value}))
    return caf::make_error(errc::protocol_error, cat(worker_name(self, hello.worker),
                                                     " stores floats in another byte order; raw tensor copies need one"));
  if (st.ph == phase::training && st.gone[hello.worker]) { // a restarted worker rejoins
    auto hdl = caf::actor_cast<worker_replica_actor>(self->current_sender());
    st.workers[hello.worker] = hdl;
    st.gone[hello.worker] = false;
    st.finished[hello.worker] = false;
    self->monitor(hdl);
    log_line(tag, cat(worker_name(self, hello.worker), " rejoined from ", hello.host));
    self->send(hdl, start_atom_v);
    return welcome(self);
  }
  if (st.ph != phase::init_shards && st.ph != phase::waiting)
    return caf::make_error(errc::protocol_error, cat(worker_name(self, hello.worker),
                                                     " registered after training started"));
  auto hdl = caf::actor_cast<worker_replica_actor>(self->current_sender());
  st.workers[hello.worker] = hdl;
  self->monitor(hdl);
  size_t joined = std::count_if(st.workers.begin(), st.workers.end(), [](auto& w) { return static_cast<bool>(w); });
  log_line(tag, cat("worker ", hello.worker, " registered from ", hello.host, " (", joined, " of ",
                    worker_count(self), ")"));
  maybe_start(self);
  return welcome(self);
}

void on_down(chief_pointer self, const caf::down_msg& msg) {
  auto& st = self->state;
  if (st.ph == phase::done)
    return;
  for (size_t j = 0; j < st.workers.size(); ++j)
    if (st.workers[j] && msg.source == st.workers[j].address()) {
      if (st.finished[j] || st.gone[j])
        return;
      if ((st.ph != phase::training && st.ph != phase::stopping) || st.cfg.cluster.model_parallel())
        return fail(self, caf::make_error(errc::peer_unreachable,
                                          cat(worker_name(self, j), " went down (", caf::to_string(msg.reason), ")",
                                              st.cfg.cluster.model_parallel()
                                                ? "; in model-parallel mode its group cannot go on without its slice"
                                                : "")),
                    "lost a worker");
      st.gone[j] = true;
      st.finished[j] = true; // a stop no longer waits for it
      ++st.workers_lost;
      auto live = std::count(st.gone.begin(), st.gone.end(), false);
      log_line(tag, cat(worker_name(self, j), " went down (", caf::to_string(msg.reason), "); training goes on with ",
                        live, " worker(s); a restarted worker ", j, " rejoins"));
      if (live == 0)
        return fail(self, caf::make_error(errc::peer_unreachable, "every worker went down"), "lost every worker");
      if (st.ph == phase::stopping
          && std::all_of(st.finished.begin(), st.finished.end(), [](bool b) { return b; }))
        finish_run(self);
      return;
    }
  for (size_t s = 0; s < st.cfg.shards.size(); ++s)
    if (msg.source == st.cfg.shards[s].address() && st.cfg.reconnect_shard && st.store && st.ph == phase::training
        && !st.cfg.cluster.model_parallel()) {
      log_line(tag, cat("shard ", s, " at ", st.cfg.cluster.ps[s].str(), " went down (", caf::to_string(msg.reason),
                        "); waiting up to cluster.connect-timeout for its restart, then restoring it from the last "
                        "checkpoint (the workers wait)"));
      st.recovering[s] = true;
      self->send(self, init_atom_v, static_cast<uint32_t>(s));
      return;
    }
  for (size_t s = 0; s < st.cfg.shards.size(); ++s)
    if (msg.source == st.cfg.shards[s].address())
      return fail(self, caf::make_error(errc::peer_unreachable, cat("shard ", s, " at ", st.cfg.cluster.ps[s].str(),
                                                                    " went down (", caf::to_string(msg.reason), ")")),
                  "lost a shard");
}

// After shard s went down: reconnects to its restart (blocking: the chief has its own thread) and
// sets it up from the newest checkpoint that verifies.
void restore_shard(chief_pointer self, uint32_t s) {
  auto& st = self->state;
  auto hdl = st.cfg.reconnect_shard(s);
  if (!hdl)
    return fail(self, std::move(hdl.error()), cat("shard ", s, " did not come back"));
  auto found = st.store->load_latest();
  if (!found || !*found)
    return fail(self, found ? caf::make_error(errc::file_error, cat("no checkpoint in ", st.store->dir()))
                            : std::move(found.error()),
                cat("cannot restore shard ", s));
  for (auto& why : (*found)->skipped)
    log_line(tag, cat("skipping a checkpoint that does not verify: ", why));
  auto setup = setup_for(self, s, &(*found)->ckpt, nullptr);
  if (!setup)
    return fail(self, std::move(setup.error()), cat("cannot restore shard ", s));
  st.cfg.shards[s] = std::move(*hdl);
  self->monitor(st.cfg.shards[s]);
  auto path = (*found)->path;
  auto step = (*found)->ckpt.manifest.global_step;
  // The restored shard continues at the others' update count (sync: their step), its values
  // from the checkpoint; with one shard there is nobody to ask and the checkpoint's count stays.
  auto versions = std::make_shared<std::vector<uint64_t>>();
  auto asked = std::make_shared<size_t>(st.cfg.shards.size() - 1);
  auto setup_ptr = std::make_shared<shard_setup>(std::move(*setup));
  auto send_setup = [=] {
    for (auto v : *versions)
      setup_ptr->version = std::max(setup_ptr->version, v);
    self->request(self->state.cfg.shards[s], self->state.cfg.cluster.request_timeout, init_atom_v, *setup_ptr)
    .then(
      [=](const setup_reply& reply) {
        self->state.recovering[s] = false;
        log_line(tag, reply.already_initialized
                        ? cat("shard ", s, " came back already initialised (version ", reply.version, ")")
                        : cat("shard ", s, " restored from ", path, " (step ", step, "), continuing at update ",
                              setup_ptr->version, "; training goes on"));
      },
      [=](caf::error& err) { fail(self, std::move(err), cat("restoring shard ", s, " failed")); });
  };
  if (*asked == 0)
    return send_setup();
  for (uint32_t o = 0; o < st.cfg.shards.size(); ++o)
    if (o != s)
      self->request(st.cfg.shards[o], st.cfg.cluster.request_timeout, stats_atom_v)
        .then(
          [=](const shard_stats& x) {
            versions->push_back(x.version);
            if (--*asked == 0)
              send_setup();
          },
          [=](caf::error& err) { fail(self, std::move(err), cat("reading shard ", o, "'s version failed")); });
}

// Names the peers the start-up still waits for.
std::string missing_peers(chief_pointer self) {
  auto& st = self->state;
  if (st.ph == phase::init_shards)
    return cat(st.pending, " shard(s) to answer their setup");
  std::string missing;
  for (size_t j = 0; j < st.workers.size(); ++j)
    if (!st.workers[j])
      missing += (missing.empty() ? "" : ", ") + worker_name(self, j);
  return missing;
}

void on_tick(chief_pointer self) {
  auto& st = self->state;
  auto now = std::chrono::steady_clock::now();
  bool starting = st.ph == phase::init_shards || st.ph == phase::waiting;
  if (starting && now + std::chrono::milliseconds(1) < st.deadline) {
    // a reminder during start-up: say whom we wait for, every 5 s until the deadline
    log_line(tag, cat("waiting for ", missing_peers(self)));
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(st.deadline - now);
    self->delayed_send(self, std::min(left, std::chrono::milliseconds(5000)), tick_atom_v);
    return;
  }
  if (now + std::chrono::milliseconds(1) < st.deadline)
    return; // armed for a wait that has already ended
  if (starting)
    return fail(self, caf::make_error(errc::timeout, cat("no answer from ", missing_peers(self),
                                                         " within cluster.startup-timeout")),
                "start-up failed");
  if (st.ph == phase::stopping) {
    log_line(tag, "not every worker sent its final report in time; finishing without it");
    finish_run(self);
  }
}

chief_actor::behavior_type chief_behavior(chief_pointer self, chief_config cfg) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.shard_opt = shard_optimizer(st.cfg.train.optimizer, st.cfg.cluster);
  log_line(tag, cat(st.cfg.cluster.mode, " with ", worker_count(self), " workers: shards apply ",
                    to_string(st.shard_opt.kind), " with learning rate ", st.shard_opt.learning_rate,
                    st.shard_opt.kind == optimizer_kind::momentum ? cat(", momentum ", st.shard_opt.momentum) : ""));
  if (auto err = prepare(self)) {
    fail(self, std::move(err), "cannot start");
  } else {
    for (auto& s : st.cfg.shards)
      self->monitor(s);
    self->set_down_handler([=](caf::down_msg& msg) { on_down(self, msg); });
    init_shards(self);
    st.deadline = std::chrono::steady_clock::now() + st.cfg.cluster.startup_timeout;
    self->delayed_send(self, std::min(st.cfg.cluster.startup_timeout, std::chrono::milliseconds(5000)),
                       tick_atom_v);
    log_line(tag, cat("waiting for ", worker_count(self), " workers"));
  }
  return {
    [=](register_atom, const worker_hello& hello) { return on_register(self, hello); },
    [=](progress_atom, const progress_report& rep) { on_progress(self, rep); },
    [=](init_atom, uint32_t s) { restore_shard(self, s); },
    [=](tick_atom) { on_tick(self); },
  };
}

} // namespace

chief_actor make_chief(caf::actor_system& sys, chief_config cfg, bool detached) {
  if (detached)
    return sys.spawn<caf::detached>(chief_behavior, std::move(cfg));
  return sys.spawn(chief_behavior, std::move(cfg));
}

} // namespace actorps
