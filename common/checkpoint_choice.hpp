// Which checkpoint a restart restores, for the chief's checkpoint store (checkpoint/) and the
// simulator's storage faults (sim/) alike: the newest that reads back and verifies; those skipped
// on the way are named (a missing file, a truncated one, a checksum mismatch). Header-only.
#pragma once

#include "common/errc.hpp"
#include "common/log.hpp"

#include <caf/expected.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace actorps {

template <class T>
struct chosen_checkpoint {
  T value;
  size_t index = 0;                 ///< of the `count` saved, oldest first
  std::vector<std::string> skipped; ///< why each newer one was passed over, newest first
};

/// The newest of `count` saved checkpoints (index 0 the oldest) that read(index) reads and
/// verifies (read returns caf::expected<T>). None saved: nullopt. None verifies: corrupt_data
/// naming `where` (e.g. the directory) and each one's fault, newest first (the run cannot resume
/// from any).
template <class T, class Read>
caf::expected<std::optional<chosen_checkpoint<T>>> newest_readable(size_t count, Read read,
                                                                  const std::string& where = "") {
  std::vector<std::string> skipped;
  for (size_t i = count; i-- > 0;) {
    caf::expected<T> got = read(i);
    if (got)
      return std::optional<chosen_checkpoint<T>>{chosen_checkpoint<T>{std::move(*got), i, std::move(skipped)}};
    skipped.push_back(describe(got.error()));
  }
  if (skipped.empty())
    return std::optional<chosen_checkpoint<T>>{};
  std::string why;
  for (auto& s : skipped)
    why += (why.empty() ? "" : "; ") + s;
  return caf::make_error(errc::corrupt_data, cat("no checkpoint", where.empty() ? "" : " in " + where, " verifies: ", why));
}

} // namespace actorps
