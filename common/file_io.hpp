// Whole-file reads and durable writes (fsync, then rename into place), with errors that name the
// path. Used by checkpoints and model exports so that a crash leaves either the old file or the
// complete new one.
#pragma once

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <string>

namespace actorps {

/// Returns the whole file; file_error "PATH: cannot be read" when it cannot be opened.
caf::expected<std::string> read_whole_file(const std::string& path);

/// Creates (or truncates) path, writes bytes and fsyncs it.
caf::error write_file_synced(const std::string& path, const std::string& bytes);

/// Writes n bytes to fd (open on path), after short writes too; file_error naming path and why.
caf::error write_all(int fd, const char* data, size_t n, const std::string& path);

/// fsyncs a directory (after a rename inside it).
caf::error sync_directory(const std::string& dir);

/// Writes bytes to "PATH.tmp-<pid>", fsyncs it, renames it to path and fsyncs the directory. On
/// failure the temporary file is removed and path is untouched.
caf::error write_file_atomically(const std::string& path, const std::string& bytes);

} // namespace actorps
