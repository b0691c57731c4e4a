// Elastic training's data plan, without CAF: the chief cuts each epoch's seeded example order
// into leases of a few batches and hands them to whichever worker asks; a worker reports how
// much of a lease it trained; what a leaving or crashed worker did not report goes back to the
// pool and is handed out again before anything new. Every reported example is marked in its
// epoch's tally, so an epoch closes with an exact count (and the count of examples reported
// twice, which the rules keep at zero). Single-threaded (the Chief actor owns it).
#pragma once

#include <caf/error.hpp>

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <vector>

namespace actorps {

/// Positions [begin, end) of epoch `epoch`'s example order, handed to one worker.
struct lease_grant {
  uint64_t id = 0;
  int64_t epoch = 0;
  int begin = 0;
  int end = 0;
  int size() const { return end - begin; }
};

/// The count of a completed epoch (every position of its order reported once).
struct epoch_tally {
  int64_t epoch = 0;
  int64_t examples = 0;   ///< distinct examples reported (== the training-set size)
  int64_t duplicates = 0; ///< examples reported a second time (0 unless the rules broke)
  int64_t reissued = 0;   ///< examples handed out again after a leave or a crash
};

class epoch_ledger {
public:
  /// An epoch is `rows` examples in epoch_order({0, rows}, seed, epoch); leases are `lease_rows`
  /// long (the last of an epoch shorter); the first epoch handed out is `first_epoch`.
  /// REQUIRES: rows > 0, lease_rows > 0.
  epoch_ledger(int rows, int lease_rows, uint64_t seed, int64_t first_epoch = 0);

  /// The next lease for `worker`: a returned piece of the oldest open epoch first, else fresh
  /// positions (opening the next epoch when the current one is handed out).
  lease_grant take(uint32_t worker);

  /// The worker trained the first `done` examples of lease `id`; the rest goes back to the pool.
  /// Errors: protocol_error for a lease that is not the worker's, or `done` outside [0, size].
  caf::error report(uint32_t worker, uint64_t id, int done);

  /// Every open lease of `worker` goes back to the pool (it left or crashed without reporting);
  /// returns how many examples went back.
  int64_t release(uint32_t worker);

  /// The training-set indices of a lease. REQUIRES: the lease is open.
  std::vector<int32_t> indices(const lease_grant& lease) const;

  /// Epochs completed since the last call, oldest first.
  std::vector<epoch_tally> take_completed();

  /// Open leases of `worker`.
  size_t open_leases(uint32_t worker) const;

  /// Examples reported so far (all epochs).
  int64_t reported() const { return reported_; }

  /// The ledger as a checkpoint keeps it (a flat list of integers): every open epoch's handed-out
  /// position, returned pieces and counts, with the open leases counted as handed back (a
  /// restarted chief's workers hold none of them).
  std::vector<int64_t> save() const;

  /// Continues from save()'s list. Errors: corrupt_data naming what does not fit (the training
  /// set has another size, the list is cut short).
  caf::error load(const std::vector<int64_t>& saved);

private:
  struct piece {
    int begin;
    int end;
  };
  struct epoch_state {
    std::vector<int> order;
    std::vector<uint8_t> seen;     // per position: times reported
    int fresh = 0;                 // positions below were handed out at least once
    std::deque<piece> returned;    // handed back, to hand out again first
    int64_t examples = 0;
    int64_t duplicates = 0;
    int64_t reissued = 0;
  };
  struct open_lease {
    uint32_t worker;
    lease_grant grant;
  };

  epoch_state& epoch(int64_t e);
  void give_back(const lease_grant& lease, int from);
  void close_finished();

  int rows_;
  int lease_rows_;
  uint64_t seed_;
  int64_t newest_;                         // the newest epoch handed out from
  uint64_t next_id_ = 1;
  int64_t reported_ = 0;
  std::map<int64_t, epoch_state> epochs_;  // open epochs
  std::map<uint64_t, open_lease> open_;
  std::vector<epoch_tally> completed_;
};

} // namespace actorps
