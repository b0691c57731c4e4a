// Test helpers: a scratch directory removed at the end, file writers, seeded random data.
#pragma once

#include "common/errc.hpp"

#include <ostream>

#include <cstdint>
#include <string>
#include <vector>

namespace actorps::test {

/// Creates a fresh directory under $TMPDIR (or /tmp); removes it recursively on destruction.
class temp_dir {
public:
  temp_dir();
  ~temp_dir();
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  const std::string& path() const { return path_; }

  /// Returns path() + "/" + name.
  std::string file(const std::string& name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

/// Writes bytes to path (overwriting).
void write_file(const std::string& path, const std::vector<uint8_t>& bytes);

/// Writes bytes gzip-compressed to path.
void write_gz_file(const std::string& path, const std::vector<uint8_t>& bytes);

/// Writes a w x h PNG; format is a libpng PNG_FORMAT_* value (e.g. PNG_FORMAT_GRAY), pixels the
/// components row by row: bytes, or 16-bit words for the PNG_FORMAT_LINEAR_* formats.
void write_png(const std::string& path, int w, int h, uint32_t format, const void* pixels);

/// Returns an IDX unsigned-byte file's bytes: header for dims, then data.
std::vector<uint8_t> idx_bytes(const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data);

/// Returns n CIFAR-10 records (label byte, then 3 channel planes of 32x32): record i has label
/// i % 10 and pixel bytes (i + channel * 7 + pixel) % 256.
std::vector<uint8_t> cifar_records(uint32_t n);

/// Writes a CIFAR-10 directory: five training batches of per_batch records and a test batch.
void write_cifar_dir(const temp_dir& dir, uint32_t per_batch, uint32_t test);

/// Returns the content of a text file ("" if it cannot be read).
std::string read_text(const std::string& path);

/// Runs a Python script with Debian's python3 (numpy, PIL) in dir: the script sees the folder
/// as `d` (with a trailing '/'), `np` (numpy) and, for images, `Image` (PIL) and put(path, img),
/// which saves img at d + path making its folders. Fails the test when the script fails.
void run_python(const temp_dir& dir, const std::string& body);

/// Sends what the process writes to stderr (log lines) into a file while it lives; text() reads
/// what was written so far.
class stderr_capture {
public:
  stderr_capture();
  ~stderr_capture();
  stderr_capture(const stderr_capture&) = delete;
  stderr_capture& operator=(const stderr_capture&) = delete;

  std::string text() const;

private:
  temp_dir dir_;
  int saved_ = -1;
};

} // namespace actorps::test

namespace actorps::test {

/// Returns the error's description, or "" when x holds a value (safe in check messages, which
/// are built whether or not the check fails).
template <class T>
std::string error_text(const caf::expected<T>& x) {
  return x ? std::string{} : describe(x.error());
}

/// Returns n uniform values in [lo, hi) from seed (same values on every run).
std::vector<float> random_values(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f);

} // namespace actorps::test

// Boost.Test printers (found by ADL) so failed checks show errors readably.
namespace caf {
inline std::ostream& boost_test_print_type(std::ostream& os, const error& err) {
  return os << actorps::describe(err);
}
} // namespace caf

namespace actorps {
inline std::ostream& boost_test_print_type(std::ostream& os, errc code) {
  return os << to_string(code);
}
} // namespace actorps
