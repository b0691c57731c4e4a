// The SyncAggregator actor and its sync steps: sync_rule decisions applied through its shard (ssp
// in sync_aggregator_ssp.cpp).
#include "actors/sync_aggregator.hpp"
#include "actors/exception_log.hpp"
#include "actors/sync_aggregator_state.hpp"

#include "control/push_assembly.hpp"
#include "control/shard_layout.hpp"
#include "control/slicing.hpp"
#include "control/sync_rules.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>
#include <optional>

namespace actorps {

using namespace aggregator_detail;

namespace {

// Worker w is the actor that pushed as w first (its worker, or the stream session carrying its
// tensors) until that actor goes down: a push as w from another actor, or from none, is a
// stranger's and refused (a frozen ps node once let one close a step in w's name). Binds and
// monitors w's actor at its first push, so its death releases the steps waiting for it.
caf::error claim(aggregator_pointer self, uint32_t w) {
  auto& st = self->state;
  auto addr = self->current_sender() ? caf::actor_cast<caf::actor_addr>(self->current_sender()) : caf::actor_addr{};
  if (w >= st.senders.size() || (addr && st.senders[w] == addr))
    return caf::none; // (an unknown id: the sync rule names it)
  if (!addr || st.senders[w]) {
    auto why = addr ? cat(st.tag, ": a push as worker ", w, " from ", caf::to_string(addr), ", which is not worker ", w,
                          " (its pushes come from ", caf::to_string(st.senders[w]), ")")
                    : cat(st.tag, ": a push as worker ", w, " with no sender, which is not worker ", w);
    if (auto unlogged = st.strangers.admit(std::chrono::steady_clock::now()))
      log_line(st.tag, cat("refused ", why.substr(st.tag.size() + 2),
                           *unlogged > 0 ? cat(" (", *unlogged, " more not logged)") : std::string{}));
    return caf::make_error(errc::unknown_worker, std::move(why));
  }
  st.senders[w] = addr;
  self->monitor(addr);
  return caf::none;
}

// Answers a push (or a part of one) that came too late for its step with the current values of
// its ranges (then of the rows it asks back) and the step the worker goes on with.
void answer_stale(aggregator_pointer self, held_part late, uint64_t now_step) {
  auto& st = self->state;
  auto rp = std::move(late.ticket);
  auto reads = std::move(late.reads);
  self->request(st.shard, st.cfg.request_timeout, pull_atom_v,
                pull_request::of(chief_worker_id, std::move(late.ranges), st.scope))
    .then(
      [=](pull_reply& current) mutable {
        answer_with_reads(self, std::move(rp),
                          push_reply::dropped_stale(current.version, now_step, std::move(current.slices)), reads);
      },
      [=](caf::error& err) mutable { rp.deliver(err); });
}

// Delivers the applied step's reply to a worker's parts, each the values of its own ranges (the
// reply lists them in the order the parts' slices were summed), then the rows it asks back, read
// after the step's update.
void deliver_parts(aggregator_pointer self, std::vector<held_part>& parts, const push_reply& reply) {
  size_t at = 0;
  for (auto& part : parts) {
    auto mine = push_reply::applied(reply.version, reply.next_step);
    for (size_t i = 0; i < part.ranges.size() && at < reply.values.size(); ++i)
      mine.values.push_back(reply.values[at++]);
    answer_with_reads(self, std::move(part.ticket), std::move(mine), std::move(part.reads));
  }
}

// Applies the completed sync step through the shard and releases its contributors; the parts of
// pushes still incomplete at this step came too late.
void apply_step(aggregator_pointer self, sync_session<held_part>::step_done completed) {
  auto& st = self->state;
  auto& done = completed.done;
  auto release = std::move(completed.release);
  auto update = push_request::of(done.released.front(), done.step, std::move(done.average));
  update.return_values = true;
  update.reply_precision = st.reply_precision;
  update.scope = st.scope;
  uint64_t next = done.step + 1;
  self->request(st.shard, st.cfg.request_timeout, push_atom_v, std::move(update))
    .then(
      [=](push_reply& reply) mutable {
        reply.next_step = next;
        reply.stale = false;
        for (auto& parts : release)
          deliver_parts(self, parts, reply);
      },
      [=](caf::error& err) mutable {
        log_line(self->state.tag, cat("applying step ", next - 1, " failed: ", describe(err)));
        for (auto& parts : release)
          for (auto& part : parts)
            part.ticket.deliver(err);
      });
  for (auto& late : st.assembly->drop_before(next))
    answer_stale(self, std::move(late), next);
}

} // namespace

void aggregator_detail::answer_with_reads(aggregator_pointer self, reply_promise rp, push_reply reply,
                                          std::vector<slice_ref> reads) {
  if (reads.empty()) {
    rp.deliver(std::move(reply));
    return;
  }
  auto& st = self->state;
  self->request(st.shard, st.cfg.request_timeout, pull_atom_v, pull_request::of(chief_worker_id, std::move(reads), st.scope))
    .then(
      [=](pull_reply& rows) mutable {
        for (auto& slice : rows.slices)
          reply.values.push_back(std::move(slice));
        rp.deliver(std::move(reply));
      },
      [=](caf::error& err) mutable { rp.deliver(err); });
}

// Stops waiting for worker w; logs why unless it simply finished (why empty).
void aggregator_detail::lose_worker(aggregator_pointer self, uint32_t w, const std::string& why) {
  auto& st = self->state;
  if (!why.empty())
    log_line(st.tag, st.sync ? cat("step ", st.sync->rule().step(), " no longer waits for worker ", w, " (", why, ")")
                             : cat("no longer waiting for worker ", w, " (", why, ")"));
  if (st.sync) {
    if (auto done = st.sync->lose(w, self->clock().now()))
      apply_step(self, std::move(*done));
  } else {
    ssp_released(self, st.ssp->lose(w, self->clock().now()));
  }
}

namespace {

// A push of the current step in parts waits for its other parts; a whole one (or the last part)
// goes to the sync rule, which accepts it for the step, calls it stale, or refuses it.
caf::result<push_reply> sync_push(aggregator_pointer self, push_request& req) {
  auto& st = self->state;
  st.reply_precision = req.reply_precision;
  auto rp = self->make_response_promise<push_reply>();
  std::vector<held_part> parts;
  bool counted = req.part + 1 == req.parts; // the counters take a push once (parts: the whole)
  if (req.parts > 1 && req.step == st.sync->rule().step()) {
    auto complete = st.assembly->add(req.worker, req.step, req.part, req.parts, std::move(req.grads), rp,
                                     std::move(req.reads));
    if (!complete) { // (the promise holds the request's answer now: the error goes through it)
      rp.deliver(std::move(complete.error()));
      return rp;
    }
    if (!*complete)
      return rp;
    auto whole = st.assembly->take(req.worker);
    req.grads = std::move(whole.first);
    parts = std::move(whole.second);
    counted = true;
  } else {
    parts.push_back({rp, ranges_of(req.grads), std::move(req.reads)});
  }
  const uint64_t now_step = st.sync->rule().step();
  auto got = st.sync->offer(req.worker, req.step, std::move(req.grads), std::move(parts), self->clock().now(), counted);
  using kind = sync_session<held_part>::offered::kind;
  if (got.what == kind::refused) { // every part of a refused push gets the error (rp is the last part's ticket)
    for (auto& part : got.back)
      part.ticket.deliver(got.error);
    return rp;
  }
  if (got.what == kind::stale) {
    for (auto& part : got.back)
      answer_stale(self, std::move(part), now_step);
    return rp;
  }
  if (got.arm) // the step's first push: its clock runs
    self->delayed_send(self, st.cfg.step_timeout, tick_atom_v);
  if (got.applied)
    apply_step(self, std::move(*got.applied));
  return rp;
}

parameter_shard_actor::behavior_type aggregator_behavior(aggregator_pointer self, sync_aggregator_config cfg,
                                                         parameter_shard_actor shard) {
  auto& st = self->state;
  st.cfg = cfg;
  st.shard = shard;
  st.tag = cat("aggregator ", cfg.index);
  log_exceptions(self, st.tag);
  if (cfg.mode == train_mode::ssp) {
    st.ssp.emplace(ssp_rule{cfg.workers, cfg.staleness, cfg.live_at_start}, cfg.workers, self->clock().now(),
                   cfg.step_timeout);
  } else {
    st.sync.emplace(sync_rule{cfg.workers, cfg.replicas_to_aggregate, cfg.live_at_start, cfg.sum_over}, cfg.step_timeout);
    st.assembly.emplace(cfg.workers);
  }
  st.senders.resize(cfg.workers);
  st.pushes = silence_watch{cfg.workers, self->clock().now()};
  self->monitor(shard);
  self->set_down_handler([=](caf::down_msg& msg) {
    auto& st = self->state;
    if (msg.source == st.shard.address()) {
      log_line(st.tag, "its shard went down");
      self->quit(msg.reason);
      return;
    }
    for (uint32_t w = 0; w < st.senders.size(); ++w)
      if (st.senders[w] && msg.source == st.senders[w]) {
        st.senders[w] = caf::actor_addr{};
        lose_worker(self, w, msg.reason ? cat("went down: ", caf::to_string(msg.reason)) : std::string{});
      }
  });
  log_line(st.tag, cfg.mode == train_mode::ssp ? cat("ssp, staleness ", cfg.staleness, ", ", cfg.workers, " workers")
                                     : cfg.replicas_to_aggregate >= cfg.workers
                                         ? cat("sync, every live worker's gradient aggregated per step (", cfg.workers,
                                               " worker ids)")
                                         : cat("sync, ", cfg.replicas_to_aggregate, " of ", cfg.workers,
                                               " workers aggregated per step"));
  return {
    [=](init_atom a, shard_setup& setup) -> caf::result<setup_reply> {
      // A shard restored from a checkpoint: its version is the number of steps applied, so sync
      // resumes at that step; ssp forgets the workers' steps until each pushes again.
      auto rp = self->make_response_promise<setup_reply>();
      self->state.scope = setup.plan.scope;
      self->request(self->state.shard, self->state.cfg.request_timeout, a, setup)
        .then(
          [=](const setup_reply& reply) mutable {
            auto& st = self->state;
            st.layout.emplace(setup.plan, setup.shard); // (the shard accepted it: consistent)
            if (st.sync && st.sync->resume_at(reply.version))
              log_line(st.tag, cat("resuming at step ", reply.version));
            if (st.ssp && reply.version > 0) {
              st.ssp->resume();
              log_line(st.tag, "restored: each worker's staleness counts from its next push");
            }
            rp.deliver(reply);
          },
          [=](caf::error& err) mutable { rp.deliver(std::move(err)); });
      return rp;
    },
    [=](init_atom a, setup_piece& piece) { return self->delegate(self->state.shard, a, std::move(piece)); },
    [=](pull_atom a, pull_request& req) { return self->delegate(self->state.shard, a, std::move(req)); },
    [=](save_atom a) { return self->delegate(self->state.shard, a); },
    [=](save_atom a, const snapshot_read& r) { return self->delegate(self->state.shard, a, r); },
    [=](push_atom, push_request& req) -> caf::result<push_reply> {
      // Validated before it counts for a step: a malformed push never holds a worker's place.
      auto& st = self->state;
      if (!st.layout)
        return caf::make_error(errc::not_initialized, cat("shard ", st.cfg.index, " is not initialised yet"));
      if (auto err = st.layout->check_push_form(req))
        return err;
      if (auto at = st.layout->check_gradients(req.worker, req.grads); !at)
        return std::move(at.error());
      if (auto at = st.layout->check_reads(req.worker, req.reads); !at)
        return std::move(at.error());
      if (auto err = claim(self, req.worker))
        return err;
      self->state.pushes.heard(req.worker, self->clock().now());
      return self->state.sync ? sync_push(self, req) : ssp_push(self, req);
    },
    [=](stats_atom) -> caf::result<shard_stats> {
      auto rp = self->make_response_promise<shard_stats>();
      self->request(self->state.shard, self->state.cfg.request_timeout, stats_atom_v)
        .then(
          [=](shard_stats& stats) mutable {
            auto& st = self->state;
            auto& counts = st.sync ? st.sync->counts() : st.ssp->counts();
            stats.stale_dropped = counts.stale_dropped;
            stats.waited_on = counts.waited_on;
            stats.lag_histogram = counts.lag_histogram; // the shard's own sees only the aggregate
            stats.push_age_ms = st.pushes.ages_ms(self->clock().now()); // (the workers push to it, not the shard)
            stats.pending = st.sync ? st.sync->rule().missing() : std::vector<uint32_t>{};
            rp.deliver(std::move(stats));
          },
          [=](caf::error& err) mutable { rp.deliver(err); });
      return rp;
    },
    [=](stop_atom) {
      self->send(self->state.shard, stop_atom_v);
      self->quit();
    },
    [=](tick_atom) {
      auto& st = self->state;
      if (self->current_sender() != self->ctrl())
        return; // (its own timers only)
      if (st.ssp)
        return ssp_silence_check(self);
      if (!st.sync)
        return;
      const auto step = st.sync->rule().step();
      auto t = st.sync->tick(self->clock().now()); // (nothing while nothing waits)
      if (t.again)
        self->delayed_send(self, *t.again, tick_atom_v);
      for (auto w : t.silent)
        log_line(st.tag, cat("step ", step, " no longer waits for worker ", w, " (silent for cluster.step-timeout at step ",
                             step, ")"));
      if (t.applied)
        apply_step(self, std::move(*t.applied));
    },
  };
}

} // namespace

parameter_shard_actor make_sync_aggregator(caf::actor_system& sys, sync_aggregator_config cfg,
                                           parameter_shard_actor shard) {
  return sys.spawn(aggregator_behavior, std::move(cfg), std::move(shard));
}

} // namespace actorps
