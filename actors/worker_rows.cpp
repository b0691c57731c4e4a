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
  t.at = worker_state::table_rows::fetch::idle;
  if (auto err = st.step->model().upload_parameter(t.variable, 0, t.values.data(), t.values.size()))
    return fail(self, std::move(err), "the table's rows do not fit the model");
  compute_loaded(self, t.rows);
}

} // namespace

void detail::fetch_rows(worker_pointer self, int rows) {
  auto& st = self->state;
  auto& t = *st.table;
  const auto tokens = static_cast<int>(st.step->model().spec().input.size());
  t.exchange->renumber(st.images.data(), rows, tokens);
  t.values.assign(t.exchange->distinct() * t.exchange->cols(), 0.0f);
  t.gradient_ready = false;
  t.rows = rows;
  const auto shards = t.exchange->shards();
  if (shards.empty()) // (no ids in the batch)
    return rows_complete(self);
  t.at = worker_state::table_rows::fetch::pulling;
  t.waiting = shards.size();
  const uint64_t fetch = ++t.fetches;
  for (uint32_t s : shards) {
    auto req = pull_request::of(st.cfg.index, t.exchange->pulls(s), st.plan.scope);
    auto epoch = st.ctl->requested(s);
    self->request(st.cfg.shards[s], st.cfg.cluster.request_timeout, pull_atom_v, std::move(req))
      .then(
        [=](const pull_reply& reply) {
          auto& st = self->state;
          if (!st.ctl->answers(s, epoch)) // (shard s went down since: the fetch is given up)
            return abandon_fetch(self, fetch);
          auto& t = *st.table;
          const bool current = t.fetches == fetch && t.at == worker_state::table_rows::fetch::pulling;
          if (current) {
            st.bytes_received += payload_bytes(reply.slices);
            for (auto& slice : reply.slices)
              if (auto err = t.exchange->place(slice, t.values.data()))
                return fail(self, std::move(err), cat("rows from shard ", s, " do not fit the batch"));
          }
          execute(self, st.ctl->pulled(s, reply.version)); // (an abandoned step's round settles)
          if (current && --t.waiting == 0)
            rows_complete(self);
        },
        [=](caf::error& err) {
          auto& st = self->state;
          if (!st.ctl->answers(s, epoch))
            return abandon_fetch(self, fetch);
          on_request_error(self, s, std::move(err), cat("pulling the table's rows from shard ", s, " failed"));
          abandon_fetch(self, fetch); // (the controller survived it: the round recovers)
        });
  }
}

void detail::abandon_fetch(worker_pointer self, uint64_t fetch) {
  auto& st = self->state;
  if (!st.table || st.table->at != worker_state::table_rows::fetch::pulling || (fetch != 0 && fetch != st.table->fetches))
    return;
  st.table->at = worker_state::table_rows::fetch::failed;
  execute(self, st.ctl->step_abandoned());
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
