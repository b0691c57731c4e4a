#include "node/caf_defaults.hpp"

#include <caf/timespan.hpp>

#include <chrono>
#include <cstddef>

namespace actorps {

void set_node_caf_defaults(caf::actor_system_config& cfg) {
  // On small machines CAF's default scheduler (a thread per core, polling before sleeping)
  // takes CPU from the workers' compute: one scheduler thread, short polling. Measured with
  // local-cluster.sh (1 shard, 2 workers, 2 cores): 19k -> 26k examples/s (polling 100 times: 23k).
  cfg.set("scheduler.max-threads", 1);
  cfg.set("work-stealing.aggressive-poll-attempts", 1);
  cfg.set("work-stealing.moderate-poll-attempts", 1);
  // A sleeping scheduler thread is woken by every message sent to it from another thread, so
  // this timeout only paces idle polls: at 1 ms each idle node woke ~1,000 times a second and
  // preempted a worker's compute thread (cnn cluster on 2 cores: faster in 3 of 4 alternating
  // pairs at 50 ms, the reference MLP's cluster in 2 of 3).
  cfg.set("work-stealing.relaxed-sleep-duration", caf::timespan{std::chrono::milliseconds(50)});
  // No BASP deserialization workers: the multiplexer thread deserializes each message where it
  // was read, instead of copying the payload (1.7 MB per step of the cnn preset) for a worker
  // that the scheduler thread then runs. Measured on 2 cores (cnn, 1 shard, 2 workers, 3,000
  // steps): faster in 8 of 9 alternating pairs, median +5% (docs/results.md).
  cfg.set("middleman.workers", size_t{0});
}

} // namespace actorps
