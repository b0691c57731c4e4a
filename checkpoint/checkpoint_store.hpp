// A directory of checkpoints: writes each one completely or not at all (temporary directory,
// fsync, rename), keeps the last K plus the best-validation one apart, and loads the newest one
// that verifies, naming every newer one it had to skip. Format: docs/checkpoint_format.md.
#pragma once

#include "checkpoint/checkpoint_format.hpp"

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace actorps {

/// A checkpoint read back, where it came from, and the newer ones that failed to verify.
struct loaded_checkpoint {
  checkpoint ckpt;
  std::string path;
  std::vector<std::string> skipped; ///< "PATH: why" for each newer checkpoint that failed
};

/// Reads and verifies the checkpoint in directory path: manifest magic, format version and
/// checksum, every shard file's size and crc32, and that the shard files hold exactly the
/// variables the manifest places on them. Fails with corrupt_data or file_error naming the file.
caf::expected<checkpoint> read_checkpoint(const std::string& path);

/// Where a shard file holds each variable's arrays (docs/checkpoint_format.md): its header, and
/// per variable its index and, for its values and two optimizer slots, the byte offset of the
/// first float and the count.
struct shard_file_index {
  uint32_t format = 0;
  uint32_t shard = 0;
  uint64_t version = 0;
  struct array {
    uint64_t offset = 0;
    uint64_t count = 0;
  };
  struct entry {
    uint32_t index = 0;
    array values, slot0, slot1;
  };
  std::vector<entry> entries;
};

/// A checkpoint verified on disk whose values stay there: its manifest and where each shard file
/// holds what (by shard). A restore reads each shard's parts from the files (read_floats), so
/// that no process holds the checkpoint whole.
struct checkpoint_on_disk {
  std::string path;
  checkpoint_manifest manifest;
  std::vector<shard_file_index> files;
};

/// Verifies the checkpoint in directory path as read_checkpoint does (manifest, every shard
/// file's size, crc32 and the variables it holds), reading each file once, 1 MiB at a time,
/// and keeping no values.
caf::expected<checkpoint_on_disk> verify_checkpoint(const std::string& path);

/// Reads n floats at byte `offset` of file `path` into out. Fails with file_error naming it.
caf::error read_floats(const std::string& path, uint64_t offset, float* out, size_t n);

/// Fails with invalid_config naming path when the checkpoint's model or variables differ from
/// the expected ones (a checkpoint of another model).
caf::error check_same_model(const checkpoint_manifest& found, const std::string& model,
                            const std::vector<checkpoint_variable>& variables, const std::string& path);

/// Writes c as directory final_path, all or nothing: a temporary directory next to it, every file
/// fsynced, then renamed over any previous final_path. On failure final_path is as it was (or gone
/// when it was being replaced) and no temporary directory is left.
caf::error write_checkpoint(const checkpoint& c, const std::string& final_path);

/// write_checkpoint's steps for a caller that writes the shard files itself: begin_checkpoint
/// makes the empty temporary directory for final_path and returns it; publish_checkpoint writes
/// the manifest m (its files filled in by the caller) into it, fsyncs it and renames it over
/// final_path. On failure publish_checkpoint removes the temporary directory.
caf::expected<std::string> begin_checkpoint(const std::string& final_path);

/// Removes the folders in dir whose names match name_of and whose writer, the process id of
/// group pid_group, no longer runs (killed mid-write); returns their names.
std::vector<std::string> remove_orphan_folders(const std::string& dir, const std::regex& name_of, size_t pid_group);
caf::error publish_checkpoint(const std::string& tmp, const checkpoint_manifest& m, const std::string& final_path);

class checkpoint_store {
public:
  /// Uses (and creates) directory dir; keeps the newest `keep` regular checkpoints.
  static caf::expected<checkpoint_store> open(const std::string& dir, int keep);

  const std::string& dir() const { return dir_; }

  /// Writes c as dir/ckpt-<step> and removes regular checkpoints beyond the newest `keep`.
  /// Returns the checkpoint's path. On failure nothing named ckpt-* is left half-written.
  caf::expected<std::string> save(const checkpoint& c);

  /// Writes c as dir/best-<step> and removes the previous best.
  caf::expected<std::string> save_best(const checkpoint& c);

  /// A save whose shard files the caller writes as their values come: begin_save returns the
  /// temporary directory of checkpoint `step` (best: the best-validation one) to write them into;
  /// commit_save publishes it with manifest m (files and format filled in; publish_checkpoint)
  /// and removes what save or save_best would. Returns the checkpoint's path.
  caf::expected<std::string> begin_save(int64_t step, bool best) const;
  caf::expected<std::string> commit_save(const std::string& tmp, const checkpoint_manifest& m, bool best);

  /// The newest regular checkpoint that verifies; none when there is no checkpoint at all. When
  /// checkpoints exist but none verifies, fails with corrupt_data listing them.
  caf::expected<std::optional<loaded_checkpoint>> load_latest() const;

  /// Like load_latest for the best-validation checkpoint.
  caf::expected<std::optional<loaded_checkpoint>> load_best() const;

  /// Like load_latest with the values left on disk (verify_checkpoint); `skipped` as there.
  caf::expected<std::optional<checkpoint_on_disk>> find_latest(std::vector<std::string>& skipped) const;

  /// Paths of the regular (or best) checkpoints, oldest first.
  std::vector<std::string> list(bool best = false) const;

private:
  checkpoint_store(std::string dir, int keep) : dir_(std::move(dir)), keep_(keep) {}
  caf::expected<std::string> write(const checkpoint& c, const std::string& prefix, int keep);
  caf::expected<std::string> final_path(const std::string& prefix, int64_t step) const; // (the folder made again if gone)
  void remove_beyond(const std::string& prefix, int keep) const;
  caf::expected<std::optional<loaded_checkpoint>> load_newest(bool best) const;

  std::string dir_;
  int keep_ = 3;
};

} // namespace actorps
