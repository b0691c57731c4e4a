// Tests: a whole shard_snapshot answering the reads a chief makes of a shard's kept snapshot
// ((save_atom, snapshot_read): docs/protocol.md), one at most, by save id, with the shard's
// refusals: what make_checkpoint (tests/support/checkpoint_assembly) assembles a checkpoint
// through. A shard itself keeps its snapshot by copy-on-write (control/snapshot_overlay).
#pragma once

#include "control/snapshot_refusals.hpp"
#include "messages/shard_protocol.hpp"

#include <caf/expected.hpp>

#include <cstdint>
#include <optional>
#include <utility>

namespace actorps {

class snapshot_hold {
public:
  /// Keeps snap as save id's, in place of any kept before, and returns its version and every
  /// slice's range. (Release the one kept before taking the next: drop_all.)
  snapshot_piece hold(uint64_t id, shard_snapshot snap);

  /// The values of `range` of slot `which` (0: values, 1: slot0, 2: slot1) of save id's snapshot.
  /// Fails with protocol_error for a snapshot not kept (another save's, or released) or a slot
  /// above 2, with unknown_variable for a range that no kept slice holds whole.
  caf::expected<snapshot_piece> read(uint64_t id, uint32_t which, const slice_ref& range) const;

  /// Releases save id's snapshot (not kept: nothing).
  void drop(uint64_t id);

  /// Releases the snapshot kept, whichever save's.
  void drop_all() { kept_.reset(); }

  /// Whether a snapshot is kept.
  bool holding() const { return kept_.has_value(); }

private:
  std::optional<std::pair<uint64_t, shard_snapshot>> kept_;
};

} // namespace actorps
