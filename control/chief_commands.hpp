// What each of run_control's commands means, written once for the chief actor (actors/chief.cpp)
// and the simulated chief (sim/cluster_chief.cpp): which workers a stop reaches, that a restarted
// worker takes in-graph parts again before it starts, that a shard's restore drops the in-graph
// step being computed, that nothing is carried out after a quit or a failure. The host carries out
// the primitives (send a start, a grant, a stop; evaluate, save, finish; restore a shard; quit).
#pragma once

#include "control/in_graph_driver.hpp"
#include "control/run_control.hpp"

#include <chrono>
#include <cstdint>
#include <string>

namespace actorps {

class chief_command_host {
public:
  virtual ~chief_command_host() = default;

  /// The chief quit or failed: nothing more is carried out.
  virtual bool ended() = 0;
  virtual void log(const run_command& c) = 0;        ///< a log line (a progress line with its figures)
  virtual void membership(const run_command& c) = 0; ///< a join, leave or crash to record
  virtual void tick_after(std::chrono::milliseconds after) = 0;
  virtual void start_workers() = 0;                  ///< every worker (model-parallel: in groups)
  virtual void start_worker(uint32_t j) = 0;
  virtual void step_soon() = 0;                      ///< in-graph: the next step, by message to itself
  virtual void grant(uint32_t j, int64_t steps) = 0;
  virtual void stop_worker(uint32_t j) = 0;
  virtual void evaluate(const run_command& c) = 0;
  virtual void save(const run_command& c) = 0;
  virtual void finish(const run_command& c) = 0;
  virtual void restore_shard(uint32_t s) = 0;
  virtual void quit() = 0;                           ///< the run is over: stop the shards and quit
  virtual void fail(errc code, const std::string& text) = 0;
};

/// Carries out `cmds` in order through `host`; `ctl` says which workers train (stop_workers
/// reaches those), `in_graph` is the in-graph driver (none: between-graph).
void carry_out(const run_commands& cmds, const run_control& ctl, chief_command_host& host,
               in_graph_driver* in_graph = nullptr);

} // namespace actorps
