// The simulated cluster's nodes and helpers, shared by its files (sim/cluster*.cpp); not a public
// header of the library.
#pragma once

#include "sim/cluster.hpp"

#include "control/row_batches.hpp"
#include "control/slice_sequencer.hpp"

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace actorps::sim {

inline constexpr size_t transcript_lines = 150;
inline constexpr int batch_rows = 50;
inline constexpr int slice_layers = 3; ///< model-parallel: the dense layers each step exchanges parts of

/// Virtual time as a log stamp, e.g. "    12.345 ms".
inline std::string stamp(vtime t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%10.3f ms", static_cast<double>(t) / 1000.0);
  return buf;
}

struct cluster::worker_node {
  std::unique_ptr<replica_control> ctl;
  uint64_t incarnation = 0;
  bool alive = false; ///< its process runs (not crashed, not exited)
  uint64_t chief = 1; ///< the chief process it is connected to (its loss is noticed only then)
  uint64_t known = 0; ///< the incarnation the chief registered last: its messages go to that process
  std::vector<uint64_t> shards; ///< per shard: the process it is connected to (reached again after a loss)
  std::vector<uint64_t> links;  ///< per shard: its link's generation (links: a new one each time it is reached)
  uint64_t requests = 0;        ///< request ids handed out
  /// Requests not answered yet (reply, failure or timeout): id -> (shard, the epoch it was sent
  /// at, whether it is a push).
  struct open_request {
    uint32_t shard;
    uint64_t epoch;
    bool push;
  };
  std::map<uint64_t, open_request> open;
  vtime frozen_until = 0;
  double slow = 1.0;
  int64_t rounds = 0; ///< push rounds it began
  /// Model-parallel: the slice's sequencer (control/slice_sequencer, as the actor's) over a host
  /// that computes nothing and sends each part as a message to the group (sim/cluster_slices.cpp).
  std::unique_ptr<slice_host> slice;
  std::unique_ptr<slice_sequencer> sequencer;
  int slice_rows = 0; ///< the rows of the step it computes
  row_batches fetches;        ///< a table's rows, pulled before each step or asked back ahead (as the actor's)
  std::vector<int> slot_rows; ///< per slot of `fetches`: the rows of the step they are for
};

struct cluster::shard_node {
  bool alive = true;        ///< its process runs
  bool restored = true;     ///< set up (a restarted shard waits for the chief's restore)
  uint64_t incarnation = 1; ///< messages to an older process are lost
  uint64_t lost_updates = 0; ///< lost with its crashes (applied after the restored checkpoint)
  uint64_t crashes = 0;
  uint64_t restores = 0;
  bool noticed = false;     ///< a chief learned of its last loss (not one killed after the chief quit)
  uint64_t chief_seen = 0;  ///< the chief process connected to this process (its loss reaches only it)
  uint64_t version_at_crash = 0; ///< its version when it was last killed
  vtime frozen_until = 0;        ///< stopped (freeze_shard) until then: what reaches it waits
  uint64_t version = 0;
  using held = held_reply;
  std::optional<sync_session<held>> sync; // the SyncAggregator's session: the rule, contributors, step clock
  std::optional<ssp_session<held>> ssp;    // the ssp aggregator's session: the rule, parked answers, silence
  std::vector<uint64_t> seen;               // per worker: the incarnation it monitors (0: none)
  std::vector<bool> lost;                   // per worker: its down notification arrived
  std::vector<int64_t> finished;            // ssp: steps applied per worker (the simulator's own count)
  std::vector<std::vector<uint64_t>> own_updates; // async, ssp: the versions each worker's pushes made (this incarnation)
  std::vector<int64_t> top_step;            // ssp: the highest step each worker pushed (a push repeated
                                            // after its reply timed out is no new step)
  std::vector<uint64_t> row_version;        // a table's rows: updates applied to each (this incarnation)
  std::vector<std::vector<uint64_t>> own_rows; // per worker: each row's version after its own last update
};

} // namespace actorps::sim
