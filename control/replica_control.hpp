// A worker's life as a state machine without CAF: registration, the start, the rounds of pull or
// push requests, recovery from lost shards (reconnecting is a command whose result comes back as
// an input), pauses while the chief restarts, step grants, an elastic worker's data feed (the
// chief's leases), and the stop. One method per input returns the commands the WorkerReplica actor carries out
// (docs/architecture.md draws the machine). Single-threaded.
#pragma once

#include "common/errc.hpp"
#include "control/train_mode.hpp"
#include "control/lease_queue.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace actorps {

/// A worker's phases.
enum class replica_phase {
  registering,    ///< the hello is out (first, or again after the chief restarted)
  waiting_start,  ///< registered; the chief has not started training yet
  in_round,       ///< training: a round of requests or a step is in progress
  recovering,     ///< a round broke (a shard went down): waiting before pulling afresh
  paused,         ///< the chief went down: reaching its restart; no new steps
  awaiting_grant, ///< async with train.max-steps: the chief's grant of steps is used up
  serving,        ///< in-graph: started; computes the parts of the chief's steps it is sent
  stopping,       ///< told to stop (or out of steps): waiting for the requests in flight
  done,           ///< quit (normally or failed)
};

const char* to_string(replica_phase p);

using replica_time = std::chrono::steady_clock::time_point;

/// Everything the worker's rules depend on.
struct replica_control_config {
  train_mode mode = train_mode::async;
  int64_t max_steps = 0;            ///< sync: every worker stops at this global step (0: none)
  int64_t report_every = 100;       ///< a progress report every N steps
  bool speaks_for_group = true;     ///< false for slices > 0: their reports count nothing
  bool shards_recoverable = false;  ///< a lost shard can be reached again (not model-parallel)
  bool chief_recoverable = false;   ///< a lost chief can be reached again
  bool in_graph = false;            ///< train.replication = in-graph: the chief drives the steps
  std::chrono::milliseconds startup_timeout{120000};
  std::chrono::milliseconds retry_after{200}; ///< recovering: pause before pulling afresh
  bool leased = false;              ///< elastic: each step's rows come from the chief's data leases
  uint32_t index = 0;               ///< leased: the worker's id in its lease requests
  int batch_size = 1;               ///< leased: rows per step
  std::chrono::milliseconds lease_retry{500}; ///< leased: pause after a failed lease request
  /// cluster.overlap-steps: async or ssp, not leased: 1 computes the next step while this step's
  /// pushes and their replies travel (its gradients go out once the replies are in); 0: one at a time.
  int overlap_steps = 0;
  /// The workers the shards' learning rate is scaled for (async_scaling_workers); leased async
  /// and ssp: a push is weighted by these over the workers the lease lists now (push_weight).
  uint32_t scaling_workers = 1;
};

/// One thing for the actor to do.
struct replica_command {
  enum class kind {
    register_hello,   ///< send the hello to the chief
    reconnect_chief,  ///< reach the restarted chief, then chief_reconnected() (or failed())
    pull,             ///< pull this worker's share of every shard (requested() per request)
    compute,          ///< load the next batch (leased: `batch`) and begin a step, then step_status()
    push,             ///< push the step's gradients (requested() per request)
    report,           ///< a progress report of `steps` and `examples` (`final`)
    reconnect_shards, ///< reach each of `shards` again, then shards_reconnected() (or failed())
    ask_lease,        ///< leased: send `lease` to the chief, then lease_answered() or lease_failed() with `epoch`
    lease_after,      ///< leased: ask for lease_wait_over() after `after`
    retry_after,      ///< ask for retry() after `after`
    tick_after,       ///< ask for tick() after `after` (the start deadline)
    announce_stop,    ///< model-parallel: tell the group this slice stops
    leave,            ///< tell the chief this worker leaves (`lease`: its leases' progress), then quit
    quit,             ///< stopped normally
    fail,             ///< quit with `code` and `text`
    log,              ///< `text`: a log line
  };
  explicit replica_command(kind k) : what(k) {}
  kind what;
  int64_t steps = 0;
  int64_t examples = 0;
  int64_t stale_steps = 0; ///< report: steps every shard dropped as stale since the last report
  int64_t split_steps = 0; ///< report: steps some shards took and others dropped since then
  bool final = false;
  std::vector<uint32_t> shards;
  std::chrono::milliseconds after{0};
  lease_request lease; ///< ask_lease, leave
  leased_batch batch;  ///< compute (leased): the step's rows, valid until the next compute
  uint64_t epoch = 0;  ///< ask_lease: the lease epoch to answer with (a chief restart begins a new one)
  errc code = errc::none;
  std::string text;

  static replica_command log(std::string text) {
    replica_command c{kind::log};
    c.text = std::move(text);
    return c;
  }
};

using replica_commands = std::vector<replica_command>;

/// How a request to a shard failed.
enum class request_failure {
  lost,      ///< the connection broke (an error of CAF's other than a timeout)
  timed_out, ///< no answer within cluster.request-timeout (the connection is up: pull afresh)
  not_ready, ///< a restarted shard the chief has not restored yet (not_initialized)
  refused,   ///< the shard refused it (any other error of actorps's)
};

/// Threading: one owner (the WorkerReplica actor).
class replica_control {
public:
  explicit replica_control(replica_control_config cfg);

  replica_phase phase() const { return phase_; }
  int64_t step() const { return step_; }
  /// Steps every shard dropped as stale (sync).
  int64_t stale_steps() const { return stale_steps_; }
  /// Steps some shards took and others dropped as stale (sync with backups on several shards).
  int64_t split_steps() const { return split_steps_; }
  /// Steps this worker may still take (-1: no limit).
  int64_t steps_left() const { return steps_left_; }
  /// The version of shard s's values the worker holds.
  uint64_t version(uint32_t s) const { return versions_.at(s); }
  /// The version of shard s's values the step being pushed was computed on (a push names it as
  /// its base): version(s) at its compute, older than version(s) for a step computed ahead.
  uint64_t base_version(uint32_t s) const { return computed_on_.at(s); }
  /// Whether steps overlap the exchange (cluster.overlap-steps in async or ssp, not leased).
  bool overlaps() const;
  /// Whether the step being computed may push parts as backprop completes them (wait-free
  /// backprop): not a step computed ahead, whose pushes wait for the replies of the one before.
  bool pushes_early() const { return ahead_ == ahead_step::none; }
  /// Requests awaiting a reply in the current round.
  size_t pending() const { return round_.pending; }

  /// The worker begins: register (and arm the start deadline).
  replica_commands begin(replica_time now);
  /// The chief accepted the hello. `steps_left` >= 0: stop (or, with `more`, wait for a grant)
  /// after that many more steps; `shards`: the plan's shard count.
  replica_commands registered(int64_t steps_left, bool more, uint32_t shards);
  /// The chief's start (it may overtake the welcome).
  replica_commands start();
  /// The chief grants `steps` more steps.
  replica_commands granted(int64_t steps);
  /// The chief's stop.
  replica_commands stop();
  /// SIGTERM: leave the job -- finish the round in flight, report, tell the chief, quit normally.
  replica_commands leave();
  /// The start deadline may have passed.
  replica_commands tick(replica_time now);

  /// A request to shard s is sent; returns the shard's epoch, to check its reply against.
  uint64_t requested(uint32_t s);
  /// Whether a reply of shard s sent at `epoch` still counts (shard s went down since: no);
  /// uncounts it from shard s's requests in flight.
  bool answers(uint32_t s, uint64_t epoch);
  /// A pull reply (its values uploaded) of shard s at `version`.
  replica_commands pulled(uint32_t s, uint64_t version);
  /// A push reply (its values uploaded): version, the next step the shard names, stale gradients.
  replica_commands pushed(uint32_t s, uint64_t version, uint64_t next_step, bool stale);
  /// A request to shard s failed. Lost (the connection broke): the round waits for shard s's
  /// down message (a closed connection or a shard that quit reports one), which decides.
  replica_commands request_failed(uint32_t s, request_failure how, errc code, std::string text);
  /// Shard s's actor went down; `ended`: it quit normally (stopped at the run's end: the worker
  /// stops too, without reconnecting).
  replica_commands shard_down(uint32_t s, std::string why, bool ended = false);
  /// The lost shards of the last reconnect_shards command were reached again (one lost since
  /// is reached next).
  replica_commands shards_reconnected();
  /// The pause after a broken round is over.
  replica_commands retry();

  /// Where the step begun by `compute` stands: ready (gradients in, `rows` examples), waiting for
  /// other slices, or stopped (another slice of the group stopped: the step is dropped).
  enum class step_state { waiting, ready, stopped };
  replica_commands step_status(step_state s, int rows);
  /// The step begun by `compute` cannot compute: a request it needed first (an embedding
  /// table's rows, pulled with requested() each) failed or lost its shard. The round is broken:
  /// once the step's requests are answered, the worker recovers as after a failed push. A step
  /// computed ahead (overlap) whose rows are given up is dropped instead: the failure that gave
  /// them up breaks the round it overlaps, if any.
  replica_commands step_abandoned();

  /// Leased: the chief's answer to the ask_lease of `epoch` (a lease, or a wait).
  replica_commands lease_answered(uint64_t epoch, data_lease lease);
  /// Leased: the ask_lease of `epoch` failed.
  replica_commands lease_failed(uint64_t epoch, errc code, std::string text);
  /// Leased: the wait of lease_after is over.
  replica_commands lease_wait_over();
  /// Leased: the live worker count of the chief's latest lease (0: none yet).
  uint32_t lease_workers() const { return leases_ ? leases_->workers() : 0; }
  /// The factor on this step's gradients: elastic async and ssp, scaling_workers / the workers
  /// listed now, so the shards' rate follows the membership (lr / live workers); else 1.
  float push_weight() const;

  /// In-graph: a part of the chief's step was computed (counted for the stop's log line).
  void part_computed() { ++parts_; }

  /// The chief's actor went down.
  /// `ended`: it quit normally (the run is over, in whatever phase: the worker just quits).
  replica_commands chief_down(std::string why, bool ended = false);
  /// The restarted chief was reached.
  replica_commands chief_reconnected(replica_time now);
  /// The worker failed (the actor quits with the error itself): no more commands.
  void failed();

private:
  enum class stage { none, pulls, computing, pushes, reconnecting };
  struct round_state {
    stage at = stage::none;
    size_t pending = 0;
    std::vector<size_t> in_flight;  ///< per shard
    std::vector<uint64_t> epoch;    ///< per shard: bumped when it goes down
    std::set<uint32_t> lost;        ///< shards whose connection broke
    /// Shards a request of which failed as lost: the round waits for their down message, which
    /// follows and decides (quit normally: the run is over; else the shard is lost).
    std::set<uint32_t> unsettled;
    std::set<uint32_t> reaching;    ///< reconnecting: the shards the command names
    bool broken = false;            ///< a reply failed: pull afresh after the round
    uint64_t next_step = UINT64_MAX; ///< the smallest next step the push replies named
    std::vector<bool> stale_from;   ///< per shard: a push reply said its gradients were dropped
  };

  replica_commands fail(errc code, std::string text);
  replica_commands settle();
  replica_commands after_recovery();
  replica_commands round_complete();
  replica_commands step_complete();
  replica_commands begin_training();
  replica_commands next_step();
  void compute_ahead(replica_commands& out);
  void drop_ahead();
  replica_commands ahead_status(step_state s, int rows);
  replica_commands push_step(int rows);
  /// The step ahead is still computing (its end is an input to wait for).
  bool ahead_busy() const { return ahead_ == ahead_step::computing || ahead_ == ahead_step::dropped; }
  void stop_at_sync_limit();
  void spend_step(replica_commands& out);
  replica_commands ask_more();
  /// Leased: the next step waits for data and no round is in flight (a lease answer begins it).
  bool starving() const { return feed_ == feed::starving && round_.at == stage::none; }
  replica_commands reconnect();
  replica_commands finish_if_idle();
  replica_command report(bool final);
  void register_now(replica_time now, replica_commands& out);

  replica_control_config cfg_;
  /// How a worker in the stopping phase ends: told to stop (a final report) or leaving the job
  /// (a last report, then the leave).
  enum class ending { stop, leave };

  /// Leased: whether the next step has its rows (starving: it waits for a lease).
  enum class feed { flowing, starving };

  /// The step computed ahead (overlap): none; computing; ready (its push waits for the replies of
  /// the step before); dropped (still computing, its gradients to be thrown away: a break, a
  /// stop or a pause came first; no other step begins until it ends).
  enum class ahead_step { none, computing, ready, dropped };

  replica_phase phase_ = replica_phase::registering;
  ahead_step ahead_ = ahead_step::none;
  int ahead_rows_ = 0;
  std::vector<uint64_t> computed_on_; ///< versions_ at the compute of the step pushed next
  std::vector<uint64_t> ahead_on_;    ///< versions_ at the compute of the step ahead
  feed feed_ = feed::flowing;
  std::unique_ptr<lease_queue> leases_; ///< leased only
  uint64_t lease_epoch_ = 0;            ///< bumped when a restarted chief is reached
  ending ending_ = ending::stop;
  round_state round_;
  std::set<uint32_t> down_;     ///< shards whose down message came (before the plan, or since the last reconnect)
  bool start_early_ = false;    ///< registering: the start overtook the welcome
  bool more_grants_ = false;    ///< at zero steps left: wait for a grant instead of stopping
  int64_t early_grants_ = 0;    ///< registering: grants that overtook the welcome
  bool resync_step_ = false;    ///< sync: after a recovery, the next step is the shards' version
  replica_time deadline_{};
  std::vector<uint64_t> versions_;
  int64_t step_ = 0;
  int64_t steps_left_ = -1;
  int64_t stale_steps_ = 0;
  int64_t split_steps_ = 0;
  int64_t parts_ = 0; ///< in-graph parts computed
  int64_t report_steps_ = 0;
  int64_t report_examples_ = 0;
  int64_t report_stale_ = 0;
  int64_t report_split_ = 0;
};

} // namespace actorps
