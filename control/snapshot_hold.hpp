// A shard's snapshots kept for a chief that reads them a piece at a time ((save_atom,
// snapshot_read): docs/protocol.md), so that a checkpoint of an embedding table never passes
// through the chief whole. Keeps two at most, by save id. Plain; the shard's actor owns it.
#pragma once

#include "messages/shard_protocol.hpp"

#include <caf/expected.hpp>

#include <cstdint>
#include <utility>
#include <vector>

namespace actorps {

class snapshot_hold {
public:
  /// The most snapshots kept at once (a save the chief gave up may still read while the next
  /// one holds); a hold beyond releases the one kept longest.
  static constexpr size_t most = 2;

  /// Keeps snap as save id's (in place of one kept for the same id) and returns its version and
  /// every slice's range.
  snapshot_piece hold(uint64_t id, shard_snapshot snap);

  /// The values of `range` of slot `which` (0: values, 1: slot0, 2: slot1) of save id's snapshot.
  /// Fails with protocol_error for a snapshot not kept or a slot above 2, with unknown_variable
  /// for a range that no kept slice holds whole.
  caf::expected<snapshot_piece> read(uint64_t id, uint32_t which, const slice_ref& range) const;

  /// Releases save id's snapshot (none kept: nothing).
  void drop(uint64_t id);

  /// Releases every snapshot (those of a chief that went down: a new chief's saves have ids of
  /// their own).
  void drop_all() { kept_.clear(); }

  /// The snapshots kept.
  size_t kept() const { return kept_.size(); }

private:
  std::vector<std::pair<uint64_t, shard_snapshot>> kept_; // the longest kept first
};

} // namespace actorps
