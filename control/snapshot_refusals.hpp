// The refusals of a read of a shard's kept snapshot ((save_atom, snapshot_read): docs/protocol.md),
// which the shard's store gives (parameter_store::read_held) and tests' stand-ins share.
#pragma once

#include "messages/shard_protocol.hpp"

#include <caf/error.hpp>

#include <cstdint>

namespace actorps {

/// A snapshot not kept (protocol_error), a slot above 2 (protocol_error), a range no kept slice
/// holds whole (unknown_variable).
caf::error snapshot_not_kept(uint64_t id);
caf::error snapshot_slot_unknown(uint32_t which);
caf::error snapshot_range_not_held(uint32_t which, const slice_ref& range);

} // namespace actorps
