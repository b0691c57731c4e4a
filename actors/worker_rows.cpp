// A worker's embedding table in a cluster: before a step computes, the rows its batch names are
// pulled from the table's parts (the batch pipeline's threads renumber the ids ahead,
// control/row_exchange groups the rows and builds the pulls);
// after backprop, their gradients go out as row slices with the step's push (push_due). With
// cluster.rows-with-push (async) the next batch is drawn as the step pushes, and each push asks
// its shard back for that batch's rows: they come with the reply, read after the push's update.
// With cluster.overlap-steps two batches are kept ahead (control/row_batches: each with its own
// examples, exchange, rows and fetch), so the step computing ahead has its rows already and
// each push asks back the rows of the batch after it.
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
  auto& b = st.table->current();
  if (auto err = st.step->model().take_table_rows(st.table->variable, b.values.data(), b.values.size()))
    return fail(self, std::move(err), "the table's rows do not fit the model");
  std::swap(st.images, b.images); // (the batch's examples become the worker's; its buffers take the next batch)
  std::swap(st.labels, b.labels);
  compute_loaded(self, b.rows);
}

// Draws the next batch into b: its examples, and its ids renumbered to local rows by the
// pipeline's thread (worker_setup's prepare_batches), grouped by part.
void draw_batch(worker_pointer self, worker_state::table_rows::batch& b) {
  auto& st = self->state;
  b.images.resize(st.images.size());
  b.labels.resize(st.labels.size());
  b.rows = st.batches->next(b.images.data(), b.labels.data(), &b.drawn).rows;
  b.exchange->adopt(b.drawn.listed);
  if (b.exchange->distinct() == 0)
    b.values.clear(); // (else sized as its rows are placed, or an answer holding them all taken)
}

// Places the row slices among the values of fetch `tag`'s batch (while the fetch counts); one
// that holds every row of the batch in order (its one shard's answer) becomes its values.
caf::error place_rows(worker_pointer self, const row_fetch_tag& tag, std::vector<variable_slice>& values) {
  auto& t = *self->state.table;
  if (!t.fetches.counts(tag.slot, tag.fetch))
    return caf::none;
  auto& b = t.batches[tag.slot];
  for (auto& slice : values) {
    if (!slice.by_rows())
      continue;
    if (b.exchange->holds_every_row(slice)) {
      b.values = std::move(slice.data.values);
      continue;
    }
    b.values.resize(b.exchange->distinct() * b.exchange->cols()); // (every row is placed by its answer)
    if (auto err = b.exchange->place(slice, b.values.data()))
      return err;
  }
  return caf::none;
}

// Pulls shard s's rows of fetch `tag`'s batch.
void pull_from(worker_pointer self, uint32_t s, row_fetch_tag tag) {
  auto& st = self->state;
  auto req = pull_request::of(st.cfg.index, st.table->batches[tag.slot].exchange->pulls(s), st.plan.scope);
  auto epoch = st.ctl->requested(s);
  self->request(st.cfg.shards[s], shard_deadline(self, s), pull_atom_v, std::move(req))
    .then(
      [=](pull_reply& reply) {
        auto& st = self->state;
        auto& f = st.table->fetches;
        if (!st.ctl->answers(s, epoch)) // (shard s went down since: the fetch is given up)
          return follow_fetch(self, f.failed(tag.slot, tag.fetch));
        st.bytes_received += payload_bytes(reply.slices);
        if (auto err = place_rows(self, tag, reply.slices))
          return fail(self, std::move(err), cat("rows from shard ", s, " do not fit the batch"));
        const auto next = f.answered(tag.slot, tag.fetch);
        execute(self, st.ctl->pulled(s, reply.version)); // (an abandoned step's round settles)
        follow_fetch(self, next);
      },
      [=](caf::error& err) {
        auto& st = self->state;
        auto& f = st.table->fetches;
        if (!st.ctl->answers(s, epoch))
          return follow_fetch(self, f.failed(tag.slot, tag.fetch));
        on_request_error(self, s, std::move(err), cat("pulling the table's rows from shard ", s, " failed"));
        follow_fetch(self, f.failed(tag.slot, tag.fetch)); // (the controller survived it: the round recovers)
      });
}

// Pulls every row of the step's batch (renumbered in its exchange) from the shards holding them.
void pull_rows(worker_pointer self) {
  auto& t = *self->state.table;
  const auto shards = t.current().exchange->shards(); // (its values sized as it was drawn)
  const row_fetch_tag tag{t.fetches.current(), t.fetches.begin(shards.size())};
  if (shards.empty()) // (no ids in the batch)
    return rows_complete(self);
  for (uint32_t s : shards)
    pull_from(self, s, tag);
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

void detail::fetch_rows(worker_pointer self) {
  auto& t = *self->state.table;
  draw_batch(self, t.current());
  t.gradient_ready = false;
  pull_rows(self);
}

void detail::take_rows_ahead(worker_pointer self) {
  auto& t = *self->state.table;
  const auto next = t.fetches.take_ahead(); // (its slot becomes the step's; pulls still out place into it)
  t.gradient_ready = false;
  follow_fetch(self, next);
}

std::vector<row_fetch_tag> detail::begin_rows_ahead(worker_pointer self) {
  auto& st = self->state;
  auto& t = *st.table;
  std::vector<row_fetch_tag> begun;
  while (t.fetches.ahead() < t.fetches.depth()) {
    auto& b = t.batches[t.fetches.free_slot()];
    draw_batch(self, b);
    const auto [slot, fetch] = t.fetches.begin_ahead(b.exchange->shards().size());
    begun.push_back({slot, fetch});
  }
  return begun;
}

std::vector<slice_ref> detail::row_reads(worker_pointer self, const row_fetch_tag& tag, uint32_t s) {
  return self->state.table->batches[tag.slot].exchange->pulls(s);
}

void detail::pull_rows_left(worker_pointer self, const std::vector<row_fetch_tag>& begun,
                            const std::vector<uint32_t>& asked) {
  auto& t = *self->state.table;
  for (size_t k = 0; k < begun.size(); ++k)
    for (uint32_t s : t.batches[begun[k].slot].exchange->shards())
      if (k > 0 || std::find(asked.begin(), asked.end(), s) == asked.end())
        pull_from(self, s, begun[k]);
}

caf::expected<row_fetch::next> detail::rows_pushed_back(worker_pointer self, const row_fetch_tag& tag,
                                                        std::vector<variable_slice>& values) {
  if (auto err = place_rows(self, tag, values))
    return err;
  return self->state.table->fetches.answered(tag.slot, tag.fetch);
}

void detail::rows_not_pushed_back(worker_pointer self, const row_fetch_tag& tag) {
  follow_fetch(self, self->state.table->fetches.failed(tag.slot, tag.fetch));
}

void detail::abandon_fetch(worker_pointer self) {
  auto& st = self->state;
  if (st.table)
    follow_fetch(self, st.table->fetches.failed_all());
}

caf::expected<std::vector<variable_slice>> detail::row_gradients(worker_pointer self, uint32_t s) {
  auto& st = self->state;
  auto& t = *st.table;
  if (!t.gradient_ready) {
    auto& model = st.step->model();
    t.gradient_at = model.table_gradient_in_place(t.variable, t.order); // (on the CPU: no copy)
    if (!t.gradient_at) {
      if (auto err = model.download_table_gradient(t.variable, t.order, t.gradient))
        return err;
      t.gradient_at = t.gradient.data();
    }
    t.gradient_ready = true;
  }
  shared_heap::scope shared; // (the push's row slices: where a ps node of this host maps the heap, it reads them there)
  return t.current().exchange->gradients(s, t.order, t.gradient_at);
}

} // namespace actorps
