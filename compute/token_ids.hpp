// A text example's token ids inside the float rows every data set holds: slot value = the bit
// pattern of id + 1 (ids < 2^30: a finite float, never NaN), 0 = an empty slot. Rows are only
// copied (batches, uploads), never computed on, so the bits arrive as written; the embedding
// layer decodes them (each row: up to data.max-tokens ids, the empty slots after them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace actorps {

/// Ids are hashes below 2^30; an embedding of 2^B rows takes id mod 2^B (B <= 30).
inline constexpr uint32_t token_id_bits = 30;

inline float encode_token(uint32_t id) {
  const uint32_t bits = (id & ((1u << token_id_bits) - 1)) + 1;
  float out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

/// Whether the slot holds an id (and which).
inline bool decode_token(float slot, uint32_t& id) {
  uint32_t bits;
  std::memcpy(&bits, &slot, sizeof bits);
  if (bits == 0 || bits > (1u << token_id_bits))
    return false;
  id = bits - 1;
  return true;
}

/// Whether every id in n slots is below `limit` (empty slots aside): one pass with no branch per
/// slot, for a guard on ids taken unchecked otherwise.
inline bool ids_below(const float* slots, size_t n, size_t limit) {
  uint32_t most = 0; // (the largest id + 1 seen)
  for (size_t s = 0; s < n; ++s) {
    uint32_t bits;
    std::memcpy(&bits, slots + s, sizeof bits);
    most = bits <= (1u << token_id_bits) && bits > most ? bits : most;
  }
  return most <= limit;
}

/// Walks the ids of a batch's slots in order, skipping the empty ones: a cursor that runs ahead
/// of a loop over the same ids, to ask for what the loop will read.
class id_cursor {
public:
  id_cursor(const float* slots, size_t count) : slots_(slots), count_(count) {}

  /// The next id (false past the last).
  bool next(uint32_t& id) {
    while (at_ < count_)
      if (decode_token(slots_[at_++], id))
        return true;
    return false;
  }

private:
  const float* slots_;
  size_t count_;
  size_t at_ = 0;
};

} // namespace actorps
