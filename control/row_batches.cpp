// See row_batches.hpp.
#include "control/row_batches.hpp"

#include <algorithm>

namespace actorps {

row_batches::row_batches(size_t depth) : slots_(depth + 1) {
}

uint64_t row_batches::begin(size_t pulls) {
  return slots_[current_].begin(pulls);
}

row_fetch::next row_batches::take_ahead() {
  current_ = ahead_.front();
  ahead_.pop_front();
  return slots_[current_].release();
}

size_t row_batches::free_slot() const {
  size_t slot = 0;
  while (slot == current_ || std::find(ahead_.begin(), ahead_.end(), slot) != ahead_.end())
    ++slot;
  return slot;
}

std::pair<size_t, uint64_t> row_batches::begin_ahead(size_t pulls) {
  const size_t slot = free_slot();
  ahead_.push_back(slot);
  return {slot, slots_[slot].begin_ahead(pulls)};
}

row_fetch::next row_batches::answered(size_t slot, uint64_t fetch) {
  return slot < slots_.size() ? slots_[slot].answered(fetch) : row_fetch::next::wait;
}

row_fetch::next row_batches::failed(size_t slot, uint64_t fetch) {
  return slot < slots_.size() ? slots_[slot].failed(fetch) : row_fetch::next::wait;
}

row_fetch::next row_batches::failed_all() {
  for (size_t slot : ahead_)
    slots_[slot].failed();
  return slots_[current_].failed();
}

} // namespace actorps
