// A kept model (a checkpoint of one shard file, placement "single": docs/checkpoint_format.md)
// written as its values come, a piece at a time, without holding them: the chief reads an
// embedding table's rows a chunk at a time and writes each chunk on. The shard file is staged in
// a folder of its own, then published under one or more names (final, best), each with its own
// manifest; byte for byte what write_checkpoint writes for the same model
// (checkpoint/shard_file_writer).
// Threading: one owner.
#pragma once

#include "checkpoint/checkpoint_format.hpp"

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace actorps {

class shard_file_writer;

class staged_model {
public:
  /// Starts the shard file of a model whose variables have `sizes` values each (creation order)
  /// in a new folder `<dir>/.staged-<pid>-<n>`, first removing such folders that processes which
  /// no longer run left there. Fails with file_error naming the path.
  static caf::expected<std::unique_ptr<staged_model>> open(const std::string& dir, std::vector<size_t> sizes);

  staged_model(const staged_model&) = delete;
  staged_model& operator=(const staged_model&) = delete;
  /// Removes the staging folder (published copies stay).
  ~staged_model();

  /// Appends the next n values: the variables in order, each one's values in order. Fails with
  /// invalid_argument past the last value, file_error when the disk refuses.
  caf::error append(const float* values, size_t n);

  /// Once every value is in: closes and fsyncs the shard file. Fails (invalid_argument) when
  /// values are missing.
  caf::error finish();

  /// Publishes the finished file as the checkpoint final_path with manifest m (its files and
  /// format filled in here), all or nothing as write_checkpoint. May be called more than once.
  caf::error publish(checkpoint_manifest m, const std::string& final_path) const;

private:
  explicit staged_model(std::string folder);

  std::string folder_;
  std::unique_ptr<shard_file_writer> file_;
  std::optional<checkpoint_file> written_; // once finished
};

} // namespace actorps
