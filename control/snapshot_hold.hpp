// A shard's snapshot kept for a chief that reads it a piece at a time ((save_atom, snapshot_read):
// docs/protocol.md), so that a checkpoint of an embedding table never passes through the chief
// whole. Plain; the shard's actor owns it.
#pragma once

#include "messages/shard_protocol.hpp"

#include <caf/expected.hpp>

#include <optional>

namespace actorps {

class snapshot_hold {
public:
  /// Keeps snap, in place of one kept before, and returns its version and every slice's range.
  snapshot_piece hold(shard_snapshot snap);

  /// The values of `range` of slot `which` (0: values, 1: slot0, 2: slot1) of the kept snapshot.
  /// Fails with protocol_error without a kept snapshot or for a slot above 2, with
  /// unknown_variable for a range that no kept slice holds whole.
  caf::expected<snapshot_piece> read(uint32_t which, const slice_ref& range) const;

  /// Releases the kept snapshot (none kept: nothing).
  void drop() { kept_.reset(); }

  bool holding() const { return kept_.has_value(); }

private:
  std::optional<shard_snapshot> kept_;
};

} // namespace actorps
