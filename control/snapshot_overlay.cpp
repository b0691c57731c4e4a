// Blocks kept before their first write, laid over the store's values on a read (see
// snapshot_overlay.hpp).
#include "control/snapshot_overlay.hpp"

#include <algorithm>

namespace actorps {

void snapshot_overlay::begin(uint64_t id, const std::vector<part_shape>& parts) {
  end();
  id_ = id;
  parts_.resize(parts.size());
  for (size_t p = 0; p < parts.size(); ++p)
    for (size_t a = 0; a < 3; ++a) {
      auto& st = parts_[p][a];
      st.shape = parts[p][a];
      st.shape.block = std::max<size_t>(st.shape.block, 1);
      st.kept.assign((st.shape.floats + st.shape.block - 1) / st.shape.block, false);
    }
}

void snapshot_overlay::end() {
  id_.reset();
  parts_.clear();
  kept_floats_ = 0;
}

void snapshot_overlay::before_write(size_t p, size_t a, const float* live, size_t from, size_t n) {
  if (!id_ || n == 0)
    return;
  auto& st = parts_[p][a];
  const size_t block = st.shape.block;
  for (size_t b = from / block; b * block < from + n; ++b) {
    if (st.kept[b])
      continue;
    const size_t first = b * block, size = std::min(block, st.shape.floats - first);
    std::unique_ptr<float[]> copy{new float[size]}; // (not zeroed: filled below)
    std::copy(live + first, live + first + size, copy.get());
    st.blocks.emplace(b, std::move(copy));
    st.kept[b] = true;
    kept_floats_ += size;
  }
}

void snapshot_overlay::read(size_t p, size_t a, const float* live, size_t from, size_t n, float* out) const {
  std::copy(live + from, live + from + n, out);
  const auto& st = parts_[p][a];
  const size_t block = st.shape.block;
  for (size_t b = from / block; b * block < from + n; ++b) {
    if (!st.kept[b])
      continue;
    const float* kept = st.blocks.at(b).get();
    const size_t first = std::max(b * block, from), last = std::min(std::min((b + 1) * block, st.shape.floats), from + n);
    std::copy(kept + (first - b * block), kept + (last - b * block), out + (first - from));
  }
}

} // namespace actorps
