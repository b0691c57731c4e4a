// The chief's side of elastic training's data, without CAF: the epoch ledger (data/epoch_ledger),
// the reports of finished leases settled, and the rule that answers a lease request with a lease
// or with a wait (training paused, the run not training, the worker not a training member). The
// Chief actor and the simulator's chief both answer through it. Single-threaded.
#pragma once

#include "data/epoch_ledger.hpp"
#include "messages/chief_protocol.hpp"

#include <caf/error.hpp>

#include <cstdint>
#include <vector>

namespace actorps {

class lease_desk {
public:
  /// How long a worker waits before asking again while it may not train.
  static constexpr int32_t pause_wait_ms = 200;

  /// An epoch is `rows` examples in leases of `lease_rows` (data/epoch_ledger); the first epoch
  /// handed out is `first_epoch`; `seed` orders each epoch and seeds its augmentation.
  lease_desk(int rows, int lease_rows, uint64_t seed, int64_t first_epoch = 0);

  /// Applies the request's reports of finished leases. Errors: protocol_error naming a lease that
  /// is not the worker's or a count outside it (the ledger is unchanged by the bad report).
  caf::error settle(const lease_request& req);

  /// The answer to a request of `worker`: its next lease when it may train now, else a wait of
  /// pause_wait_ms; `live` workers either way (async and ssp scale gradients by it).
  data_lease answer(uint32_t worker, bool may_train, uint32_t live);

  /// The worker left or went down: its open leases go back to the pool; returns their examples.
  int64_t release(uint32_t worker) { return ledger_.release(worker); }

  /// Epochs completed since the last call, oldest first.
  std::vector<epoch_tally> take_completed() { return ledger_.take_completed(); }

  epoch_ledger& ledger() { return ledger_; }
  const epoch_ledger& ledger() const { return ledger_; }

private:
  epoch_ledger ledger_;
  uint64_t seed_;
};

} // namespace actorps
