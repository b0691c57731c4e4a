// The simulated chief's in-graph steps (train.replication = in-graph): the real in_graph_round
// cuts each global batch into parts, hands them to the serving workers and moves a lost, frozen
// or cut-off worker's parts to the others (a part request outlives cluster.step-timeout: the
// worker is benched for the step); the average is pushed to every shard, then
// run_control::chief_step asks for the next step. Every completed step must hold every row of its
// global batch exactly once.
#include "sim/cluster_nodes.hpp"

#include "common/log.hpp"

#include <chrono>

namespace actorps::sim {

namespace {

// A stalled step is begun again after this pause (as actors/chief_in_graph.cpp).
constexpr vtime stall_pause = 250'000;

} // namespace

void cluster::in_graph_step() {
  auto& g = ig_;
  if (!g.round || g.at != in_graph_node::phase::idle || chief_->phase() != run_phase::training)
    return;
  g.rows = batch_rows * static_cast<int>(sc_.workers);
  auto first = g.round->begin(static_cast<uint64_t>(chief_->steps() + 1), g.rows);
  if (!first)
    return chief_execute(chief_->failed(0, errc::peer_unreachable, describe(first.error())));
  g.at = in_graph_node::phase::computing;
  for (auto& a : *first)
    send_part(a);
}

// A part to the worker process the chief registered; its answer, or the request's timeout.
void cluster::send_part(in_graph_round::assignment a) {
  auto& g = ig_;
  const uint64_t step = g.round->step();
  const uint64_t token = ++g.requests;
  const int rows = g.round->part_at(a.part).rows;
  g.open.insert(token);
  const uint32_t j = a.worker;
  to_worker(chief_id(), j, workers_[j]->known, [this, j, step, part = a.part, rows, token](worker_node& w) {
    if (w.ctl->phase() != replica_phase::serving)
      return; // (not started, or stopping: the chief's request times out)
    const vtime took = static_cast<vtime>(static_cast<double>(sc_.compute) * w.slow);
    at(now_ + took, [this, j, inc = w.incarnation, step, part, rows, token] {
      to_worker(worker_id(j), j, inc, [this, j, step, part, rows, token](worker_node& w) {
        w.ctl->part_computed();
        to_chief(worker_id(j), [this, j, step, part, rows, token] { on_part(j, step, part, rows, token); }, w.chief);
      });
    });
  });
  chief_at(now_ + sc_.step_timeout, [this, j, step, token] {
    if (ig_.open.erase(token) > 0)
      on_part_failed(j, step, "no answer within cluster.step-timeout");
  });
}

void cluster::on_part(uint32_t j, uint64_t step, uint32_t part, int rows, uint64_t token) {
  auto& g = ig_;
  if (g.open.erase(token) == 0 || g.at != in_graph_node::phase::computing)
    return; // (timed out already, or the step was abandoned)
  auto got = g.round->deliver(j, step, part, rows, 0.5 * rows, {});
  if (!got)
    return violate(cat("the chief refused worker ", j, "'s in-graph part: ", describe(got.error())));
  if (got->next)
    send_part(*got->next);
  if (!g.round->ready())
    return;
  auto result = g.round->complete();
  if (result.rows != g.rows)
    return violate(cat("in-graph step ", result.step, " averaged ", result.rows, " rows of its ", g.rows));
  g.at = in_graph_node::phase::applying;
  auto left = std::make_shared<uint32_t>(sc_.shards);
  for (uint32_t s = 0; s < sc_.shards; ++s)
    to_shard(
      chief_id(), s,
      [this, s, left, result] {
        auto& sh = *shards_[s];
        if (!sh.restored)
          return;
        ++sh.version; // the chief's push of the step's average
        to_chief(shard_id(s), [this, left, result] {
          if (--*left > 0 || ig_.at != in_graph_node::phase::applying)
            return;
          ig_.at = in_graph_node::phase::idle;
          chief_execute(chief_->chief_step(result.rows, result.loss_sum, clock()));
        });
      },
      [this, s] { // the shard is gone: its restore decides its values (the failure reaches the
        to_chief(shard_id(s), [this, s] { // chief after the shard's loss, as CAF's down message does)
          if (ig_.at != in_graph_node::phase::applying)
            return;
          ig_.at = in_graph_node::phase::idle;
          if (!chief_->restoring())
            chief_execute(chief_->failed(0, errc::peer_unreachable, cat("the in-graph push to shard ", s, " failed")));
        });
      });
}

void cluster::on_part_failed(uint32_t j, uint64_t step, const std::string& why) {
  auto& g = ig_;
  if (g.at != in_graph_node::phase::computing || g.round->step() != step)
    return;
  log("chief", cat("in-graph step ", step, ": worker ", j, " did not deliver its part (", why, ")"));
  auto moved = g.round->lose(j, false);
  if (g.round->stalled())
    return in_graph_stalled(why);
  for (auto& a : moved)
    send_part(a);
}

void cluster::in_graph_worker_down(uint32_t j) {
  auto& g = ig_;
  if (!g.round)
    return;
  auto moved = g.round->lose(j, true);
  if (g.at != in_graph_node::phase::computing)
    return;
  if (g.round->stalled())
    return in_graph_stalled(cat("worker ", j, " went down"));
  for (auto& a : moved)
    send_part(a);
}

// Nobody is left to compute the step: it runs again after a pause, until it has stalled for a
// whole step timeout (the round's rule), then the run fails.
void cluster::in_graph_stalled(const std::string& why) {
  auto& g = ig_;
  g.at = in_graph_node::phase::idle;
  g.open.clear();
  const auto verdict = g.round->stall(clock(), std::chrono::microseconds(sc_.step_timeout));
  if (verdict == in_graph_round::stall_action::give_up)
    return chief_execute(chief_->failed(0, errc::peer_unreachable,
                                        cat("in-graph step ", chief_->steps() + 1,
                                            ": no worker computed it within cluster.step-timeout (", why, ")")));
  log("chief", cat("in-graph step ", chief_->steps() + 1, ": no worker left to compute it (", why, "); trying again"));
  chief_at(now_ + stall_pause, [this] { in_graph_step(); });
}

} // namespace actorps::sim
