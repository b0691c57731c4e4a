// One shard file of a checkpoint written as its values come (docs/checkpoint_format.md), without
// holding them: its header, then per variable its index and its values, optimizer slot 0 and
// slot 1, the sizes given up front. Byte for byte Cereal's archive of the same shard_checkpoint.
// Used by checkpoint/staged_model (a kept model) and the chief's checkpoints.
// Threading: one owner.
#pragma once

#include "checkpoint/checkpoint_format.hpp"

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace actorps {

class file_sink;

class shard_file_writer {
public:
  /// A variable of the file: its index in the manifest and the sizes of its three arrays (0: an
  /// empty slot).
  struct entry {
    uint32_t index = 0;
    size_t values = 0, slot0 = 0, slot1 = 0;
  };

  /// Creates the file at path for shard `shard` at `version` holding `entries`, in order.
  /// Fails with file_error naming the path.
  static caf::expected<std::unique_ptr<shard_file_writer>> open(const std::string& path, uint32_t shard,
                                                                uint64_t version, std::vector<entry> entries);

  shard_file_writer(const shard_file_writer&) = delete;
  shard_file_writer& operator=(const shard_file_writer&) = delete;
  ~shard_file_writer(); ///< closes the file (finished or not; the caller removes an unfinished one)

  /// Appends the next n floats: the entries in order, each one's values, slot0 and slot1 in
  /// order. Fails with invalid_argument past the last float, file_error when the disk refuses.
  caf::error append(const float* values, size_t n);

  /// Once every float is in: closes and fsyncs the file; its bytes and CRC-32 (`file` named
  /// `name` in the manifest). Fails with invalid_argument when floats are missing.
  caf::expected<checkpoint_file> finish(const std::string& name);

  const std::string& path() const { return path_; }

private:
  explicit shard_file_writer(std::string path, std::vector<entry> entries);
  caf::error put(const void* data, size_t n);
  caf::error next_array(); // closes the array in hand and opens the next (an entry's header first)

  std::string path_;
  uint32_t shard_ = 0;
  std::vector<entry> entries_;
  int fd_ = -1;
  std::unique_ptr<file_sink> sink_;
  size_t entry_ = 0; // the entry being written
  int array_ = -1;   // its array: 0 values, 1 slot0, 2 slot1; -1 before the first
  size_t left_ = 0;  // floats of that array still to come
  bool finished_ = false;
};

} // namespace actorps
