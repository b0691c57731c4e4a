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
  /// Creates <run_dir>/<name>/ (and parents), takes the folder's lock (<name>/.lock, held until
  /// this run_log and its moves are gone, released by the kernel when the process dies) and
  /// truncates its metrics.jsonl, or appends to it with `append` (a run resumed from a
  /// checkpoint). Fails with file_error naming the path; a folder another live process holds
  /// is refused before any of its files is touched.
  static caf::expected<run_log> open(const std::string& run_dir, const std::string& name, bool append = false);

  /// Fails (file_error, as open() would) when another live process holds <run_dir>/<name>'s lock;
  /// touches nothing: a start-up checks this first and refuses before it prints or reads anything
  /// (open() still takes the lock at the end).
  static caf::error check_free(const std::string& run_dir, const std::string& name);

  /// Returns the run's folder.
  const std::string& dir() const { return dir_; }

  /// Appends one line to metrics.jsonl and flushes it. A folder or file removed meanwhile is
  /// logged and created again (the line goes to the new file).
  caf::error append_metrics(const json_object& row);

  /// Writes summary.json atomically (temporary file, fsync, rename).
  caf::error write_summary(const json_object& summary);

private:
  bool metrics_in_place() const;
  caf::error recreate();

  struct file_closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::string dir_;
  std::shared_ptr<const int> lock_; // the locked descriptor; closing it releases the lock
  std::unique_ptr<std::FILE, file_closer> metrics_;
};

} // namespace actorps
