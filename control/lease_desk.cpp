// The chief's answers to elastic workers' lease requests.
#include "control/lease_desk.hpp"

#include "data/batcher.hpp"

namespace actorps {

lease_desk::lease_desk(int rows, int lease_rows, uint64_t seed, int64_t first_epoch)
  : ledger_(rows, lease_rows, seed, first_epoch), seed_(seed) {
}

caf::error lease_desk::settle(const lease_request& req) {
  for (auto& r : req.finished)
    if (auto err = ledger_.report(req.worker, r.id, r.done))
      return err;
  return caf::none;
}

data_lease lease_desk::answer(uint32_t worker, bool may_train, uint32_t live) {
  data_lease out;
  out.workers = live;
  if (!may_train) {
    out.wait_ms = pause_wait_ms;
    return out;
  }
  auto lease = ledger_.take(worker);
  out.id = lease.id;
  out.epoch = lease.epoch;
  out.rows = ledger_.indices(lease);
  out.augment_seed = augment_seed_at(seed_, static_cast<long>(lease.epoch), lease.begin);
  return out;
}

} // namespace actorps
