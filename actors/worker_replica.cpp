// The WorkerReplica actor: an adapter around replica_control (the worker's state machine) and a
// replica_step (the whole model, or one slice of a model-parallel group). Handlers validate,
// feed the controller, and carry out the commands it returns: requests, steps, reports.
#include "actors/worker_replica.hpp"
#include "actors/exception_log.hpp"

#include "control/slicing.hpp"
#include "control/worker_commands.hpp"
#include "control/value_views.hpp"
#include "actors/reach_later.hpp"
#include "actors/worker_state.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <chrono>
#include <cmath>
#include <thread>

namespace actorps {

using namespace detail;

void detail::fail(worker_pointer self, caf::error err, const std::string& what) {
  auto& st = self->state;
  if (st.ctl->phase() == replica_phase::done)
    return;
  st.ctl->failed();
  log_line(st.tag, cat(what, ": ", describe(err)));
  self->quit(std::move(err));
}

namespace {

// The report's figures for the node's telemetry: the mean training loss since the last report,
// examples/sec, and where the steps' time went.
void observe_report(worker_pointer self, const replica_command& c, std::optional<double> loss) {
  auto& st = self->state;
  const auto now = std::chrono::steady_clock::now();
  const double span = std::chrono::duration<double>(now - st.reported_at).count();
  const bool first = st.reported_at == std::chrono::steady_clock::time_point{};
  st.reported_at = now;
  auto t = st.timing.take();
  st.cfg.observed->metrics().add("actorps_worker_steps_total", static_cast<double>(c.steps));
  st.cfg.observed->metrics().set("actorps_worker_seen_global_step", static_cast<double>(st.ctl->step()));
  if (c.steps == 0) // (a report of no steps, the final one say: no point at 0 on the charts)
    return;
  std::vector<std::pair<std::string, double>> scalars{{"step/compute_ms", t.compute_ms},
                                                      {"step/push_ms", t.push_ms},
                                                      {"step/wait_for_pull_ms", t.wait_ms}};
  if (c.steps > 0 && st.batches) // (the input pipeline's wait is inside compute_ms; elastic workers have none)
    scalars.emplace_back("step/input_wait_ms", 1000.0 * st.batches->take_waited_seconds() / static_cast<double>(c.steps));
  if (loss)
    scalars.emplace_back("train/loss", *loss);
  if (!first && span > 0)
    scalars.emplace_back("examples/sec", static_cast<double>(c.examples) / span);
  st.cfg.observed->scalars(st.ctl->step(), scalars);
}

// Sends a progress report; returns an error when the loss cannot be read or is not finite.
caf::error send_report(worker_pointer self, const replica_command& c) {
  auto& st = self->state;
  auto m = st.step->model().take_metrics();
  if (!m)
    return std::move(m.error());
  if (auto err = check_divergence(*m, cat("step ", st.ctl->step())))
    return err;
  bool counts = c.steps > 0 || c.examples > 0;
  progress_report rep;
  rep.worker = st.cfg.index;
  rep.steps = c.steps;
  rep.examples = c.examples;
  rep.loss_sum = counts ? m->loss * m->rows : 0.0;
  rep.final = c.final;
  rep.global_step = st.ctl->step();
  rep.bytes_sent = st.bytes_sent;
  rep.bytes_received = st.bytes_received;
  rep.stale_steps = c.stale_steps;
  rep.split_steps = c.split_steps;
  for (auto& be : st.devices)
    rep.memory_peak.push_back(be->memory().peak);
  if (st.cfg.observed)
    observe_report(self, c, m->rows > 0 ? std::optional<double>{m->loss} : std::nullopt);
  st.bytes_sent = st.bytes_received = 0;
  self->send(st.cfg.chief, progress_atom_v, rep);
  return caf::none;
}

// Tells the controller where the step stands (model-parallel: after a begin or a part arrived).
void follow_step(worker_pointer self) {
  auto& st = self->state;
  const auto phase = st.step->status();
  if (phase == step_phase::ready)
    st.timing.compute_ends(std::chrono::steady_clock::now());
  execute(self, step_followed(*st.ctl, phase, st.step->rows()));
}

void watch_chief(worker_pointer self);

// Asks the chief for the next data lease (elastic); its answer is the controller's input.
void ask_lease(worker_pointer self, const replica_command& c) {
  self->request(self->state.cfg.chief, self->state.cfg.cluster.request_timeout, lease_atom_v, c.lease)
    .then([=, epoch = c.epoch](data_lease& lease) { execute(self, self->state.ctl->lease_answered(epoch, std::move(lease))); },
          [=, epoch = c.epoch](caf::error& err) {
            execute(self, self->state.ctl->lease_failed(epoch, code_of(err), describe(err)));
          });
}

// One step on the current parameters: loads the next batch (elastic: the rows the controller
// took from its leases) and begins the step (with an embedding table, once its rows are in).
void compute_step(worker_pointer self, const replica_command& c) {
  auto& st = self->state;
  int rows = 0;
  if (st.ctl->phase() == replica_phase::done)
    return;
  st.timing.compute_begins(std::chrono::steady_clock::now());
  if (st.table) // (its batch drawn as an earlier step pushed, its rows asked back with it; or drawn now)
    return st.table->fetches.ahead() > 0 ? take_rows_ahead(self) : fetch_rows(self);
  if (st.cfg.cluster.elastic.on) {
    copy_examples(st.cfg.data->train, st.cfg.train.data.augment, c.batch.rows, c.batch.count, c.batch.augment_seed,
                  st.images.data(), st.labels.data());
    rows = c.batch.count;
  } else {
    rows = st.batches->next(st.images.data(), st.labels.data()).rows;
  }
  compute_loaded(self, rows);
}

// Tells the chief this worker leaves (how far its data leases got), then quits.
void leave_job(worker_pointer self, lease_request report) {
  auto& st = self->state;
  self->request(st.cfg.chief, st.cfg.cluster.request_timeout, leave_atom_v, std::move(report))
    .then([=](const data_lease&) { self->quit(); },
          [=](caf::error& err) {
            log_line(self->state.tag, cat("the chief did not take the leave (", describe(err), "); quitting anyway"));
            self->quit();
          });
}

// After the chief went down: reaches its restart (the node's connect runs in a helper), then
// registers again.
void reach_chief(worker_pointer self) {
  reach_later<chief_actor>(
    self, self->state.detached, self->state.cfg.reconnect_chief,
    [=](chief_actor chief) {
      auto& st = self->state;
      if (st.ctl->phase() != replica_phase::paused)
        return;
      st.cfg.chief = std::move(chief);
      watch_chief(self);
      execute(self, st.ctl->chief_reconnected(self->clock().now()));
    },
    [=](caf::error err) {
      if (self->state.ctl->phase() == replica_phase::paused)
        fail(self, std::move(err), "the chief did not come back");
    });
}

void register_with_chief(worker_pointer self) {
  auto& st = self->state;
  auto hello = worker_hello_for(st.cfg.train, st.cfg.cluster.placement, static_cast<uint32_t>(st.cfg.cluster.ps.size()), *st.cfg.data,
                                st.cfg.index, st.cfg.host, st.device_names);
  self->request(st.cfg.chief, st.cfg.cluster.request_timeout, register_atom_v, hello)
    .then(
      [=](worker_welcome& welcome) {
        if (auto err = accept_plan(self, std::move(welcome.plan)))
          return fail(self, std::move(err), "registration refused");
        execute(self, self->state.ctl->registered(welcome.steps_left, welcome.more, self->state.plan.shards));
      },
      [=](caf::error& err) { fail(self, std::move(err), "registering with the chief failed"); });
}

// The actor's primitives of control/worker_commands: each command's meaning lives there.
struct actor_host final : worker_command_host {
  worker_pointer self;
  bool over = false;
  explicit actor_host(worker_pointer s) : self(s) {}
  bool ended() override { return over; }
  void register_hello() override { register_with_chief(self); }
  void reconnect_chief() override { reach_chief(self); }
  void pull() override { send_pulls(self); }
  void compute(const replica_command& c) override { compute_step(self, c); }
  void push() override { push_gradients(self); }
  void report(const replica_command& c) override {
    if (auto err = send_report(self, c)) {
      over = true;
      detail::fail(self, std::move(err), c.final ? "the final report failed" : "the progress report failed");
    }
  }
  void reconnect_shards(const std::vector<uint32_t>& shards) override { detail::reconnect_shards(self, shards); }
  void ask_lease(const replica_command& c) override { actorps::ask_lease(self, c); }
  void arm(worker_timer t, std::chrono::milliseconds after) override {
    switch (t) { // (each comes back to the actor itself: timer_fired)
      case worker_timer::lease: self->delayed_send(self, after, lease_atom_v); break;
      case worker_timer::retry: self->delayed_send(self, after, step_atom_v); break;
      case worker_timer::tick: self->delayed_send(self, after, tick_atom_v); break;
    }
  }
  void announce_stop() override { self->state.step->announce_stop(); } // (a group stops together)
  void leave(const lease_request& progress) override {
    over = true;
    leave_job(self, progress);
  }
  void quit() override {
    over = true;
    self->quit();
  }
  void fail(errc code, const std::string& text) override {
    over = true;
    log_line(self->state.tag, text);
    self->quit(caf::make_error(code, text));
  }
  void log(const std::string& text) override { log_line(self->state.tag, text); }
};

} // namespace

void detail::compute_loaded(worker_pointer self, int rows) {
  auto& st = self->state;
  if (st.ctl->phase() == replica_phase::done)
    return;
  const auto started = std::chrono::steady_clock::now();
  if (st.table) // (its ids renumbered to the local table's rows by its exchange)
    st.step->model().load_renumbered_batch(st.images.data(), st.labels.data(), rows, st.table->current().exchange->distinct());
  else
    st.step->model().load_batch(st.images.data(), st.labels.data(), rows);
  st.pushes.begin_step();
  if (st.leads)
    st.leads->begin_step();
  st.encoder->begin_step(static_cast<uint64_t>(st.ctl->step())); // top-k's warm-up follows the global step
  if (auto err = st.step->begin(rows))
    return fail(self, std::move(err), "the step failed");
  if (static_cast<int>(st.cfg.index) == st.cfg.cluster.slow_worker) // debug.slowdown: a straggler
    std::this_thread::sleep_for((std::chrono::steady_clock::now() - started) * (st.cfg.cluster.slowdown - 1.0));
  follow_step(self);
}

void detail::execute(worker_pointer self, replica_commands commands) {
  actor_host host{self};
  carry_out(commands, host);
}

namespace {

// Monitors the chief and dispatches the down messages of the chief and the shards.
void watch_chief(worker_pointer self) {
  self->monitor(self->state.cfg.chief);
  self->set_down_handler([=](caf::down_msg& msg) {
    auto& st = self->state;
    if (msg.source == st.cfg.chief.address())
      return execute(self, st.ctl->chief_down(msg.reason ? cat("the chief went down (", caf::to_string(msg.reason), ")")
                                                         : std::string{"the chief quit"},
                                              !msg.reason || msg.reason == caf::exit_reason::normal));
    for (uint32_t s = 0; s < st.cfg.shards.size(); ++s)
      if (msg.source == st.cfg.shards[s].address()) {
        execute(self, st.ctl->shard_down(s, msg.reason ? cat("shard ", s, " went down (", caf::to_string(msg.reason), ")")
                                                       : cat("shard ", s, " quit"),
                                         !msg.reason || msg.reason == caf::exit_reason::normal));
        return abandon_fetch(self); // (a table's rows pulled from it never come)
      }
  });
}

worker_replica_actor::behavior_type worker_behavior(worker_pointer self, worker_replica_config cfg, bool detached) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.detached = detached;
  st.tag = cat("worker ", st.cfg.index);
  log_exceptions(self, st.tag);
  st.ctl = std::make_unique<replica_control>(control_config(st.cfg));
  if (auto err = prepare(self)) {
    fail(self, std::move(err), "cannot start");
  } else {
    if (!st.cfg.cluster.in_graph()) // wait-free backprop: each part goes out once computed
      st.step->on_gradients([self](size_t first) {
        auto& st = self->state;
        if (st.leads)
          st.leads->completed(static_cast<uint32_t>(first), std::chrono::steady_clock::now());
        if (st.ctl->pushes_early()) // (a step computed ahead pushes once the replies before it are in)
          push_due(self, first);
      });
    for (auto& s : st.cfg.shards)
      self->monitor(s);
    watch_chief(self);
    execute(self, st.ctl->begin(self->clock().now()));
  }
  return {
    [=](start_atom) { execute(self, self->state.ctl->start()); },
    [=](start_atom, const slice_group& group) {
      if (self->state.ctl->phase() == replica_phase::done)
        return;
      if (auto err = join_group(self, group))
        return fail(self, std::move(err), "joining the model-parallel group failed");
      execute(self, self->state.ctl->start());
    },
    [=](slice_atom, layer_part& part) {
      auto& st = self->state;
      if (st.ctl->phase() == replica_phase::done)
        return;
      if (auto err = st.step->receive(std::move(part)))
        return fail(self, std::move(err), "a model-parallel exchange failed");
      follow_step(self);
    },
    [=](grant_atom, int64_t steps) {
      if (caf::actor_cast<caf::actor_addr>(self->current_sender()) == self->state.cfg.chief.address())
        execute(self, self->state.ctl->granted(steps));
    },
    [=](step_atom) {
      if (self->current_sender() == self->ctrl())
        execute(self, timer_fired(*self->state.ctl, worker_timer::retry, self->clock().now()));
    },
    [=](stop_atom) { execute(self, self->state.ctl->stop()); },
    [=](leave_atom) {
      log_line(self->state.tag, "leaving the job (SIGTERM): finishing the step in flight");
      execute(self, self->state.ctl->leave());
    },
    [=](lease_atom) { // to itself: ask for data again after a pause or a failed request
      if (self->current_sender() == self->ctrl())
        execute(self, timer_fired(*self->state.ctl, worker_timer::lease, self->clock().now()));
    },
    [=](tick_atom) {
      if (self->current_sender() == self->ctrl())
        execute(self, timer_fired(*self->state.ctl, worker_timer::tick, self->clock().now()));
    },
    [=](compute_atom, gradient_request& req) { return compute_part(self, std::move(req)); },
  };
}

} // namespace

worker_replica_actor make_worker_replica(caf::actor_system& sys, worker_replica_config cfg, bool detached) {
  if (detached)
    return sys.spawn<caf::detached>(worker_behavior, std::move(cfg), true);
  return sys.spawn(worker_behavior, std::move(cfg), false);
}

} // namespace actorps
