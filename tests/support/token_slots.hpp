// Id slots of text examples written by hand (compute/token_ids.hpp): ids, -1 for an empty slot.
#pragma once

#include "compute/token_ids.hpp"

#include <cstdint>
#include <vector>

namespace actorps::test {

/// Returns each id as its slot (encode_token), 0 (empty) for -1.
inline std::vector<float> slots_of(const std::vector<int>& ids) {
  std::vector<float> out;
  for (int id : ids)
    out.push_back(id < 0 ? 0.0f : encode_token(static_cast<uint32_t>(id)));
  return out;
}

} // namespace actorps::test
