// First-fit sub-allocation with merging of free neighbours.
#include "compute/memory_arena.hpp"

#include <algorithm>

namespace actorps {

memory_arena::memory_arena(size_t capacity, size_t alignment)
  : capacity_(capacity / alignment * alignment), alignment_(alignment) {
  if (capacity_ > 0)
    free_.emplace(0, capacity_);
}

std::optional<size_t> memory_arena::take(size_t bytes) {
  const size_t want = (std::max<size_t>(bytes, 1) + alignment_ - 1) / alignment_ * alignment_;
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < want)
      continue;
    const size_t offset = it->first, rest = it->second - want;
    free_.erase(it);
    if (rest > 0)
      free_.emplace(offset + want, rest);
    taken_.emplace(offset, want);
    in_use_ += want;
    return offset;
  }
  return std::nullopt;
}

bool memory_arena::give_back(size_t offset) {
  auto t = taken_.find(offset);
  if (t == taken_.end())
    return false;
  size_t start = offset, bytes = t->second;
  in_use_ -= bytes;
  taken_.erase(t);
  auto next = free_.lower_bound(start);
  if (next != free_.end() && next->first == start + bytes) { // merge the free range after it
    bytes += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) { // and the one before it
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      start = prev->first;
      bytes += prev->second;
      free_.erase(prev);
    }
  }
  free_.emplace(start, bytes);
  return true;
}

size_t memory_arena::largest_free() const {
  size_t best = 0;
  for (auto& [offset, bytes] : free_)
    best = std::max(best, bytes);
  return best;
}

} // namespace actorps
