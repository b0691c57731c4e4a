// The SyncAggregator's state and the functions its files share (sync_aggregator.cpp: the actor
// and sync steps; sync_aggregator_ssp.cpp: ssp). Private to actors/.
#pragma once

#include "actors/sync_aggregator.hpp"
#include "control/log_throttle.hpp"
#include "control/push_assembly.hpp"
#include "control/shard_layout.hpp"
#include "control/ssp_session.hpp"
#include "control/sync_rules.hpp"
#include "control/silence_watch.hpp"
#include "control/sync_session.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <optional>
#include <string>
#include <vector>

namespace actorps::aggregator_detail {

using reply_promise = caf::typed_response_promise<push_reply>;
using held_part = push_assembly<reply_promise>::held_part;

/// ssp: a worker's answer, parked while it is too far ahead, and the rows its push asks back
/// (cluster.rows-with-push: read when the answer goes, after the wait).
struct parked_reply {
  reply_promise ticket;
  push_reply reply;
  std::vector<slice_ref> reads{};
};

struct aggregator_state {
  sync_aggregator_config cfg;
  parameter_shard_actor shard;
  std::string tag;
  std::optional<sync_session<held_part>> sync; // sync: the rule, each step's contributors, the step clock
  std::optional<ssp_session<parked_reply>> ssp; // ssp: the rule, parked answers, the silence check
  std::optional<shard_layout> layout;                            // from the setup its shard accepted
  std::optional<push_assembly<reply_promise>> assembly;          // sync: pushes that come in parts
  std::vector<caf::actor_addr> senders;                          // per worker, monitored
  log_throttle strangers{5, std::chrono::minutes(1)};            // lines for pushes in another's name
  silence_watch pushes{0, {}};                           // per worker: its last push (the stall report)
  wire_precision reply_precision = wire_precision::fp32; // the workers' (one cluster setting)
  std::string scope;                                     // its shard's (from the setup)
  static inline const char* name = "sync_aggregator";
};

using aggregator_pointer = parameter_shard_actor::stateful_pointer<aggregator_state>;

/// Answers a push (or a part of one) with `reply`, the rows it asks back (cluster.rows-with-push)
/// read from the shard now and added after its values; at once when it asks none.
void answer_with_reads(aggregator_pointer self, reply_promise rp, push_reply reply, std::vector<slice_ref> reads);

/// Stops waiting for worker w; logs why unless it simply finished (why empty).
void lose_worker(aggregator_pointer self, uint32_t w, const std::string& why);

/// ssp: carries out what the session let go (answers, workers silent too long, the next check).
void ssp_released(aggregator_pointer self, ssp_session<parked_reply>::released out);

/// ssp: lets go of a slowest worker silent for cluster.step-timeout while others wait.
void ssp_silence_check(aggregator_pointer self);

/// ssp: applies a push at once and answers it, or parks the answer while its worker is too far ahead.
caf::result<push_reply> ssp_push(aggregator_pointer self, push_request& req);

} // namespace actorps::aggregator_detail
