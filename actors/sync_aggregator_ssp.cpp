// The SyncAggregator in ssp sessions: pushes applied at once, answers parked while their worker
// is more than `staleness` steps ahead of the slowest (with the rows a push asks back, read when
// the answer goes), and a silent slowest worker let go -- the decisions control/ssp_session's,
// carried out here.
#include "actors/sync_aggregator_state.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <algorithm>
#include <utility>

namespace actorps {

using namespace aggregator_detail;

void aggregator_detail::ssp_released(aggregator_pointer self, ssp_session<parked_reply>::released out) {
  auto& st = self->state;
  for (auto& [w, answer] : out.go) // (the rows a push asks back read now: after the wait)
    answer_with_reads(self, std::move(answer.ticket), std::move(answer.reply), std::move(answer.reads));
  for (auto w : out.silent)
    log_line(st.tag, cat("no longer waiting for worker ", w, " (silent for cluster.step-timeout while others wait)"));
  if (out.check_at) // (one check is armed at a time)
    self->delayed_send(self, std::max(caf::timespan{0}, caf::timespan{*out.check_at - self->clock().now()}),
                       tick_atom_v);
}

// ssp: a slowest worker silent for cluster.step-timeout while others wait -- dead before its
// first push, frozen, or stopped without a push -- no longer counts until it pushes again.
void aggregator_detail::ssp_silence_check(aggregator_pointer self) {
  ssp_released(self, self->state.ssp->tick(self->clock().now()));
}

caf::result<push_reply> aggregator_detail::ssp_push(aggregator_pointer self, push_request& req) {
  auto& st = self->state;
  if (req.worker >= st.cfg.workers)
    return caf::make_error(errc::unknown_worker, cat(st.tag, ": worker ", req.worker, " is not in the cluster"));
  const bool last_part = req.part + 1 >= req.parts; // a step counts once, at its last part
  st.ssp->heard(req.worker, self->clock().now());
  auto rp = self->make_response_promise<push_reply>();
  uint32_t w = req.worker;
  uint64_t step = req.step;
  auto reads = std::exchange(req.reads, {}); // (read when the answer goes, not at the update: the answer may wait)
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
        ssp_released(self, st.ssp->finished(w, step, parked_reply{rp, std::move(reply), reads}, self->clock().now()));
      },
      [=](caf::error& err) mutable { rp.deliver(err); });
  return rp;
}

} // namespace actorps
