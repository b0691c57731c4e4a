// The simulated workers' embedding table: before a step computes, its rows are pulled from every
// shard or were asked back with earlier pushes (control/row_batches decides when it computes or is
// given up, as in the worker's actor);
// shards keep each row's version, and a fetch must read every row at least at its worker's own
// last update of it (read your own writes, as a worker's dense values do).
#include "sim/cluster_nodes.hpp"

#include "common/log.hpp"

namespace actorps::sim {

void cluster::worker_fetch_rows(uint32_t j, int rows) {
  auto& w = *workers_[j];
  const size_t slot = w.fetches.current();
  w.slot_rows[slot] = rows;
  worker_pull_rows(j, slot, w.fetches.begin(sc_.shards), static_cast<uint64_t>(w.ctl->step())); // (a part on every shard)
}

void cluster::worker_pull_rows(uint32_t j, size_t slot, uint64_t fetch, uint64_t step) {
  auto& w = *workers_[j];
  const uint64_t inc = w.incarnation;
  for (uint32_t s = 0; s < sc_.shards; ++s) {
    auto tag = open_request(j, s, false);
    tag.fetch = fetch;
    tag.slot = slot;
    to_shard(
      worker_id(j), s,
      [this, s, j, inc, tag, step] {
        if (!shards_[s]->restored)
          return shard_refuse(s, j, inc, tag);
        shard_serve_rows(s, j, inc, tag, step);
      },
      request_lost(s, j, inc, tag), w.shards[s]);
  }
}

void cluster::check_own_rows(uint32_t s, uint32_t j, uint64_t incarnation, uint64_t step) {
  auto& sh = *shards_[s];
  if (sh.seen[j] == incarnation) // (a worker's own updates count from its first push to this process)
    for (uint32_t r : table_rows_of(j, step))
      if (sh.row_version[r] < sh.own_rows[j][r])
        violate(cat("worker ", j, "'s rows for step ", step, " from shard ", s, ": row ", r, " at version ",
                    sh.row_version[r], ", before the worker's own update to ", sh.own_rows[j][r]));
}

void cluster::check_sync_rows(uint32_t s, uint32_t j, uint64_t incarnation, uint64_t step) {
  check_own_rows(s, j, incarnation, step);
  if (shards_[s]->version < step)
    violate(cat("worker ", j, "'s rows for step ", step, " from shard ", s, " were read at version ",
                shards_[s]->version, ", before step ", step - 1, " was applied"));
}

void cluster::worker_take_rows_ahead(uint32_t j, int rows) {
  auto& w = *workers_[j];
  const auto next = w.fetches.take_ahead();
  w.slot_rows[w.fetches.current()] = rows;
  switch (next) {
    case row_fetch::next::compute: return compute_timer(j, rows);
    case row_fetch::next::refetch: return worker_fetch_rows(j, rows); // (a push or pull that carried them failed)
    default: return; // (the last answer computes)
  }
}

void cluster::shard_serve_rows(uint32_t s, uint32_t j, uint64_t incarnation, request_tag tag, uint64_t step) {
  auto& sh = *shards_[s];
  check_own_rows(s, j, incarnation, step);
  const uint64_t version = sh.version;
  to_worker(shard_id(s), j, incarnation, [this, s, j, tag, version](worker_node& w) {
    if (!answered(w, s, tag))
      return fetch_failed(j, tag.slot, tag.fetch); // (timed out, or its shard went down meanwhile)
    const auto next = w.fetches.answered(tag.slot, tag.fetch);
    worker_execute(j, w.ctl->pulled(s, version)); // (an abandoned step's round settles)
    if (next == row_fetch::next::compute)
      compute_timer(j, w.slot_rows[w.fetches.current()]);
  });
}

void cluster::fetch_failed(uint32_t j, size_t slot, uint64_t fetch) {
  abandon_if(j, workers_[j]->fetches.failed(slot, fetch));
}

void cluster::fetches_failed(uint32_t j) {
  abandon_if(j, workers_[j]->fetches.failed_all());
}

void cluster::abandon_if(uint32_t j, row_fetch::next next) {
  if (next == row_fetch::next::abandon) // (the controller recovers the round, or drops a step ahead)
    worker_execute(j, workers_[j]->ctl->step_abandoned());
}

// Async and ssp: a push's rows move at once, each one update.
void cluster::shard_row_push(uint32_t s, uint32_t j, uint64_t step) {
  auto& sh = *shards_[s];
  for (uint32_t r : table_rows_of(j, step))
    sh.own_rows[j][r] = ++sh.row_version[r];
}

} // namespace actorps::sim
