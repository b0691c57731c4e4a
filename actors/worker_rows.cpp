// A worker's embedding table in a cluster: before a step computes, the rows its batch names are
// pulled from the table's parts (the batch pipeline's threads renumber the ids ahead,
// control/row_exchange groups the rows and builds the pulls);
// after backprop, their gradients go out as row slices with the step's push (push_due). With
// cluster.rows-with-push (async) the next batch is drawn as the step pushes, and each push asks
// its shard back for that batch's rows: they come with the reply, read after the push's update.
#include "actors/worker_state.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"
#include "common/shared_heap.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>

namespace actorps {

using namespace detail;

namespace {

// Every row is in: the local table goes into the model and the step begins.
void rows_complete(worker_pointer self) {
  auto& st = self->state;
  auto& t = *st.table;
  if (auto err = st.step->model().upload_parameter(t.variable, 0, t.values.data(), t.values.size()))
    return fail(self, std::move(err), "the table's rows do not fit the model");
  compute_loaded(self, t.rows);
}

// Places the row slices among `values` (fetch `fetch`'s, through `ex`, the batch it is for).
caf::error place_rows(worker_pointer self, uint64_t fetch, const row_exchange& ex,
                      const std::vector<variable_slice>& values) {
  auto& t = *self->state.table;
  if (!t.fetch.current(fetch))
    return caf::none;
  for (auto& slice : values)
    if (slice.by_rows())
      if (auto err = ex.place(slice, t.values.data()))
        return err;
  return caf::none;
}

// Pulls shard s's rows of fetch `fetch` (the batch `ex` renumbered).
void pull_from(worker_pointer self, uint32_t s, uint64_t fetch, const row_exchange* ex) {
  auto& st = self->state;
  auto req = pull_request::of(st.cfg.index, ex->pulls(s), st.plan.scope);
  auto epoch = st.ctl->requested(s);
  self->request(st.cfg.shards[s], st.cfg.cluster.request_timeout, pull_atom_v, std::move(req))
    .then(
      [=](const pull_reply& reply) {
        auto& st = self->state;
        if (!st.ctl->answers(s, epoch)) // (shard s went down since: the fetch is given up)
          return follow_fetch(self, st.table->fetch.failed(fetch));
        st.bytes_received += payload_bytes(reply.slices);
        if (auto err = place_rows(self, fetch, *ex, reply.slices))
          return fail(self, std::move(err), cat("rows from shard ", s, " do not fit the batch"));
        const auto next = st.table->fetch.answered(fetch);
        execute(self, st.ctl->pulled(s, reply.version)); // (an abandoned step's round settles)
        follow_fetch(self, next);
      },
      [=](caf::error& err) {
        auto& st = self->state;
        if (!st.ctl->answers(s, epoch))
          return follow_fetch(self, st.table->fetch.failed(fetch));
        on_request_error(self, s, std::move(err), cat("pulling the table's rows from shard ", s, " failed"));
        follow_fetch(self, st.table->fetch.failed(fetch)); // (the controller survived it: the round recovers)
      });
}

// Pulls every row of the batch in hand (renumbered in t.exchange) from the shards holding them.
void pull_rows(worker_pointer self) {
  auto& t = *self->state.table;
  t.values.resize(t.exchange->distinct() * t.exchange->cols()); // (every row is placed by its reply)
  const auto shards = t.exchange->shards();
  const uint64_t fetch = t.fetch.begin(shards.size());
  if (shards.empty()) // (no ids in the batch)
    return rows_complete(self);
  for (uint32_t s : shards)
    pull_from(self, s, fetch, t.exchange.get());
}

} // namespace

void detail::follow_fetch(worker_pointer self, row_fetch::next next) {
  switch (next) {
    case row_fetch::next::compute: return rows_complete(self);
    case row_fetch::next::abandon: return execute(self, self->state.ctl->step_abandoned()); // (the controller recovers the round)
    case row_fetch::next::refetch: return pull_rows(self);
    case row_fetch::next::wait: return;
  }
}

void detail::fetch_rows(worker_pointer self, int rows) {
  auto& st = self->state;
  auto& t = *st.table;
  t.exchange->adopt(t.drawn); // (renumbered by the pipeline's thread: worker_setup's prepare_batches)
  t.gradient_ready = false;
  t.rows = rows;
  pull_rows(self);
}

void detail::take_rows_ahead(worker_pointer self) {
  auto& t = *self->state.table;
  std::swap(t.exchange, t.next); // (the pulls still out place through the exchange they were sent with)
  t.rows = t.next_rows;
  t.gradient_ready = false;
  follow_fetch(self, t.fetch.release());
}

uint64_t detail::begin_rows_ahead(worker_pointer self) {
  auto& st = self->state;
  auto& t = *st.table;
  if (!t.next || t.fetch.holds_ahead())
    return 0;
  t.next_rows = st.batches->next(st.images.data(), st.labels.data(), &t.next_drawn).rows;
  t.next->adopt(t.next_drawn);
  t.values.resize(t.next->distinct() * t.next->cols()); // (the step's own rows are in its model already)
  return t.fetch.begin_ahead(t.next->shards().size());
}

std::vector<slice_ref> detail::row_reads(worker_pointer self, uint32_t s) {
  return self->state.table->next->pulls(s);
}

void detail::pull_rows_left(worker_pointer self, uint64_t fetch, const std::vector<uint32_t>& asked) {
  auto& t = *self->state.table;
  for (uint32_t s : t.next->shards())
    if (std::find(asked.begin(), asked.end(), s) == asked.end())
      pull_from(self, s, fetch, t.next.get());
}

caf::expected<row_fetch::next> detail::rows_pushed_back(worker_pointer self, uint64_t fetch, const row_exchange* ex,
                                                        const std::vector<variable_slice>& values) {
  if (auto err = place_rows(self, fetch, *ex, values))
    return err;
  return self->state.table->fetch.answered(fetch);
}

void detail::rows_not_pushed_back(worker_pointer self, uint64_t fetch) {
  follow_fetch(self, self->state.table->fetch.failed(fetch));
}

void detail::abandon_fetch(worker_pointer self) {
  auto& st = self->state;
  if (st.table)
    follow_fetch(self, st.table->fetch.failed());
}

caf::expected<std::vector<variable_slice>> detail::row_gradients(worker_pointer self, uint32_t s) {
  auto& st = self->state;
  auto& t = *st.table;
  if (!t.gradient_ready) {
    if (auto err = st.step->model().download_table_gradient(t.variable, t.order, t.gradient))
      return err;
    t.gradient_ready = true;
  }
  shared_heap::scope shared; // (the push's row slices: where a ps node of this host maps the heap, it reads them there)
  return t.exchange->gradients(s, t.order, t.gradient.data());
}

} // namespace actorps
