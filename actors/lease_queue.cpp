// An elastic worker's data leases.
#include "actors/lease_queue.hpp"

#include <algorithm>
#include <utility>

namespace actorps {

bool lease_queue::ready() const {
  return std::any_of(held_.begin(), held_.end(),
                     [](const held& h) { return h.taken < static_cast<int>(h.lease.rows.size()); });
}

bool lease_queue::wants_more() const {
  if (asking_ != asking::idle)
    return false;
  auto open = std::count_if(held_.begin(), held_.end(),
                            [](const held& h) { return h.taken < static_cast<int>(h.lease.rows.size()); });
  return static_cast<size_t>(open) < depth_;
}

lease_request lease_queue::request(uint32_t worker) {
  asking_ = asking::requested;
  lease_request out;
  out.worker = worker;
  out.finished = std::exchange(finished_, {});
  return out;
}

void lease_queue::answered(data_lease lease) {
  if (lease.workers > 0)
    workers_ = lease.workers;
  if (lease.rows.empty()) {
    asking_ = asking::waiting;
    return;
  }
  asking_ = asking::idle;
  held_.push_back({std::move(lease), 0, 0});
}

// Rows taken before were trained (their step completed); fully trained leases are finished.
void lease_queue::commit() {
  for (auto& h : held_)
    h.trained = h.taken;
  while (!held_.empty() && held_.front().trained == static_cast<int>(held_.front().lease.rows.size())) {
    finished_.push_back({held_.front().lease.id, held_.front().trained});
    held_.pop_front();
  }
}

leased_batch lease_queue::take(int n) {
  commit();
  for (auto& h : held_) {
    const int size = static_cast<int>(h.lease.rows.size());
    if (h.taken >= size)
      continue;
    leased_batch out;
    out.rows = h.lease.rows.data() + h.taken;
    out.count = std::min(n, size - h.taken);
    out.augment_seed = h.lease.augment_seed + static_cast<uint64_t>(h.taken);
    h.taken += out.count;
    return out;
  }
  return {};
}

lease_request lease_queue::leave(uint32_t worker) {
  commit();
  lease_request out;
  out.worker = worker;
  out.finished = std::exchange(finished_, {});
  for (auto& h : held_)
    out.finished.push_back({h.lease.id, h.trained});
  held_.clear();
  return out;
}

} // namespace actorps
