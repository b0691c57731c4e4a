// The refusals of a snapshot read (see snapshot_refusals.hpp).
#include "control/snapshot_refusals.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

namespace actorps {

caf::error snapshot_not_kept(uint64_t id) {
  return caf::make_error(errc::protocol_error, cat("a read of save ", id, "'s snapshot, which the shard does not keep (no "
                                                   "hold, dropped, or released by a later save's hold)"));
}

caf::error snapshot_slot_unknown(uint32_t which) {
  return caf::make_error(errc::protocol_error, cat("a read of snapshot slot ", which, " (0: values, 1, 2: optimizer slots)"));
}

caf::error snapshot_range_not_held(uint32_t which, const slice_ref& range) {
  return caf::make_error(errc::unknown_variable, cat("the kept snapshot holds no slot ", which, " range of variable ",
                                                     range.variable, " at ", range.offset, " (", range.count, " values)"));
}

} // namespace actorps
