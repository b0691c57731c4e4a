// In-graph replication's step driver (train.replication = in-graph), written once for the chief
// actor (actors/chief_in_graph.cpp) and the simulator (sim/cluster_in_graph.cpp): when a step
// may begin, which part goes to whom (in_graph_round), when the average is pushed, what a failed
// part or a lost worker does, and when a stalled step is begun again or the run fails. The host
// carries out its primitives (send a part, push the average, arm the pause) and tells the driver
// what came back, in the manner of CAF's basp::instance and its callee. Single-threaded.
#pragma once

#include "control/in_graph_rules.hpp"
#include "control/run_control.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace actorps {

/// What the driver needs of the process it runs in.
class in_graph_host {
public:
  virtual ~in_graph_host() = default;

  /// The run's controller, as the chief holds it: its phase, restores and step count decide
  /// whether a step may begin; what it returns, the host carries out (execute).
  virtual run_control& run() = 0;
  virtual void execute(run_commands cmds) = 0;
  virtual run_time now() = 0;

  /// The rows of the step's global batch: the next one from the data order, or the same one again
  /// while it has not been applied (batch_done()).
  virtual int batch_rows() = 0;
  /// The batch was applied, or the step that held it is over: the next step takes the next one.
  virtual void batch_done() = 0;
  /// Asks worker a.worker for the gradient of part a.part of `step`; its answer comes back
  /// through part_delivered(), its failure (or no answer within cluster.step-timeout) through
  /// part_failed().
  virtual void send_part(uint64_t step, const in_graph_round::assignment& a) = 0;
  /// Pushes the step's average to every shard; then applied(token, ...), or apply_failed(token,
  /// ...) once any push failed.
  virtual void push_average(const in_graph_round::result& result, uint64_t token) = 0;
  /// Calls step() again after `pause`.
  virtual void step_after(std::chrono::milliseconds pause) = 0;
  virtual void log(const std::string& line) = 0;
};

class in_graph_driver {
public:
  enum class phase { idle, computing, applying };

  /// A stalled step is begun again after this pause, for at most cluster.step-timeout.
  static constexpr std::chrono::milliseconds stall_pause{250};

  /// `workers`: the configured workers (REQUIRES > 0).
  in_graph_driver(uint32_t workers, std::chrono::nanoseconds step_timeout, in_graph_host& host);

  phase at() const { return at_; }
  const in_graph_round& round() const { return round_; }

  /// Begins the next step when none runs, the run trains and no shard is being restored.
  void step();
  /// Worker w's answer for part p of `step`.
  void part_delivered(uint32_t w, uint64_t step, uint32_t p, int rows, double loss_sum,
                      std::vector<variable_slice> grads);
  /// Worker w did not answer for its part of `step`; its parts go to the others (while a shard
  /// is being restored nothing moves: the step runs again once it is back).
  void part_failed(uint32_t w, uint64_t step, const std::string& why);
  /// Every shard applied the average pushed as `token`: the controller counts the step. (An
  /// answer for pushes the driver gave up is ignored.)
  void applied(uint64_t token, int rows, double loss_sum);
  /// A push of the average `token` failed (applied on some shards: the lost shard's restore
  /// decides its values); the run fails unless a shard is being restored.
  void apply_failed(uint64_t token, const std::string& why);
  /// Worker j's process went down: its parts go to the others.
  void worker_down(uint32_t j);
  /// A restarted worker j takes parts again from the next step on.
  void worker_back(uint32_t j);
  /// A shard is lost: the step being computed is dropped (it runs again once the shard is back);
  /// one whose average is being pushed is over (applied on some shards: the restore decides the
  /// lost shard's values), whether or not its pushes ever answer.
  void abandon();

private:
  void send_all(const std::vector<in_graph_round::assignment>& parts);
  void stalled(const std::string& why);
  void fail(errc code, std::string why);

  /// The applying step's batch is done: the next step takes the next one.
  void end_apply();

  in_graph_round round_;
  std::chrono::nanoseconds step_timeout_;
  in_graph_host& host_;
  phase at_ = phase::idle;
  uint64_t pushes_ = 0; ///< the token of the latest average pushed (applying: the one awaited)
};

} // namespace actorps
