// A shard's snapshot kept by copy-on-write, for a chief that reads it a piece at a time ((save_atom,
// snapshot_read): docs/protocol.md): nothing is copied at the hold; before the store writes a
// block (an embedding table's row, or 16,384 floats of another variable) for the first time since,
// the block's values as they were are kept, and a read takes the store's values with the kept
// blocks laid over them. A ps node then holds, beside its part, only what training changed while
// the save was read (it held its part twice). Plain; the store calls it under the shard's lock.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

namespace actorps {

class snapshot_overlay {
public:
  /// One array of a part (its values, or an optimizer slot): its floats (0: absent) and the
  /// floats of a block (the last block may be shorter).
  struct array_shape {
    size_t floats = 0;
    size_t block = 1;
  };
  using part_shape = std::array<array_shape, 3>; // values, slot0, slot1

  /// Starts keeping save id's snapshot of arrays shaped so (any kept before is released).
  void begin(uint64_t id, const std::vector<part_shape>& parts);

  /// Releases the snapshot kept.
  void end();

  /// Save id's snapshot is kept.
  bool holding(uint64_t id) const { return id_ && *id_ == id; }
  bool holding() const { return id_.has_value(); }

  /// Before floats [from, from + n) of array a of part p change (live: that array now): keeps
  /// the blocks they cover that are not kept yet. Nothing while no snapshot is kept.
  void before_write(size_t p, size_t a, const float* live, size_t from, size_t n);

  /// Floats [from, from + n) of array a of part p as they were at begin() (live: that array
  /// now) into out. REQUIRES: holding(), the range inside the array.
  void read(size_t p, size_t a, const float* live, size_t from, size_t n, float* out) const;

  /// Floats kept beside the store.
  size_t kept_floats() const { return kept_floats_; }

private:
  struct array_state {
    array_shape shape;
    std::vector<bool> kept; // per block
    std::unordered_map<size_t, std::unique_ptr<float[]>> blocks;
  };

  std::optional<uint64_t> id_;
  std::vector<std::array<array_state, 3>> parts_;
  size_t kept_floats_ = 0;
};

} // namespace actorps
