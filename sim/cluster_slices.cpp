// The simulated model-parallel exchange (actors/slice_exchange's rules): a slice's step is
// ready once it computed its part and every other slice of its group sent theirs; a slice that
// stops tells the others the step it stops before, and a slice waiting at or past it stops too.
// One exchange per step stands for the real layer-by-layer forward and backward parts.
#include "sim/cluster_nodes.hpp"

#include "common/log.hpp"

#include <algorithm>

namespace actorps::sim {

// Calls fn(k) for every other slice k of worker j's group (its worker id).
void cluster::each_peer(uint32_t j, const std::function<void(uint32_t)>& fn) const {
  const uint32_t first = j / sc_.slices * sc_.slices;
  for (uint32_t k = first; k < first + sc_.slices; ++k)
    if (k != j)
      fn(k);
}

void cluster::slice_compute(uint32_t j, int rows) {
  auto& w = *workers_[j];
  w.mp.at = worker_node::exchange::stage::computing;
  w.mp.rows = rows;
  if (w.mp.stop_before <= w.mp.step) // (the exchange refuses to begin a step past a peer's stop)
    return slice_follow(j);
  const auto span = static_cast<vtime>(static_cast<double>(sc_.compute) * w.slow);
  const vtime took = span + static_cast<vtime>(rng_.below(static_cast<uint64_t>(span / 2) + 1));
  at(now_ + took, [this, j, inc = w.incarnation] {
    to_worker(worker_id(j), j, inc, [this, j](worker_node& w) {
      w.mp.at = worker_node::exchange::stage::awaiting_parts;
      each_peer(j, [this, j, step = w.mp.step](uint32_t k) {
        to_worker(worker_id(j), k, workers_[k]->incarnation, [this, j, k, step](worker_node& peer) {
          peer.mp.parts[step].insert(j);
          slice_follow(k);
        });
      });
      slice_follow(j);
    });
  });
}

void cluster::slice_announce_stop(uint32_t j) {
  each_peer(j, [this, j, step = workers_[j]->mp.step](uint32_t k) {
    to_worker(worker_id(j), k, workers_[k]->incarnation, [this, k, step](worker_node& peer) {
      peer.mp.stop_before = std::min(peer.mp.stop_before, step);
      slice_follow(k);
    });
  });
}

void cluster::slice_follow(uint32_t j) {
  auto& w = *workers_[j];
  using stage = worker_node::exchange::stage;
  if (w.mp.at == stage::idle)
    return;
  if (w.mp.stop_before <= w.mp.step) {
    w.mp.at = stage::idle;
    return worker_execute(j, w.ctl->step_status(replica_control::step_state::stopped, 0));
  }
  auto it = w.mp.parts.find(w.mp.step);
  const size_t others = sc_.slices - 1;
  if (w.mp.at != stage::awaiting_parts || (others > 0 && (it == w.mp.parts.end() || it->second.size() < others)))
    return;
  if (it != w.mp.parts.end())
    w.mp.parts.erase(it);
  w.mp.at = stage::idle;
  ++w.mp.step;
  worker_execute(j, w.ctl->step_status(replica_control::step_state::ready, w.mp.rows));
}

} // namespace actorps::sim
