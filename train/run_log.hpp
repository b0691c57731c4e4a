// The files of one run: <run-dir>/<name>/metrics.jsonl (appended, one object per evaluation)
// and <run-dir>/<name>/summary.json (written whole at the end via a temporary file and rename).
#pragma once

#include "common/json.hpp"

#include <caf/expected.hpp>

#include <cstdio>
#include <memory>
#include <string>

namespace actorps {

class run_log {
public:
  /// Creates <run_dir>/<name>/ (and parents) and truncates its metrics.jsonl.
  /// Fails with file_error naming the path.
  static caf::expected<run_log> open(const std::string& run_dir, const std::string& name);

  /// Returns the run's folder.
  const std::string& dir() const { return dir_; }

  /// Appends one line to metrics.jsonl and flushes it.
  caf::error append_metrics(const json_object& row);

  /// Writes summary.json atomically (temporary file, fsync, rename).
  caf::error write_summary(const json_object& summary);

private:
  struct file_closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::string dir_;
  std::unique_ptr<std::FILE, file_closer> metrics_;
};

} // namespace actorps
