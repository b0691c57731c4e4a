// An elastic worker's data leases.
#include "control/lease_queue.hpp"

#include <algorithm>
#include <utility>

namespace actorps {

size_t lease_queue::untaken() const {
  return static_cast<size_t>(std::count_if(held_.begin(), held_.end(), [](const held& h) { return h.taken < h.size(); }));
}

bool lease_queue::ready() const {
  return untaken() > 0;
}

bool lease_queue::wants_more() const {
  return asking_ == asking::idle && untaken() < depth_;
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
  while (!held_.empty() && held_.front().trained == held_.front().size()) {
    finished_.push_back({held_.front().lease.id, held_.front().trained});
    held_.pop_front();
  }
}

leased_batch lease_queue::take(int n) {
  commit();
  for (auto& h : held_) {
    if (h.taken >= h.size())
      continue;
    leased_batch out;
    out.rows = h.lease.rows.data() + h.taken;
    out.count = std::min(n, h.size() - h.taken);
    out.augment_seed = h.lease.augment_seed + static_cast<uint64_t>(h.taken);
    h.taken += out.count;
    return out;
  }
  return {};
}

lease_request lease_queue::leave(uint32_t worker) {
  commit();
  auto out = request(worker);
  asking_ = asking::idle;
  for (auto& h : held_)
    out.finished.push_back({h.lease.id, h.trained});
  held_.clear();
  return out;
}

} // namespace actorps
