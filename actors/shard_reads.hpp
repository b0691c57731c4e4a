// Reading from every shard at once, for the chief: the whole model, a table's rows, a table a
// chunk at a time, the counters, the snapshots.
// Each fans the requests in (control/fan_in.hpp) and calls `done` once with every answer, or
// `failed` once with the first failure named. Header-only: the chief's (actors/chief*.cpp).
#pragma once

#include "control/fan_in.hpp"
#include "actors/parameter_shard.hpp"
#include "control/placement.hpp"
#include "control/row_exchange.hpp"
#include "control/slicing.hpp"
#include "control/table_sweep.hpp"
#include "model/replica_model.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace actorps {

using failed_fn = std::function<void(std::string)>;

/// Asks every shard `(Ts...)` and fans the answers (of type T, indexed by shard) into done.
template <class T, class Self, class... Ts>
void ask_every_shard(Self* self, const std::vector<parameter_shard_actor>& shards, std::chrono::milliseconds timeout,
                     const std::string& what, std::function<void(std::vector<T>&)> done, failed_fn failed,
                     Ts... xs) {
  auto fan = fan_in<T>::make(shards.size(), std::move(done), std::move(failed));
  for (size_t s = 0; s < shards.size(); ++s)
    self->request(shards[s], timeout, xs...)
      .then([fan, s](T& x) { fan->put(s, std::move(x)); },
            [fan, s, what](caf::error& err) { fan->fail(cat(what, " from shard ", s, " failed: ", describe(err))); });
}

/// Pulls every variable of the plan (as chief_worker_id) into `model` (each reply's values
/// uploaded as they come: no second copy of the model, which may hold a table of gigabytes) and
/// calls done once all are in. One request per shard is in flight at a time (a table's parts are
/// many max-message-bytes requests: all at once, their replies would wait in the chief's inbox
/// as another copy of the table).
template <class Self>
struct model_pull : std::enable_shared_from_this<model_pull<Self>> {
  Self* self = nullptr;
  std::vector<parameter_shard_actor> shards;
  std::chrono::milliseconds timeout{};
  replica_model* model = nullptr;
  placement_plan plan;
  std::vector<std::vector<pull_request>> of_shard; // per shard, in order
  std::vector<size_t> next;                        // per shard: its next request
  std::vector<size_t> first_slot;                  // per shard: its first request's slot in the fan-in
  std::shared_ptr<fan_in<bool>> fan;

  // A range of a variable; of a table whose parts hold its rows by mod, row by row to where
  // each stored row belongs (the model holds the table's rows in order).
  caf::error upload(const variable_slice& slice) {
    if (!rows_permuted(plan, slice.variable))
      return model->upload_parameter(slice.variable, slice.offset, slice.data.values.data(), slice.data.values.size());
    const auto cols = static_cast<uint32_t>(plan.variables[slice.variable].cols);
    if (slice.offset % cols != 0 || slice.data.values.size() % cols != 0)
      return caf::make_error(errc::protocol_error, "a range of a table that is not whole rows");
    // (a pull's range lies in one part: its rows are every stride-th row of the table)
    const uint32_t first = table_row(plan, slice.variable, slice.offset / cols), stride = row_stride(plan, slice.variable);
    for (uint32_t r = 0; r < slice.data.values.size() / cols; ++r)
      if (auto err = model->upload_parameter(slice.variable, (first + size_t{r} * stride) * cols,
                                             slice.data.values.data() + size_t{r} * cols, cols))
        return err;
    return caf::none;
  }

  // Sends shard s's next request; its reply sends the one after.
  void send(uint32_t s) {
    const size_t i = next[s]++;
    if (i >= of_shard[s].size())
      return;
    auto me = this->shared_from_this();
    self->request(shards[s], timeout, pull_atom_v, std::move(of_shard[s][i]))
      .then(
        [me, s, i](const pull_reply& reply) {
          for (auto& slice : reply.slices) {
            caf::error err = slice.by_rows() ? caf::make_error(errc::protocol_error, "rows for a pull of ranges")
                                             : me->upload(slice);
            if (err)
              return me->fan->fail(cat("pulling the model from shard ", s, " failed: ", describe(err)));
          }
          me->fan->put(me->first_slot[s] + i, true);
          me->send(s);
        },
        [me, s](caf::error& err) { me->fan->fail(cat("pulling the model from shard ", s, " failed: ", describe(err))); });
  }
};

/// `tables` false: every variable but the embedding tables (pull_rows reads those).
template <class Self>
void pull_every_variable(Self* self, const std::vector<parameter_shard_actor>& shards, const placement_plan& plan,
                         uint32_t max_floats, std::chrono::milliseconds timeout, replica_model& model,
                         std::function<void()> done, failed_fn failed, bool tables = true) {
  auto pull = std::make_shared<model_pull<Self>>();
  pull->self = self;
  pull->shards = shards;
  pull->timeout = timeout;
  pull->model = &model;
  pull->plan = plan;
  size_t total = 0;
  for (uint32_t s = 0; s < plan.shards; ++s) {
    pull->first_slot.push_back(total);
    auto held = held_ranges(plan, s);
    if (!tables)
      held.erase(std::remove_if(held.begin(), held.end(), [&](const slice_ref& r) { return plan.variables[r.variable].table; }),
                 held.end());
    pull->of_shard.push_back(pull_requests_for(held, chief_worker_id, max_floats));
    for (auto& req : pull->of_shard.back())
      req.scope = plan.scope;
    total += pull->of_shard.back().size();
  }
  pull->next.assign(plan.shards, 0);
  pull->fan = fan_in<bool>::make(total, [done](std::vector<bool>&) { done(); }, std::move(failed));
  for (uint32_t s = 0; s < plan.shards; ++s)
    pull->send(s);
}

/// A read of a table's rows: its requests, (shard, range), each of at most max_floats values.
using row_reads = std::vector<std::pair<uint32_t, slice_ref>>;

/// The requests that read the rows `rows` names (renumbered once: control/row_exchange).
inline row_reads row_reads_of(const row_exchange& rows, uint32_t max_floats) {
  row_reads asks;
  for (uint32_t s : rows.shards())
    for (auto& r : rows.pulls(s, max_floats))
      asks.emplace_back(s, std::move(r));
  return asks;
}

/// Pulls the rows of `asks` (row_reads_of(rows, max_floats)) into `local` (rows.distinct() x
/// rows.cols() values, by local row: control/row_exchange's place) and calls done once all are
/// in. A reply must hold the rows asked. `rows` and `local` must outlive the pull.
template <class Self>
void pull_rows(Self* self, const std::vector<parameter_shard_actor>& shards, const placement_plan& plan,
               std::chrono::milliseconds timeout, const row_exchange& rows, const row_reads& asks, uint32_t max_floats,
               float* local, std::function<void()> done, failed_fn failed) {
  if (asks.empty()) // (no rows named)
    return done();
  auto fan = fan_in<bool>::make(asks.size(), [done](std::vector<bool>&) { done(); }, std::move(failed));
  for (size_t k = 0; k < asks.size(); ++k) {
    const uint32_t s = asks[k].first;
    self->request(shards[s], timeout, pull_atom_v, pull_request::of(chief_worker_id, {asks[k].second}, plan.scope))
      .then(
        [fan, k, s, &rows, max_floats, local](const pull_reply& reply) {
          if (reply.slices.size() != 1)
            return fan->fail(cat("pulling the table's rows from shard ", s, " failed: the reply does not hold the rows asked"));
          if (auto err = rows.place(reply.slices[0], local, max_floats))
            return fan->fail(cat("pulling the table's rows from shard ", s, " failed: ", describe(err)));
          fan->put(k, true);
        },
        [fan, s](caf::error& err) { fan->fail(cat("pulling the table's rows from shard ", s, " failed: ", describe(err))); });
  }
}

/// Reads a table whole without holding it (control/table_sweep): one chunk's reads in flight at
/// a time, each completed chunk (rows_of(i) x cols() values, by table row) handed to on_chunk,
/// then done after the last; failed once, at the first failure (on_chunk's error included).
template <class Self>
struct table_read : std::enable_shared_from_this<table_read<Self>> {
  Self* self = nullptr;
  std::vector<parameter_shard_actor> shards;
  std::string scope;
  std::chrono::milliseconds timeout{};
  table_sweep sweep;
  std::function<caf::error(size_t, const float*)> on_chunk;
  std::function<void()> done;
  failed_fn failed;
  std::vector<float> chunk;

  table_read(table_sweep s) : sweep(std::move(s)) {}

  void read(size_t i) {
    if (i >= sweep.chunks())
      return done();
    chunk.assign(sweep.rows_of(i) * sweep.cols(), 0.0f);
    auto reads = sweep.reads(i);
    auto me = this->shared_from_this();
    auto fan = fan_in<bool>::make(
      reads.size(),
      [me, i](std::vector<bool>&) {
        if (auto err = me->on_chunk(i, me->chunk.data()))
          return me->failed(describe(err));
        me->read(i + 1);
      },
      failed);
    for (size_t k = 0; k < reads.size(); ++k) {
      const uint32_t s = reads[k].first;
      self->request(shards[s], timeout, pull_atom_v, pull_request::of(chief_worker_id, {reads[k].second}, scope))
        .then(
          [me, fan, i, k, s](const pull_reply& reply) {
            if (reply.slices.size() != 1)
              return fan->fail(cat("reading the table from shard ", s, " failed: the reply does not hold the rows asked"));
            if (auto err = me->sweep.place(i, reply.slices[0], me->chunk.data()))
              return fan->fail(cat("reading the table from shard ", s, " failed: ", describe(err)));
            fan->put(k, true);
          },
          [fan, s](caf::error& err) { fan->fail(cat("reading the table from shard ", s, " failed: ", describe(err))); });
    }
  }
};

template <class Self>
void sweep_table(Self* self, const std::vector<parameter_shard_actor>& shards, const placement_plan& plan,
                 std::chrono::milliseconds timeout, table_sweep sweep, std::function<caf::error(size_t, const float*)> on_chunk,
                 std::function<void()> done, failed_fn failed) {
  auto read = std::make_shared<table_read<Self>>(std::move(sweep));
  read->self = self;
  read->shards = shards;
  read->scope = plan.scope;
  read->timeout = timeout;
  read->on_chunk = std::move(on_chunk);
  read->done = std::move(done);
  read->failed = std::move(failed);
  read->read(0);
}

} // namespace actorps
