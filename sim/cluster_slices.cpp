// The simulated model-parallel exchange: each slice runs control/slice_sequencer, the actor's own
// rules, over a host that computes nothing; its parts travel as messages to the group's other
// slices, layer by layer forward and backward, and a slice that stops tells the others the step
// it stops before. A step's compute time is charged before it begins.
#include "sim/cluster_nodes.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "control/worker_commands.hpp"

namespace actorps::sim {

// The simulated slice's primitives: no compute (the parts carry no values), each part a message
// to the slice of its group it names.
struct cluster::slice_node_host final : slice_host {
  cluster& c;
  uint32_t j;
  slice_node_host(cluster& owner, uint32_t index) : c(owner), j(index) {}
  caf::error forward(int, std::vector<float>& part) override {
    part.clear();
    return caf::none;
  }
  caf::error accept(int, bool, uint32_t, const float*, size_t) override { return caf::none; }
  caf::error begin_backward() override { return caf::none; }
  caf::error backward(int, std::vector<std::vector<float>>& partials) override {
    partials.assign(c.sc_.slices, {});
    return caf::none;
  }
  void finish_partials(int) override {}
  void send(uint32_t to, layer_part part) override {
    const uint32_t k = j / c.sc_.slices * c.sc_.slices + to; // (slice `to` of j's group)
    c.to_worker(c.worker_id(j), k, c.workers_[k]->incarnation, [&c = c, k, part = std::move(part)](worker_node& peer) {
      if (part.layer != layer_part::stop_marker)
        ++c.out_.slice_parts;
      c.slice_follow(k, peer.sequencer->receive(part));
    });
  }
};

void cluster::make_slice(uint32_t j) {
  auto& w = *workers_[j];
  w.slice = std::make_unique<slice_node_host>(*this, j);
  w.sequencer = std::make_unique<slice_sequencer>(j % sc_.slices, sc_.slices, slice_layers, *w.slice);
}

void cluster::slice_compute(uint32_t j, int rows) {
  auto& w = *workers_[j];
  w.slice_rows = rows;
  const auto span = static_cast<vtime>(static_cast<double>(sc_.compute) * w.slow);
  const vtime took = span + static_cast<vtime>(rng_.below(static_cast<uint64_t>(span / 2) + 1));
  at(now_ + took, [this, j, inc = w.incarnation] {
    to_worker(worker_id(j), j, inc, [this, j](worker_node& w) { slice_follow(j, w.sequencer->begin_step()); });
  });
}

// Tells the controller where the step stands after a begin or a part (as the actor's follow_step);
// an exchange that fails fails the worker (as the actor's).
void cluster::slice_follow(uint32_t j, caf::error err) {
  auto& w = *workers_[j];
  if (err) {
    log(cat("worker ", j), cat("fails: a model-parallel exchange failed: ", describe(err)));
    return worker_gone(j, true, "a model-parallel exchange failed");
  }
  worker_execute(j, step_followed(*w.ctl, w.sequencer->status(), w.slice_rows));
}

} // namespace actorps::sim
