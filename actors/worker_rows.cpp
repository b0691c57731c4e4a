// A worker's embedding table in a cluster: before a step computes, the rows its batch names are
// pulled from the table's parts (control/row_exchange renumbers the ids and builds the pulls);
// after backprop, their gradients go out as row slices with the step's push (push_due).
#include "actors/worker_state.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

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

// Carries out what the fetch says after an input.
void follow_fetch(worker_pointer self, row_fetch::next next) {
  if (next == row_fetch::next::compute)
    return rows_complete(self);
  if (next == row_fetch::next::abandon) // (the controller recovers the round)
    execute(self, self->state.ctl->step_abandoned());
}

} // namespace

void detail::fetch_rows(worker_pointer self, int rows) {
  auto& st = self->state;
  auto& t = *st.table;
  const auto tokens = static_cast<int>(st.step->model().spec().input.size());
  t.exchange->renumber(st.images.data(), rows, tokens);
  t.values.resize(t.exchange->distinct() * t.exchange->cols()); // (every row is placed by its reply)
  t.gradient_ready = false;
  t.rows = rows;
  const auto shards = t.exchange->shards();
  const uint64_t fetch = t.fetch.begin(shards.size());
  if (shards.empty()) // (no ids in the batch)
    return rows_complete(self);
  for (uint32_t s : shards) {
    auto req = pull_request::of(st.cfg.index, t.exchange->pulls(s), st.plan.scope);
    auto epoch = st.ctl->requested(s);
    self->request(st.cfg.shards[s], st.cfg.cluster.request_timeout, pull_atom_v, std::move(req))
      .then(
        [=](const pull_reply& reply) {
          auto& st = self->state;
          if (!st.ctl->answers(s, epoch)) // (shard s went down since: the fetch is given up)
            return follow_fetch(self, st.table->fetch.failed(fetch));
          auto& t = *st.table;
          if (t.fetch.current(fetch)) {
            st.bytes_received += payload_bytes(reply.slices);
            for (auto& slice : reply.slices)
              if (auto err = t.exchange->place(slice, t.values.data()))
                return fail(self, std::move(err), cat("rows from shard ", s, " do not fit the batch"));
          }
          const auto next = t.fetch.answered(fetch);
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
  return t.exchange->gradients(s, t.order, t.gradient.data());
}

} // namespace actorps
