// The in-graph driver's rules (see in_graph_driver.hpp).
#include "control/in_graph_driver.hpp"

#include "common/log.hpp"

namespace actorps {

in_graph_driver::in_graph_driver(uint32_t workers, std::chrono::nanoseconds step_timeout, in_graph_host& host)
  : round_(workers), step_timeout_(step_timeout), host_(host) {
}

void in_graph_driver::fail(errc code, std::string why) {
  host_.execute(host_.run().failed(0, code, std::move(why)));
}

void in_graph_driver::send_all(const std::vector<in_graph_round::assignment>& parts) {
  for (auto& a : parts)
    host_.send_part(round_.step(), a);
}

void in_graph_driver::step() {
  auto& run = host_.run();
  if (at_ != phase::idle || run.phase() != run_phase::training || run.restoring())
    return;
  auto first = round_.begin(static_cast<uint64_t>(run.steps() + 1), host_.batch_rows());
  if (!first)
    return fail(errc::peer_unreachable, describe(first.error()));
  at_ = phase::computing;
  send_all(*first);
}

void in_graph_driver::part_delivered(uint32_t w, uint64_t step, uint32_t p, int rows, double loss_sum,
                                     std::vector<variable_slice> grads) {
  if (at_ != phase::computing)
    return;
  auto got = round_.deliver(w, step, p, rows, loss_sum, std::move(grads));
  if (!got)
    return fail(errc::protocol_error, describe(got.error()));
  if (got->next)
    host_.send_part(round_.step(), *got->next);
  if (!round_.ready())
    return;
  at_ = phase::applying;
  host_.push_average(round_.complete(), ++pushes_);
}

void in_graph_driver::part_failed(uint32_t w, uint64_t step, const std::string& why) {
  if (at_ != phase::computing || round_.step() != step || host_.run().restoring())
    return; // (a shard went down: the step runs again once it is restored)
  host_.log(cat("in-graph step ", step, ": worker ", w, " did not deliver its part (", why,
                "); its parts go to the other workers"));
  auto moved = round_.lose(w, false);
  if (round_.stalled())
    return stalled(cat("worker ", w, ": ", why));
  send_all(moved);
}

void in_graph_driver::end_apply() {
  at_ = phase::idle;
  host_.batch_done();
}

void in_graph_driver::applied(uint64_t token, int rows, double loss_sum) {
  if (at_ != phase::applying || token != pushes_)
    return;
  end_apply();
  host_.execute(host_.run().chief_step(rows, loss_sum, host_.now()));
}

void in_graph_driver::apply_failed(uint64_t token, const std::string& why) {
  if (at_ != phase::applying || token != pushes_)
    return;
  end_apply(); // (applied on some shards: the lost shard's restore decides its values)
  if (!host_.run().restoring())
    fail(errc::peer_unreachable, why);
}

void in_graph_driver::worker_down(uint32_t j) {
  auto moved = round_.lose(j, true);
  if (at_ != phase::computing)
    return;
  if (round_.stalled())
    return stalled(cat("worker ", j, " went down"));
  send_all(moved);
}

void in_graph_driver::worker_back(uint32_t j) {
  round_.rejoin(j);
}

// Found by the simulator (in-graph seed 15358, shard crashes): a shard that died while the
// average was pushed and came back at once took the push as a fresh process that answers
// nothing; the driver waited for that answer for good, and no step began after the restore (the
// chief's push would have failed at request-timeout, and failed the run). The step is over.
void in_graph_driver::abandon() {
  if (at_ == phase::applying)
    return end_apply();
  if (at_ != phase::computing)
    return;
  round_.abandon();
  at_ = phase::idle;
}

// Nobody could compute the step's remaining parts (every live worker failed it): the step runs
// again after a pause, until it has stalled for a whole cluster.step-timeout.
void in_graph_driver::stalled(const std::string& why) {
  at_ = phase::idle;
  const int64_t step = host_.run().steps() + 1;
  if (round_.stall(host_.now(), step_timeout_) == in_graph_round::stall_action::give_up)
    return fail(errc::peer_unreachable,
                cat("in-graph step ", step, ": no worker computed it within cluster.step-timeout (", why, ")"));
  host_.log(cat("in-graph step ", step, ": no worker left to compute it (", why, "); trying again"));
  host_.step_after(stall_pause);
}

} // namespace actorps
