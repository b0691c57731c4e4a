// The simulated chief's in-graph steps (train.replication = in-graph): the rules are the real
// control/in_graph_driver's, as the chief actor runs them (actors/chief_in_graph.cpp); this file is
// its host in virtual time: parts go to the worker processes the chief registered (a part request
// outlives cluster.step-timeout: the worker is benched for the step), the average to every shard.
// Every completed step must hold every row of its global batch exactly once.
#include "sim/cluster_nodes.hpp"

#include "common/log.hpp"

#include <chrono>

namespace actorps::sim {

class cluster::in_graph_chief final : public in_graph_host {
public:
  explicit in_graph_chief(cluster& c) : c_(c) {
  }

  run_control& run() override {
    return *c_.chief_;
  }

  void execute(run_commands cmds) override {
    c_.chief_execute(std::move(cmds));
  }

  run_time now() override {
    return c_.clock();
  }

  int batch_rows() override {
    c_.ig_.rows = sim::batch_rows * static_cast<int>(c_.sc_.workers);
    return c_.ig_.rows;
  }

  void batch_done() override {
  }

  void send_part(uint64_t step, const in_graph_round::assignment& a) override {
    c_.send_part(step, a);
  }

  void push_average(const in_graph_round::result& result, uint64_t token) override {
    c_.push_average(result, token);
  }

  void step_after(std::chrono::milliseconds pause) override {
    c_.ig_.open.clear(); // (the requests of the step given up are answered by nobody now)
    auto& c = c_;
    c_.chief_at(c_.now_ + std::chrono::duration_cast<std::chrono::microseconds>(pause).count(),
                [&c] { c.in_graph_step(); });
  }

  void log(const std::string& line) override {
    c_.log("chief", line);
  }

private:
  cluster& c_;
};

void cluster::make_in_graph_driver() {
  ig_ = in_graph_node{};
  ig_.host = std::make_unique<in_graph_chief>(*this);
  ig_.driver = std::make_unique<in_graph_driver>(sc_.workers, std::chrono::microseconds(sc_.step_timeout), *ig_.host);
}

void cluster::in_graph_step() {
  if (ig_.driver)
    ig_.driver->step();
}

// A part to the worker process the chief registered; its answer, or the request's timeout.
void cluster::send_part(uint64_t step, in_graph_round::assignment a) {
  auto& g = ig_;
  const uint64_t token = ++g.requests;
  const int rows = g.driver->round().part_at(a.part).rows;
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
      ig_.driver->part_failed(j, step, "no answer within cluster.step-timeout");
  });
}

void cluster::on_part(uint32_t j, uint64_t step, uint32_t part, int rows, uint64_t token) {
  if (ig_.open.erase(token) == 0)
    return; // (timed out already, or the step was given up)
  ig_.driver->part_delivered(j, step, part, rows, 0.5 * rows, {});
}

// The step's average to every shard; the driver counts the step once all applied it.
void cluster::push_average(const in_graph_round::result& result, uint64_t token) {
  if (result.rows != ig_.rows)
    return violate(cat("in-graph step ", result.step, " averaged ", result.rows, " rows of its ", ig_.rows));
  auto left = std::make_shared<uint32_t>(sc_.shards);
  for (uint32_t s = 0; s < sc_.shards; ++s)
    to_shard(
      chief_id(), s,
      [this, s, left, result, token] {
        auto& sh = *shards_[s];
        if (!sh.restored)
          return;
        ++sh.version; // the chief's push of the step's average
        to_chief(shard_id(s), [this, left, result, token] {
          if (--*left == 0)
            ig_.driver->applied(token, result.rows, result.loss_sum);
        });
      },
      [this, s, token] { // the shard is gone: its restore decides its values (the failure reaches the
        to_chief(shard_id(s), [this, s, token] { // chief after the shard's loss, as CAF's down message does)
          ig_.driver->apply_failed(token, cat("the in-graph push to shard ", s, " failed"));
        });
      });
}

void cluster::in_graph_worker_down(uint32_t j) {
  if (ig_.driver)
    ig_.driver->worker_down(j);
}

} // namespace actorps::sim
