// Sub-allocation of one block reserved up front (compute.gpu-memory = fraction:F): offsets into
// [0, capacity), first fit, neighbours merged when given back. Plain bookkeeping, no memory of its
// own: the CUDA backend maps the offsets onto the block it reserved.
#pragma once

#include <cstddef>
#include <map>
#include <optional>

namespace actorps {

class memory_arena {
public:
  /// An arena of `capacity` bytes handing out offsets that are multiples of `alignment` (> 0).
  explicit memory_arena(size_t capacity, size_t alignment = 256);

  /// Returns the offset of a free range of at least `bytes` (rounded up to the alignment; 0
  /// counts as 1), or nullopt when no free range is that large.
  std::optional<size_t> take(size_t bytes);

  /// Frees the range that take() returned at `offset`; returns false (and changes nothing) for
  /// an offset that is not taken.
  bool give_back(size_t offset);

  size_t capacity() const { return capacity_; }
  size_t in_use() const { return in_use_; }

  /// The largest range take() could return now.
  size_t largest_free() const;

private:
  size_t capacity_;
  size_t alignment_;
  size_t in_use_ = 0;
  std::map<size_t, size_t> free_;  // offset -> bytes, no two adjacent
  std::map<size_t, size_t> taken_; // offset -> bytes
};

} // namespace actorps
