// In-graph replication's steps, driven by the chief (train.replication = in-graph): take the
// next global batch from the one data order, hand its parts to the workers (in_graph_round
// decides who computes what, and moves a lost worker's parts), average the gradients, push the
// average through the shards, then tell the controller (run_control::chief_step), which asks for
// the next step while training goes on.
#include "actors/chief_state.hpp"

#include "control/fan_in.hpp"
#include "control/slicing.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"

namespace actorps {

using namespace detail;

namespace {

const char* tag = "chief";
using phase = in_graph_state::phase;

// A stalled step is begun again after this pause, for at most cluster.step-timeout.
constexpr std::chrono::milliseconds stall_pause{250};

void send_part(chief_pointer self, in_graph_round::assignment a);

void fail_step(chief_pointer self, errc code, std::string why) {
  execute(self, self->state.ctl->failed(0, code, std::move(why)));
}

// Nobody could compute the step's remaining parts (every live worker failed it): the step runs
// again after a pause, until it has stalled for a whole cluster.step-timeout.
void stalled(chief_pointer self, const std::string& why) {
  auto& g = self->state.in_graph;
  g.at = phase::idle;
  if (g.round->stall(self->clock().now(), self->state.cfg.cluster.step_timeout) == in_graph_round::stall_action::give_up)
    return fail_step(self, errc::peer_unreachable,
                     cat("in-graph step ", self->state.ctl->steps() + 1, ": no worker computed it within "
                         "cluster.step-timeout (", why, ")"));
  log_line(tag, cat("in-graph step ", self->state.ctl->steps() + 1, ": no worker left to compute it (", why,
                    "); trying again"));
  self->delayed_send(self, stall_pause, step_atom_v);
}

void send_all(chief_pointer self, const std::vector<in_graph_round::assignment>& parts) {
  for (auto& a : parts)
    send_part(self, a);
}

// Pushes the step's average to every shard; counts the step once every shard applied it.
void apply(chief_pointer self) {
  auto& st = self->state;
  auto& g = st.in_graph;
  auto result = std::make_shared<in_graph_round::result>(g.round->complete());
  g.at = phase::applying;
  std::vector<const float_vector*> by_variable(st.plan.variables.size(), nullptr);
  for (auto& slice : result->average)
    if (slice.variable < by_variable.size())
      by_variable[slice.variable] = &slice.data.values;
  auto fill = [&](uint32_t k, uint32_t offset, uint32_t count, float* dst) -> caf::error {
    if (k >= by_variable.size() || by_variable[k] == nullptr || offset + count > by_variable[k]->size())
      return caf::make_error(errc::protocol_error, cat("the averaged gradient lacks variable ", k, " [", offset, ", ",
                                                       offset + count, ")"));
    std::copy_n(by_variable[k]->data() + offset, count, dst);
    return caf::none;
  };
  std::vector<std::pair<uint32_t, push_request>> pushes;
  for (uint32_t s = 0; s < st.plan.shards; ++s) {
    auto requests = push_requests_for(held_ranges(st.plan, s), chief_worker_id, result->step,
                                      st.cfg.cluster.max_slice_floats, fill);
    if (!requests)
      return fail_step(self, errc::protocol_error, cat("in-graph step ", result->step, ": ", describe(requests.error())));
    for (auto& req : *requests) {
      req.scope = st.plan.scope;
      pushes.emplace_back(s, std::move(req));
    }
  }
  auto done = [self, result](std::vector<bool>&) {
    auto& g = self->state.in_graph;
    g.at = phase::idle;
    g.rows.clear();
    execute(self, self->state.ctl->chief_step(result->rows, result->loss_sum, self->clock().now()));
  };
  auto failed = [self](std::string why) {
    auto& g = self->state.in_graph;
    g.at = phase::idle;
    g.rows.clear(); // applied on some shards: the lost shard's restore decides its values
    if (!self->state.ctl->restoring())
      fail_step(self, errc::peer_unreachable, why);
  };
  if (pushes.empty()) {
    std::vector<bool> none;
    return done(none);
  }
  auto fan = fan_in<bool>::make(pushes.size(), done, failed);
  for (size_t i = 0; i < pushes.size(); ++i) {
    auto s = pushes[i].first;
    self->request(st.cfg.shards[s], st.cfg.cluster.request_timeout, push_atom_v, std::move(pushes[i].second))
      .then([fan, i](const push_reply&) { fan->put(i, true); },
            [fan, s](caf::error& err) { fan->fail(cat("the in-graph push to shard ", s, " failed: ", describe(err))); });
  }
}

void on_part(chief_pointer self, uint32_t w, gradient_reply& rep) {
  auto& g = self->state.in_graph;
  if (g.at != phase::computing)
    return;
  auto got = g.round->deliver(w, rep.step, rep.part, rep.rows, rep.loss_sum, std::move(rep.grads));
  if (!got)
    return fail_step(self, errc::protocol_error, describe(got.error()));
  if (got->next)
    send_part(self, *got->next);
  if (g.round->ready())
    apply(self);
}

void on_part_failed(chief_pointer self, uint32_t w, uint64_t step, const caf::error& err) {
  auto& st = self->state;
  auto& g = st.in_graph;
  if (g.at != phase::computing || g.round->step() != step)
    return;
  if (st.ctl->restoring())
    return; // a shard went down: the step runs again once it is restored
  log_line(tag, cat("in-graph step ", step, ": worker ", w, " did not deliver its part (", describe(err),
                    "); its parts go to the other workers"));
  auto moved = g.round->lose(w, false);
  if (g.round->stalled())
    return stalled(self, cat("worker ", w, ": ", describe(err)));
  send_all(self, moved);
}

void send_part(chief_pointer self, in_graph_round::assignment a) {
  auto& st = self->state;
  auto& g = st.in_graph;
  auto& part = g.round->part_at(a.part);
  gradient_request req;
  req.step = g.round->step();
  req.part = a.part;
  req.rows.assign(g.rows.begin() + part.begin, g.rows.begin() + part.begin + part.rows);
  req.augment_seed = g.augment_seed * 1000003ULL + a.part;
  auto step = req.step;
  auto w = a.worker;
  self->request(st.workers[w], st.cfg.cluster.step_timeout, compute_atom_v, std::move(req))
    .then([=](gradient_reply& rep) { on_part(self, w, rep); },
          [=](caf::error& err) { on_part_failed(self, w, step, err); });
}

} // namespace

void detail::in_graph_prepare(chief_pointer self) {
  auto& st = self->state;
  if (!st.cfg.cluster.in_graph())
    return;
  auto workers = static_cast<uint32_t>(st.cfg.cluster.workers.size());
  auto& train = st.cfg.data->train;
  st.in_graph.round.emplace(workers);
  st.in_graph.order = std::make_unique<batcher>(train, index_range{0, static_cast<int>(train.rows)},
                                                st.cfg.train.batch_size * static_cast<int>(workers),
                                                static_cast<uint64_t>(st.cfg.train.seed));
}

void detail::in_graph_step(chief_pointer self) {
  auto& st = self->state;
  auto& g = st.in_graph;
  if (!g.round || g.at != phase::idle || st.ctl->phase() != run_phase::training || st.ctl->restoring())
    return;
  if (g.rows.empty())
    g.order->next_indices(g.rows, g.augment_seed);
  auto first = g.round->begin(static_cast<uint64_t>(st.ctl->steps() + 1), static_cast<int>(g.rows.size()));
  if (!first)
    return fail_step(self, errc::peer_unreachable, describe(first.error()));
  g.at = phase::computing;
  send_all(self, *first);
}

void detail::in_graph_worker_down(chief_pointer self, uint32_t j) {
  auto& g = self->state.in_graph;
  if (!g.round)
    return;
  auto moved = g.round->lose(j, true);
  if (g.at != phase::computing)
    return;
  if (g.round->stalled())
    return stalled(self, cat("worker ", j, " went down"));
  send_all(self, moved);
}

void detail::in_graph_worker_back(chief_pointer self, uint32_t j) {
  if (self->state.in_graph.round)
    self->state.in_graph.round->rejoin(j);
}

void detail::in_graph_abandon(chief_pointer self) {
  auto& g = self->state.in_graph;
  if (!g.round || g.at != phase::computing)
    return; // (pushes in flight end by themselves)
  g.round->abandon();
  g.at = phase::idle;
}

} // namespace actorps
