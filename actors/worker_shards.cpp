// The worker's exchange with its shards: the first pull, the pushes of a step in parts as backprop
// completes them, the replies' values uploaded, failed requests handed to the controller, and
// lost shards reached again.
#include "control/slicing.hpp"
#include "control/value_views.hpp"
#include "actors/reach_later.hpp"
#include "actors/worker_state.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"
#include "common/shared_heap.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>
#include <optional>

namespace actorps {

using namespace detail;

caf::duration detail::shard_deadline(worker_pointer self, uint32_t s) {
  auto& st = self->state;
  const auto& h = st.cfg.shards.at(s);
  if (h && h.node() == self->home_system().node()) // (a link: shards live on other nodes)
    return caf::duration{caf::infinite};
  return caf::duration{st.cfg.cluster.request_timeout};
}

// With value-compression the worker keeps a mirror of its values: a delta slice is added to it,
// a full one replaces it, and the mirror's range is uploaded.
bool detail::upload(worker_pointer self, uint32_t s, const std::vector<variable_slice>& slices) {
  auto& st = self->state;
  st.bytes_received += payload_bytes(slices);
  for (auto& slice : slices) {
    if (slice.by_rows()) // (a table's rows, asked back with a push: the fetch ahead places them)
      continue;
    const float* values = slice.data.values.data();
    const size_t n = slice.data.values.size();
    caf::error err;
    if (!st.mirror.empty()) {
      if (slice.variable >= st.mirror.size() || slice.offset + n > st.mirror[slice.variable].size())
        err = caf::make_error(errc::protocol_error, cat("slice of variable ", slice.variable, " at offset ",
                                                        slice.offset, " is outside the model"));
      else {
        float* held = st.mirror[slice.variable].data() + slice.offset;
        merge_into(held, slice);
        values = held;
      }
    } else if (slice.delta) {
      err = caf::make_error(errc::protocol_error, "a delta reached a worker without cluster.value-compression");
    }
    if (!err)
      err = st.step->model().upload_parameter(slice.variable, slice.offset, values, n);
    if (err) {
      fail(self, std::move(err), cat("values from shard ", s, " do not fit the model"));
      return false;
    }
  }
  return true;
}

// A request to shard s failed: the controller decides whether the worker survives it.
void detail::on_request_error(worker_pointer self, uint32_t s, caf::error err, const std::string& what) {
  auto how = err == caf::sec::request_timeout       ? request_failure::timed_out // (the connection is up)
             : err.category() != caf::atom("actorps") ? request_failure::lost
             : err == errc::not_initialized       ? request_failure::not_ready
                                                  : request_failure::refused;
  execute(self, self->state.ctl->request_failed(s, how, code_of(err), cat(what, ": ", describe(err))));
}

// The first step's parameters (and a fresh start after a broken round): a plain pull of this
// worker's share of every shard.
void detail::send_pulls(worker_pointer self) {
  auto& st = self->state;
  for (uint32_t s = 0; s < st.plan.shards; ++s)
    for (auto& req : st.pulls[s]) {
      auto epoch = st.ctl->requested(s);
      self->request(st.cfg.shards[s], shard_deadline(self, s), pull_atom_v, req)
        .then(
          [=](const pull_reply& reply) {
            if (self->state.ctl->answers(s, epoch) && upload(self, s, reply.slices))
              execute(self, self->state.ctl->pulled(s, reply.version));
          },
          [=](caf::error& err) {
            if (self->state.ctl->answers(s, epoch))
              on_request_error(self, s, std::move(err), cat("pull from shard ", s, " failed"));
          });
    }
}

// Sends the parts of the step's pushes whose gradients backprop has completed (every variable
// >= floor; 0: all that are left). Each push asks for the updated values of its ranges, so the
// replies carry the next step's parameters: one message each way per part.
void detail::push_due(worker_pointer self, size_t floor) {
  auto& st = self->state;
  if (st.ctl->phase() == replica_phase::done)
    return;
  const float scale = st.ctl->push_weight(); // (elastic async and ssp: the rate follows the membership)
  auto fill = [&](uint32_t k, uint32_t offset, uint32_t count, float* dst) {
    auto err = st.step->model().download_gradient(k, offset, dst, count);
    if (err)
      return err;
    if (k < st.statistics.size() && st.statistics[k]) { // a batch statistic: as it is, rounded
      st.encoder->encode_statistic(dst, count);
      return err;
    }
    if (scale != 1.0f)
      for (uint32_t i = 0; i < count; ++i)
        dst[i] *= scale;
    st.encoder->encode(k, offset, dst, count); // rounding, top-k, error feedback (or nothing)
    return err;
  };
  const auto& wire = st.encoder->settings();
  const auto due = st.pushes.due(static_cast<uint32_t>(floor));
  // cluster.rows-with-push: the pushes carrying rows ask their shards back for the next batch's rows
  std::vector<row_fetch_tag> ahead; // (the first asked back with the pushes, the rest pulled)
  if (st.table && std::any_of(due.begin(), due.end(), [&](auto sp) { return st.pushes.parts(sp.first)[sp.second].rows; }))
    ahead = begin_rows_ahead(self);
  std::vector<uint32_t> asked; // (the shards whose push carries reads)
  for (auto [s, p] : due) {
    const auto& parts = st.pushes.parts(s);
    caf::expected<std::vector<push_request>> requests{std::vector<push_request>{}};
    {
      shared_heap::scope shared; // (where a ps node of this host maps the heap, it reads them there)
      requests = push_requests_for(parts[p].ranges, st.cfg.index, static_cast<uint64_t>(st.ctl->step()),
                                   st.cfg.cluster.max_slice_floats, fill); // (one: parts fit a message)
    }
    if (!requests)
      return fail(self, std::move(requests.error()), "computing gradients failed");
    if (requests->empty()) // (a part of table rows alone)
      requests->push_back(push_request::of(st.cfg.index, static_cast<uint64_t>(st.ctl->step())));
    auto& req = requests->front();
    if (parts[p].rows) {
      auto rows = row_gradients(self, s);
      if (!rows)
        return fail(self, std::move(rows.error()), "computing the table's row gradients failed");
      for (auto& g : *rows) {
        if (scale != 1.0f)
          for (auto& v : g.data.values)
            v *= scale;
        req.grads.push_back(std::move(g));
      }
    }
    req.part = p;
    req.parts = static_cast<uint32_t>(parts.size());
    req.return_values = true;
    req.base_version = st.ctl->base_version(s);
    req.reply_precision = wire.precision;
    req.reply_topk = wire.value_compression == sparsifier::topk ? wire.topk_ratio : 0.0;
    req.scope = st.plan.scope;
    for (auto& g : req.grads) {
      if (g.by_rows()) { // (rows travel at the wire's precision, never top-k: each is a batch's own)
        set_wire_precision(g, wire.precision);
        continue;
      }
      g.data.precision = wire.precision;
      g.data.sparse = wire.compression == sparsifier::topk;
    }
    std::optional<row_fetch_tag> reads; // the fetch ahead whose rows this push asks back
    if (!ahead.empty() && parts[p].rows && std::find(asked.begin(), asked.end(), s) == asked.end()) {
      req.reads = row_reads(self, ahead.front(), s);
      if (!req.reads.empty()) {
        asked.push_back(s);
        reads = ahead.front();
      }
    }
    st.bytes_sent += payload_bytes(req.grads);
    auto epoch = st.ctl->requested(s);
    self->request(st.cfg.shards[s], shard_deadline(self, s), push_atom_v, std::move(req))
      .then(
        [=](push_reply& reply) {
          auto& st = self->state;
          if (!st.ctl->answers(s, epoch)) {
            if (reads)
              rows_not_pushed_back(self, *reads);
            return;
          }
          if (!upload(self, s, reply.values))
            return;
          auto next = row_fetch::next::wait;
          if (reads) {
            auto placed = rows_pushed_back(self, *reads, reply.values);
            if (!placed)
              return fail(self, std::move(placed.error()), cat("rows from shard ", s, " do not fit the next batch"));
            next = *placed;
          }
          execute(self, st.ctl->pushed(s, reply.version, reply.next_step, reply.stale));
          follow_fetch(self, next); // (wait, without reads)
        },
        [=](caf::error& err) {
          if (self->state.ctl->answers(s, epoch))
            on_request_error(self, s, std::move(err), cat("push to shard ", s, " failed"));
          if (reads)
            rows_not_pushed_back(self, *reads);
        });
  }
  if (!ahead.empty())
    pull_rows_left(self, ahead, asked);
}

// The step is over: pushes what backprop did not push already.
void detail::push_gradients(worker_pointer self) {
  auto& st = self->state;
  const auto now = std::chrono::steady_clock::now();
  st.timing.push_begins(now);
  st.step->end();
  push_due(self, 0);
  st.timing.push_ends(std::chrono::steady_clock::now());
  if (st.leads && st.leads->end_step(now)) // (the parts change between steps)
    keep_early_parts(self);
}

// cluster.push-early-ms: the parts whose exchange backprop's rest would not hide join the last push.
void detail::keep_early_parts(worker_pointer self) {
  auto& st = self->state;
  const auto least = st.cfg.cluster.push_early;
  const size_t before = st.pushes.count();
  const size_t after = st.pushes.keep_early([&](uint32_t ready_after) { return st.leads->lead(ready_after) >= least; });
  if (after < before)
    log_line(st.tag, cat("pushes: ", after, after == 1 ? " part" : " parts", " a step instead of ", before, " (backprop had less than ",
                         static_cast<double>(least.count()) / 1000.0, " ms left after the others: cluster.push-early-ms)"));
  st.leads.reset();
}

// Reaches the lost shards again one after the other (the node's connect runs in a helper), then
// tells the controller; the worker handles its other inputs meanwhile.
void detail::reconnect_shards(worker_pointer self, std::vector<uint32_t> lost) {
  auto& st = self->state;
  if (st.ctl->phase() == replica_phase::done)
    return;
  if (lost.empty())
    return execute(self, st.ctl->shards_reconnected());
  const uint32_t s = lost.back();
  lost.pop_back();
  log_line(st.tag, cat("shard ", s, " is gone; pausing until it is back (cluster.connect-timeout)"));
  reach_later<parameter_shard_actor>(
    self, st.detached, [connect = st.cfg.reconnect_shard, s] { return connect(s); },
    [=](parameter_shard_actor hdl) {
      auto& st = self->state;
      if (st.ctl->phase() == replica_phase::done)
        return;
      st.cfg.shards[s] = std::move(hdl);
      self->monitor(st.cfg.shards[s]);
      log_line(st.tag, cat("reconnected to shard ", s));
      reconnect_shards(self, std::move(lost));
    },
    [=](caf::error err) {
      if (self->state.ctl->phase() != replica_phase::done)
        fail(self, std::move(err), cat("shard ", s, " did not come back"));
    });
}

} // namespace actorps
