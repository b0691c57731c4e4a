// The WorkerReplica actor: register, wait for start, then pull -> compute -> push per step.
#include "actors/worker_replica.hpp"

#include "actors/slice_exchange.hpp"
#include "actors/slicing.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"
#include "data/batcher.hpp"
#include "gpu/device_select.hpp"
#include "model/mlp.hpp"
#include "model/mlp_slice.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>
#include <set>
#include <chrono>
#include <cmath>
#include <thread>

namespace actorps {

namespace {

struct worker_state {
  worker_replica_config cfg;
  std::string tag;
  std::unique_ptr<backend> be;
  std::unique_ptr<replica_model> model; // the whole mlp, or one vertical slice
  mlp* net = nullptr;                   // the whole model (data parallel)
  mlp_slice* slice_net = nullptr;       // one slice (model-parallel)
  std::unique_ptr<slice_exchange> exchange;
  std::vector<worker_replica_actor> peers; // model-parallel: the group's workers, by slice
  std::unique_ptr<batcher> batches;
  placement_plan plan;
  std::vector<std::vector<slice_ref>> held;     // per shard: the ranges this worker trains
  std::vector<std::vector<pull_request>> pulls; // per shard
  std::vector<float> images;
  std::vector<float> labels;
  size_t pending = 0; // pull or push replies outstanding in the current round
  bool started = false;
  bool start_requested = false; // the chief's start may overtake its welcome
  bool stopping = false;
  bool paused = false;          // the chief went down: no new steps until a restarted one starts us
  std::chrono::steady_clock::time_point start_deadline; // of the current wait for a start
  std::set<uint32_t> lost_shards; // shards whose connection broke in the current round
  bool round_broken = false;      // a reply of the current round failed: pull afresh after it
  bool resync_step = false;       // sync: after a recovery, the next step is the shards' version
  std::vector<size_t> in_flight;       // per shard: requests awaiting a reply
  std::vector<uint64_t> shard_epoch;   // per shard: bumped when it goes down; older replies are ignored
  bool done = false;
  int64_t step = 0;
  int64_t steps_left = -1;          // >= 0: stop by itself after this many more steps (worker_welcome)
  int64_t report_steps = 0;
  int64_t stale_steps = 0;          // sync: steps whose gradients came too late
  std::vector<uint64_t> versions;   // per shard: the version the current parameters came from
  // The smallest next step the replies of this round named: in sync mode the shards' aggregators
  // may be a step apart for a moment (a worker rejoining), and the slower one sets the pace.
  uint64_t round_next_step = UINT64_MAX;
  bool round_stale = false;         // a reply of this round said the gradients were dropped
  int64_t report_examples = 0;
  static inline const char* name = "worker_replica";
};

using worker_pointer = worker_replica_actor::stateful_pointer<worker_state>;

// Model-parallel: whether this slice is inside a step, waiting for the other slices' parts.
bool mid_step(const worker_state& st) {
  return st.exchange && st.exchange->status() == slice_exchange::state::waiting;
}

void fail(worker_pointer self, caf::error err, const std::string& what) {
  auto& st = self->state;
  if (st.done)
    return;
  st.done = true;
  log_line(st.tag, cat(what, ": ", describe(err)));
  self->quit(std::move(err));
}

// Creates the backend, the model and the batcher; returns an error naming what failed.
caf::error prepare(worker_pointer self) {
  auto& st = self->state;
  auto& cfg = st.cfg;
  auto be = select_backend(cfg.train.device, st.tag);
  if (!be)
    return std::move(be.error());
  st.be = std::move(*be);
  mlp_spec spec = cfg.train.model;
  spec.input_size = cfg.data->train.cols;
  const auto slices = static_cast<int>(cfg.cluster.slices);
  if (cfg.cluster.model_parallel()) {
    auto net = mlp_slice::make(*st.be, spec, static_cast<int>(cfg.index) % slices, slices, cfg.train.batch_size);
    if (!net)
      return std::move(net.error());
    st.slice_net = net->get();
    st.model = std::move(*net);
    // Made now, not when the chief's start arrives: another slice's first parts may come first
    // (they come over another connection) and must wait in the inbox. Until the group is known
    // there is nobody to send to.
    st.exchange = std::make_unique<slice_exchange>(*st.slice_net, [self](uint32_t to, layer_part part) {
      if (to < self->state.peers.size())
        self->send(self->state.peers[to], slice_atom_v, std::move(part));
    });
  } else {
    auto net = mlp::make(*st.be, spec, cfg.train.batch_size);
    if (!net)
      return std::move(net.error());
    st.net = net->get();
    st.model = std::move(*net);
  }
  // the slices of a group train one replica: same partition, same batches
  auto replica = static_cast<int>(cfg.index) / slices;
  auto replicas = static_cast<int>(cfg.cluster.replicas());
  auto range = partition_range(cfg.data->train.rows, replica, replicas);
  if (range.size() == 0)
    return caf::make_error(errc::invalid_config, cat("worker ", cfg.index, " has no training data: ",
                                                     cfg.data->train.rows, " examples for ", replicas, " replicas"));
  st.batches = std::make_unique<batcher>(cfg.data->train, range, cfg.train.batch_size,
                                         cfg.train.seed + static_cast<uint64_t>(replica));
  st.images.resize(static_cast<size_t>(cfg.train.batch_size) * spec.input_size);
  st.labels.resize(static_cast<size_t>(cfg.train.batch_size));
  log_line(st.tag, cat("partition [", range.begin, ", ", range.end, ") of ", cfg.data->train.rows,
                       " examples; backend ", st.be->name(),
                       cfg.cluster.model_parallel() ? cat("; slice ", cfg.index % cfg.cluster.slices, " of ", slices,
                                                          " in group ", replica)
                                                    : std::string{}));
  return caf::none;
}

// Checks that the chief's plan describes this worker's model; prepares the pull requests.
caf::error accept_plan(worker_pointer self, placement_plan plan) {
  auto& st = self->state;
  auto mine = st.model->spec().variables();
  bool same = plan.variables.size() == mine.size() && plan.shards == st.cfg.shards.size();
  for (size_t k = 0; same && k < mine.size(); ++k)
    same = plan.variables[k].name == mine[k].name && plan.variables[k].rows == mine[k].rows
           && plan.variables[k].cols == mine[k].cols;
  if (!same)
    return caf::make_error(errc::protocol_error,
                           cat("the chief's plan (", plan.variables.size(), " variables on ", plan.shards,
                               " shards) does not match this worker's model (", mine.size(),
                               " variables) and ", st.cfg.shards.size(), " shards: check model.* and cluster.ps"));
  st.pulls.clear();
  st.held.clear();
  st.versions.assign(plan.shards, 0);
  st.in_flight.assign(plan.shards, 0);
  st.shard_epoch.assign(plan.shards, 0);
  const uint32_t slices = st.cfg.cluster.slices;
  for (uint32_t s = 0; s < plan.shards; ++s) {
    st.held.push_back(held_ranges(plan, s, st.cfg.index % slices, slices));
    st.pulls.push_back(pull_requests_for(st.held.back(), st.cfg.index, st.cfg.cluster.max_slice_floats));
  }
  st.plan = std::move(plan);
  return caf::none;
}

void report(worker_pointer self, bool final) {
  auto& st = self->state;
  auto m = st.model->take_metrics();
  if (!m)
    return fail(self, std::move(m.error()), "reading the training loss failed");
  if (!std::isfinite(m->loss))
    return fail(self, caf::make_error(errc::non_finite, cat("training loss is ", m->loss, " at step ", st.step,
                                                            "; lower train.learning-rate")),
                "training diverged");
  // model-parallel: slice 0 speaks for its group (every slice computes the same loss)
  bool counts = st.cfg.index % st.cfg.cluster.slices == 0;
  progress_report rep{st.cfg.index, counts ? st.report_steps : 0, counts ? st.report_examples : 0,
                      counts ? m->loss * m->rows : 0.0, final};
  self->send(st.cfg.chief, progress_atom_v, rep);
  st.report_steps = 0;
  st.report_examples = 0;
}

void finish(worker_pointer self) {
  auto& st = self->state;
  report(self, true);
  if (st.done)
    return;
  st.done = true;
  if (st.exchange)
    st.exchange->announce_stop(); // a group stops together: the others drop the step I leave
  log_line(st.tag, cat("stopped at step ", st.step, st.stale_steps > 0 ? cat(" (", st.stale_steps, " steps dropped as stale)") : ""));
  self->quit();
}

// After a stop: quits once no pull or push is in flight and (model-parallel) not inside a step:
// a slice that left a step half done would drop its columns' update while the slices that had
// already finished the step pushed theirs. (Every slice waited on in the step is either still in
// it or has announced its stop, so the step ends either way.)
void maybe_finish(worker_pointer self) {
  auto& st = self->state;
  if (st.stopping && st.pending == 0 && !mid_step(st))
    finish(self);
}

void compute(worker_pointer self);

// Counts a request to shard s; returns the shard's epoch to check the reply against.
uint64_t track_request(worker_pointer self, uint32_t s) {
  auto& st = self->state;
  ++st.pending;
  ++st.in_flight[s];
  return st.shard_epoch[s];
}

// Returns whether a reply of shard s still counts (it went down since: no), uncounting it.
bool settle_request(worker_pointer self, uint32_t s, uint64_t epoch) {
  auto& st = self->state;
  if (st.done || st.shard_epoch[s] != epoch)
    return false;
  --st.in_flight[s];
  return true;
}

void recover_shards(worker_pointer self);

// Shard s went down: its outstanding requests will never be answered; the round is dropped.
void on_shard_down(worker_pointer self, uint32_t s, const caf::down_msg& msg) {
  auto& st = self->state;
  auto why = cat("shard ", s, " went down (", caf::to_string(msg.reason), ")");
  if (!st.cfg.reconnect_shard || st.cfg.cluster.model_parallel())
    return fail(self, caf::make_error(errc::peer_unreachable, why), "lost a shard");
  ++st.shard_epoch[s];
  st.pending -= st.in_flight[s];
  st.in_flight[s] = 0;
  st.lost_shards.insert(s);
  st.round_broken = true;
  if (st.pending == 0)
    recover_shards(self);
}

// After a round with a failed reply: reconnects to every lost shard (blocking, with retries; the
// worker has its own thread), then pulls afresh -- a restarted shard answers not_initialized
// until the chief has restored it, which just repeats this.
void recover_shards(worker_pointer self) {
  auto& st = self->state;
  st.round_broken = false;
  for (auto s : st.lost_shards) {
    log_line(st.tag, cat("shard ", s, " is gone; pausing until it is back (cluster.connect-timeout)"));
    auto hdl = st.cfg.reconnect_shard(s);
    if (!hdl)
      return fail(self, std::move(hdl.error()), cat("shard ", s, " did not come back"));
    st.cfg.shards[s] = std::move(*hdl);
    self->monitor(st.cfg.shards[s]);
    log_line(st.tag, cat("reconnected to shard ", s));
  }
  st.lost_shards.clear();
  st.resync_step = st.cfg.cluster.mode == train_mode::sync;
  if (st.stopping)
    return maybe_finish(self);
  self->delayed_send(self, std::chrono::milliseconds(200), step_atom_v);
}

// A pull or push to shard s failed. A broken connection (an error of CAF's, not the shard's
// refusal) or a restarted shard the chief has not restored yet (not_initialized) is survivable
// in async, sync and ssp mode when the worker can reconnect: the round is dropped and the worker pulls afresh
// once its other replies are in. Anything else fails the worker.
void on_shard_error(worker_pointer self, uint32_t s, caf::error err, const std::string& what) {
  auto& st = self->state;
  if (st.done)
    return;
  const bool lost = err.category() != caf::atom("actorps");
  const bool not_ready = err == errc::not_initialized;
  if (!st.cfg.reconnect_shard || st.cfg.cluster.model_parallel() || !(lost || not_ready))
    return fail(self, std::move(err), what);
  if (lost)
    st.lost_shards.insert(s);
  st.round_broken = true;
  if (--st.pending == 0)
    recover_shards(self);
}

// Uploads the values a pull or push reply carries; after the last reply of a round, runs the
// next step (or finishes after a stop).
void accept_values(worker_pointer self, uint32_t shard, const std::vector<variable_slice>& slices,
                   uint64_t version, bool completes_step) {
  auto& st = self->state;
  if (st.done)
    return;
  st.versions[shard] = version;
  for (auto& slice : slices)
    if (auto err = st.model->upload_parameter(slice.variable, slice.offset, slice.data.values.data(),
                                            slice.data.values.size()))
      return fail(self, std::move(err), cat("values from shard ", shard, " do not fit the model"));
  if (--st.pending > 0)
    return;
  if (st.round_broken)
    return recover_shards(self);
  if (!completes_step && st.resync_step) { // sync: a shard's version is the number of steps applied
    st.step = static_cast<int64_t>(*std::max_element(st.versions.begin(), st.versions.end()));
    st.resync_step = false;
  }
  if (completes_step) {
    // The shards name the next step: the worker's own + 1, or in sync mode the global step
    // (which a worker whose gradients were dropped as stale catches up to).
    if (st.round_stale) {
      ++st.stale_steps;
    } else {
      ++st.report_steps;
      if (st.steps_left > 0 && --st.steps_left == 0)
        st.stopping = true; // the only replica: its steps are the global steps
    }
    st.step = static_cast<int64_t>(st.round_next_step);
    st.round_stale = false;
    st.round_next_step = UINT64_MAX;
    // In sync mode the step is global: every worker stops at exactly train.max-steps, which
    // makes seeded sync runs repeatable to the bit.
    if (st.cfg.cluster.mode == train_mode::sync && st.cfg.train.max_steps > 0 && st.step >= st.cfg.train.max_steps)
      st.stopping = true;
    if (!st.stopping && st.report_steps >= st.cfg.cluster.report_every)
      report(self, false);
  }
  if (st.stopping)
    return maybe_finish(self);
  if (st.paused)
    return; // resumes with a fresh pull when a restarted chief starts us
  compute(self);
}

// The first step's parameters: a plain pull of this worker's share of every shard.
void send_pulls(worker_pointer self) {
  auto& st = self->state;
  for (uint32_t s = 0; s < st.plan.shards; ++s)
    for (auto& req : st.pulls[s]) {
      auto epoch = track_request(self, s);
      self->request(st.cfg.shards[s], st.cfg.cluster.request_timeout, pull_atom_v, req)
        .then(
          [=](const pull_reply& reply) {
            if (settle_request(self, s, epoch))
              accept_values(self, s, reply.slices, reply.version, false);
          },
          [=](caf::error& err) {
            if (settle_request(self, s, epoch))
              on_shard_error(self, s, std::move(err), cat("pull from shard ", s, " failed"));
          });
    }
}

// Pushes the gradients of the step to their shards. Each push asks for the updated values of the
// same ranges, so its reply carries the next step's parameters: one message each way per shard
// and step.
void push_gradients(worker_pointer self) {
  auto& st = self->state;
  auto fill = [&](uint32_t k, uint32_t offset, uint32_t count, float* dst) {
    return st.model->download_gradient(k, offset, dst, count);
  };
  for (uint32_t s = 0; s < st.plan.shards; ++s) {
    auto requests = push_requests_for(st.held[s], st.cfg.index, static_cast<uint64_t>(st.step),
                                      st.cfg.cluster.max_slice_floats, fill);
    if (!requests)
      return fail(self, std::move(requests.error()), "computing gradients failed");
    for (auto& req : *requests) {
      req.return_values = true;
      req.base_version = st.versions[s];
      auto epoch = track_request(self, s);
      self->request(st.cfg.shards[s], st.cfg.cluster.request_timeout, push_atom_v, std::move(req))
        .then(
          [=](const push_reply& reply) {
            if (!settle_request(self, s, epoch))
              return;
            auto& st = self->state;
            st.round_stale = st.round_stale || reply.stale;
            st.round_next_step = std::min(st.round_next_step, reply.next_step);
            accept_values(self, s, reply.values, reply.version, true);
          },
          [=](caf::error& err) {
            if (settle_request(self, s, epoch))
              on_shard_error(self, s, std::move(err), cat("push to shard ", s, " failed"));
          });
    }
  }
}

// Model-parallel: acts on where the exchange stands after a step began or a part arrived.
void follow_exchange(worker_pointer self) {
  auto& st = self->state;
  switch (st.exchange->status()) {
    case slice_exchange::state::idle:
    case slice_exchange::state::waiting:
      return;
    case slice_exchange::state::ready:
      st.report_examples += st.slice_net->rows();
      st.exchange->end_step();
      return push_gradients(self);
    case slice_exchange::state::stopped: // another slice of the group stopped: so do I
      st.stopping = true;
      return maybe_finish(self);
  }
}

// One step on the current parameters: forward/backward (model-parallel: the first layer, the
// rest as the other slices' parts arrive), then the push.
void compute(worker_pointer self) {
  auto& st = self->state;
  auto started = std::chrono::steady_clock::now();
  batch_view view = st.batches->next(st.images.data(), st.labels.data());
  st.model->load_batch(st.images.data(), st.labels.data(), view.rows);
  if (st.exchange) { // (its examples count once the step completes: a group may drop it)
    if (auto err = st.exchange->begin_step())
      return fail(self, std::move(err), "the model-parallel step failed");
    return follow_exchange(self);
  }
  st.net->forward();
  st.net->backward();
  st.report_examples += view.rows;
  if (static_cast<int>(st.cfg.index) == st.cfg.cluster.slow_worker) // debug.slowdown: a straggler
    std::this_thread::sleep_for((std::chrono::steady_clock::now() - started) * (st.cfg.cluster.slowdown - 1.0));
  push_gradients(self);
}

// Model-parallel: keeps the group's workers, whom the exchange sends to.
caf::error join_group(worker_pointer self, const slice_group& group) {
  auto& st = self->state;
  if (!st.slice_net || group.slices.size() != st.cfg.cluster.slices)
    return caf::make_error(errc::protocol_error, cat("the chief sent a group of ", group.slices.size(),
                                                     " slices; train.slices is ", st.cfg.cluster.slices));
  st.peers.clear();
  for (size_t k = 0; k < group.slices.size(); ++k) // no handle to itself: it never sends to itself
    st.peers.push_back(k == static_cast<size_t>(st.slice_net->slice())
                         ? worker_replica_actor{}
                         : caf::actor_cast<worker_replica_actor>(group.slices[k]));
  log_line(st.tag, cat("slice ", st.slice_net->slice(), " of group ", group.group, " (workers ",
                       group.group * st.cfg.cluster.slices, "..", (group.group + 1) * st.cfg.cluster.slices - 1, ")"));
  return caf::none;
}

// Starts the step loop (once).
void begin(worker_pointer self) {
  auto& st = self->state;
  if (st.started || st.done)
    return;
  st.started = true;
  st.paused = false;
  log_line(st.tag, "training");
  if (st.steps_left == 0) { // restored at train.max-steps: nothing left to do
    st.stopping = true;
    return maybe_finish(self);
  }
  self->send(self, step_atom_v);
}

// Monitors the chief, registers with it and arms the start deadline.
void register_with_chief(worker_pointer self);

// The chief went down: without a way to reconnect (or while stopping) the worker fails;
// otherwise it pauses after the step in flight and re-registers with the restarted chief, which
// starts it again. (Model-parallel: a slice's step in flight may wait for parts of a slice that
// has paused already; it completes once the restarted chief starts that slice again.)
void on_chief_down(worker_pointer self, const caf::down_msg& msg) {
  auto& st = self->state;
  auto why = cat("the chief went down (", caf::to_string(msg.reason), ")");
  if (!st.cfg.reconnect_chief || st.stopping)
    return fail(self, caf::make_error(errc::peer_unreachable, why), "lost the chief");
  log_line(st.tag, cat(why, "; pausing at step ", st.step, " and waiting up to cluster.connect-timeout for it to restart"));
  st.paused = true;
  st.started = false;
  st.start_requested = false;
  self->send(self, register_atom_v);
}

// Monitors the chief (and, the first time, every shard) and dispatches their down messages.
void watch_chief(worker_pointer self) {
  self->monitor(self->state.cfg.chief);
  self->set_down_handler([=](caf::down_msg& msg) {
    auto& st = self->state;
    if (st.done)
      return;
    if (msg.source == st.cfg.chief.address())
      return on_chief_down(self, msg);
    for (uint32_t s = 0; s < st.cfg.shards.size(); ++s)
      if (msg.source == st.cfg.shards[s].address() && s < st.in_flight.size())
        return on_shard_down(self, s, msg);
  });
}

void join(worker_pointer self) {
  for (auto& s : self->state.cfg.shards)
    self->monitor(s);
  watch_chief(self);
  register_with_chief(self);
}

void register_with_chief(worker_pointer self) {
  auto& st = self->state;
  worker_hello hello{st.cfg.index, st.cfg.host, {{byte_order_probe_value}}};
  self->request(st.cfg.chief, st.cfg.cluster.request_timeout, register_atom_v, hello)
    .then(
      [=](worker_welcome& welcome) {
        if (auto err = accept_plan(self, std::move(welcome.plan)))
          return fail(self, std::move(err), "registration refused");
        self->state.steps_left = welcome.steps_left;
        log_line(self->state.tag, "registered with the chief; waiting for start");
        if (self->state.start_requested)
          begin(self);
      },
      [=](caf::error& err) { fail(self, std::move(err), "registering with the chief failed"); });
  st.start_deadline = std::chrono::steady_clock::now() + st.cfg.cluster.startup_timeout;
  self->delayed_send(self, st.cfg.cluster.startup_timeout, tick_atom_v);
}

worker_replica_actor::behavior_type worker_behavior(worker_pointer self, worker_replica_config cfg) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.tag = cat("worker ", st.cfg.index);
  if (auto err = prepare(self))
    fail(self, std::move(err), "cannot start");
  else
    join(self);
  return {
    [=](start_atom) {
      self->state.start_requested = true;
      if (self->state.plan.shards > 0)
        begin(self);
    },
    [=](start_atom, const slice_group& group) {
      if (auto err = join_group(self, group))
        return fail(self, std::move(err), "joining the model-parallel group failed");
      self->state.start_requested = true;
      if (self->state.plan.shards > 0)
        begin(self);
    },
    [=](slice_atom, layer_part& part) {
      auto& st = self->state;
      if (st.done || !st.exchange)
        return;
      if (auto err = st.exchange->receive(std::move(part)))
        return fail(self, std::move(err), "a model-parallel exchange failed");
      follow_exchange(self);
    },
    [=](step_atom) { // (a start after a pause: a step still in flight goes on by itself)
      auto& st = self->state;
      if (!st.done && !st.stopping && st.pending == 0 && !mid_step(st))
        send_pulls(self);
    },
    [=](stop_atom) {
      self->state.stopping = true;
      maybe_finish(self);
    },
    [=](register_atom) { // after on_chief_down: reach the restarted chief, then register again
      auto& st = self->state;
      if (st.done)
        return;
      auto chief = st.cfg.reconnect_chief();
      if (!chief)
        return fail(self, std::move(chief.error()), "the chief did not come back");
      st.cfg.chief = std::move(*chief);
      log_line(st.tag, "reconnected to the chief; registering again");
      watch_chief(self);
      register_with_chief(self);
    },
    [=](tick_atom) {
      if (std::chrono::steady_clock::now() + std::chrono::milliseconds(1) < self->state.start_deadline)
        return; // armed for an earlier registration
      if (!self->state.started)
        fail(self, caf::make_error(errc::timeout, "no start from the chief within cluster.startup-timeout"),
             "waiting for the chief");
    },
  };
}

} // namespace

worker_replica_actor make_worker_replica(caf::actor_system& sys, worker_replica_config cfg, bool detached) {
  if (detached)
    return sys.spawn<caf::detached>(worker_behavior, std::move(cfg));
  return sys.spawn(worker_behavior, std::move(cfg));
}

} // namespace actorps
