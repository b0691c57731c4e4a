// A kept snapshot and the pieces read from it (see snapshot_hold.hpp).
#include "tests/support/snapshot_hold.hpp"

namespace actorps {

namespace {

std::vector<slice_ref> ranges_of(const std::vector<variable_slice>& slices) {
  std::vector<slice_ref> out;
  for (auto& s : slices)
    out.push_back({s.variable, s.offset, static_cast<uint32_t>(s.data.values.size())});
  return out;
}

} // namespace

snapshot_piece snapshot_hold::hold(uint64_t id, shard_snapshot snap) {
  kept_.emplace(id, std::move(snap));
  const auto& kept = kept_->second;
  snapshot_piece out;
  out.version = kept.version;
  out.values = ranges_of(kept.values);
  out.slot0 = ranges_of(kept.slot0);
  out.slot1 = ranges_of(kept.slot1);
  return out;
}

void snapshot_hold::drop(uint64_t id) {
  if (kept_ && kept_->first == id)
    kept_.reset();
}

caf::expected<snapshot_piece> snapshot_hold::read(uint64_t id, uint32_t which, const slice_ref& range) const {
  if (!kept_ || kept_->first != id)
    return snapshot_not_kept(id);
  if (which > 2)
    return snapshot_slot_unknown(which);
  const auto& kept = kept_->second;
  const auto& slices = which == 0 ? kept.values : which == 1 ? kept.slot0 : kept.slot1;
  for (auto& s : slices) {
    const size_t n = s.data.values.size();
    if (s.variable != range.variable || range.by_rows() || range.offset < s.offset
        || size_t{range.offset} + range.count > size_t{s.offset} + n)
      continue;
    snapshot_piece out;
    out.version = kept.version;
    const float* from = s.data.values.data() + (range.offset - s.offset);
    out.piece = {range.variable, range.offset, tensor_copy(from, range.count)};
    return out;
  }
  return snapshot_range_not_held(which, range);
}

} // namespace actorps
