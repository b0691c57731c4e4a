// What each of replica_control's commands means, written once for the WorkerReplica actor
// (actors/worker_replica.cpp) and the simulated worker (sim/cluster_workers.cpp): their order, that
// nothing is carried out after a leave, a quit or a failure (or once the host's worker is gone),
// and which input each timer gives back. The host carries out the primitives (send the hello,
// pull, compute, push, report, reach peers again, ask for data, arm a timer, leave, quit).
#pragma once

#include "control/replica_control.hpp"
#include "control/step_phase.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace actorps {

/// The timers a worker arms: each fires as one input of replica_control (timer_fired).
enum class worker_timer { lease, retry, tick };

class worker_command_host {
public:
  virtual ~worker_command_host() = default;

  /// The worker quit, failed or is gone: nothing more is carried out.
  virtual bool ended() = 0;
  virtual void register_hello() = 0;
  virtual void reconnect_chief() = 0;
  virtual void pull() = 0;
  virtual void compute(const replica_command& c) = 0; ///< c.batch: an elastic worker's leased rows
  virtual void push() = 0;
  virtual void report(const replica_command& c) = 0;  ///< may fail the worker (then ended())
  virtual void reconnect_shards(const std::vector<uint32_t>& shards) = 0;
  virtual void ask_lease(const replica_command& c) = 0;
  /// Arms `t`: after `after`, timer_fired(t) is the controller's input.
  virtual void arm(worker_timer t, std::chrono::milliseconds after) = 0;
  virtual void announce_stop() = 0;                   ///< model-parallel: the group learns this slice stops
  virtual void leave(const lease_request& progress) = 0; ///< tell the chief, then quit
  virtual void quit() = 0;
  virtual void fail(errc code, const std::string& text) = 0;
  virtual void log(const std::string& text) = 0;
};

/// Carries out `cmds` in order through `host`, none after a leave, quit or fail.
void carry_out(const replica_commands& cmds, worker_command_host& host);

/// The controller's input for where the begun step stands (nothing while idle; rows: the ready
/// step's examples).
replica_commands step_followed(replica_control& ctl, step_phase phase, int rows);

/// The controller's input when timer `t` fires.
replica_commands timer_fired(replica_control& ctl, worker_timer t, replica_time now);

} // namespace actorps
