#include "compute/staging_ring.hpp"

#include <algorithm>
#include <stdexcept>

namespace actorps {

staging_ring::staging_ring(size_t capacity, size_t alignment)
  : capacity_(capacity / std::max<size_t>(alignment, 1) * std::max<size_t>(alignment, 1)),
    alignment_(std::max<size_t>(alignment, 1)) {
}

staging_ring::answer staging_ring::take(size_t bytes) {
  const size_t want = std::max<size_t>((std::max<size_t>(bytes, 1) + alignment_ - 1) / alignment_ * alignment_, alignment_);
  if (want > chunk())
    throw std::logic_error("staging_ring::take: a piece larger than chunk()"); // (the backend splits its copies)
  // The pieces in use form one span [tail, head_) of the ring, perhaps wrapped past its end.
  size_t at = head_;
  if (!pieces_.empty()) {
    const size_t tail = pieces_.front().offset;
    if (head_ > tail) { // [tail, head_) unwrapped: room after head_, else at the start before tail
      if (head_ + want > capacity_)
        at = 0;
      if (at == 0 && want > tail)
        return {answer::kind::wait, 0, pieces_.front().ticket};
    } else if (head_ + want > tail) { // wrapped: room only between head_ and tail
      return {answer::kind::wait, 0, pieces_.front().ticket};
    }
  } else if (head_ + want > capacity_) {
    at = 0;
  }
  pieces_.push_back({at, want, next_ticket_});
  head_ = at + want;
  return {answer::kind::fits, at, next_ticket_++};
}

void staging_ring::done(uint64_t ticket) {
  while (!pieces_.empty() && pieces_.front().ticket <= ticket)
    pieces_.pop_front();
  if (pieces_.empty())
    head_ = 0; // (an empty ring starts over: the largest room)
}

} // namespace actorps
