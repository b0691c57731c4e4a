// The SyncAggregator in ssp sessions: pushes applied at once, replies parked while their worker
// is more than `staleness` steps ahead of the slowest, and a silent slowest worker let go.
#include "actors/sync_aggregator_state.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <algorithm>

namespace actorps {

using namespace aggregator_detail;

// Releases every parked ssp worker that may go on now.
void aggregator_detail::release_parked(aggregator_pointer self) {
  auto& st = self->state;
  for (uint32_t w = 0; w < st.parked.size(); ++w)
    if (st.parked[w] && st.ssp->may_continue(w)) {
      st.waiting[w].deliver(std::move(*st.parked[w]));
      st.parked[w].reset();
    }
}

// ssp: while a reply is parked, checks at the slowest workers' silence deadline.
namespace {

void arm_silence_check(aggregator_pointer self) {
  auto& st = self->state;
  auto slowest = st.ssp->slowest();
  if (st.timer_due || slowest.empty())
    return;
  auto due = st.silence->next_deadline(slowest, st.cfg.step_timeout);
  st.timer_due = due;
  self->delayed_send(self, std::max(caf::timespan{0}, caf::timespan{due - self->clock().now()}), tick_atom_v);
}

} // namespace

// ssp: a slowest worker silent for cluster.step-timeout while others wait -- dead before its
// first push, frozen, or stopped without a push -- no longer counts until it pushes again.
void aggregator_detail::ssp_silence_check(aggregator_pointer self) {
  auto& st = self->state;
  st.timer_due.reset();
  bool parked = std::any_of(st.parked.begin(), st.parked.end(), [](auto& p) { return p.has_value(); });
  if (!parked)
    return;
  for (auto w : st.silence->silent(st.ssp->slowest(), self->clock().now(), st.cfg.step_timeout))
    lose_worker(self, w, "silent for cluster.step-timeout while others wait");
  if (std::any_of(st.parked.begin(), st.parked.end(), [](auto& p) { return p.has_value(); }))
    arm_silence_check(self);
}

caf::result<push_reply> aggregator_detail::ssp_push(aggregator_pointer self, push_request& req) {
  auto& st = self->state;
  if (req.worker >= st.cfg.workers)
    return caf::make_error(errc::unknown_worker, cat(st.tag, ": worker ", req.worker, " is not in the cluster"));
  st.silence->heard(req.worker, self->clock().now());
  auto rp = self->make_response_promise<push_reply>();
  uint32_t w = req.worker;
  uint64_t step = req.step;
  const bool last_part = req.part + 1 >= req.parts; // a step counts once, at its last part
  req.return_values = true;
  self->request(st.shard, st.cfg.request_timeout, push_atom_v, std::move(req))
    .then(
      [=](push_reply& reply) mutable {
        auto& st = self->state;
        reply.next_step = step + 1;
        if (!last_part) {
          rp.deliver(std::move(reply));
          return;
        }
        uint64_t ahead = st.ssp->finished(w, step);
        ++st.lag_histogram[std::min<uint64_t>(ahead, lag_buckets - 1)];
        if (st.ssp->may_continue(w)) {
          rp.deliver(std::move(reply));
        } else {
          for (auto slow : st.ssp->slowest())
            ++st.waited_on[slow];
          st.waiting[w] = rp;
          st.parked[w] = std::move(reply);
          arm_silence_check(self);
        }
        release_parked(self);
      },
      [=](caf::error& err) mutable { rp.deliver(err); });
  return rp;
}

} // namespace actorps
