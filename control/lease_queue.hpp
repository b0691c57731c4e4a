// An elastic worker's data, without CAF: the leases the chief handed it, in order, and how far
// it trained each. Rows are taken a batch at a time (a batch never spans two leases); rows taken
// count as trained once the next batch is taken or the worker leaves (its step was complete by
// then), so a lease is reported finished only when every row of it was trained, and a crash
// leaves the whole unreported rest to the chief. Single-threaded (the WorkerReplica owns it).
#pragma once

#include "messages/chief_protocol.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace actorps {

/// The rows of one step.
struct leased_batch {
  const int32_t* rows = nullptr;
  int count = 0;
  uint64_t augment_seed = 0;
};

class lease_queue {
public:
  /// Where the next lease stands: none asked for, a request out, or waiting (the chief said
  /// training is paused) before asking again.
  enum class asking { idle, requested, waiting };

  /// Holds up to `depth` leases (the one being trained and those asked for ahead).
  explicit lease_queue(size_t depth = 2) : depth_(depth) {}

  asking state() const { return asking_; }
  /// Whether a batch can be taken now.
  bool ready() const;
  /// Whether to ask for another lease now (fewer than depth held, no request out or waiting).
  bool wants_more() const;

  /// The request for the next lease: reports the leases finished since the last request.
  lease_request request(uint32_t worker);
  /// The chief's answer: a lease (held) or a wait (ask again after its wait_ms).
  void answered(data_lease lease);
  /// The wait is over: ask again.
  void wait_over() { asking_ = asking::idle; }
  /// The request failed: ask again later.
  void request_failed() { asking_ = asking::idle; }

  /// Commits the rows taken before (trained) and takes up to n rows of the oldest lease.
  /// REQUIRES: ready().
  leased_batch take(int n);

  /// The live worker count of the chief's latest answer (0: none yet).
  uint32_t workers() const { return workers_; }

  /// Leaving: commits the rows taken and reports every held lease (finished or not); empties
  /// the queue.
  lease_request leave(uint32_t worker);

private:
  struct held {
    data_lease lease;
    int taken = 0;   // rows handed out for steps
    int trained = 0; // rows whose step completed
    int size() const { return static_cast<int>(lease.rows.size()); }
  };
  size_t untaken() const; // held leases with rows left to take
  void commit();

  size_t depth_;
  asking asking_ = asking::idle;
  std::deque<held> held_;
  std::vector<lease_report> finished_; // not reported yet
  uint32_t workers_ = 0;
};

} // namespace actorps
