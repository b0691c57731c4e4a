// Test helpers: a scratch directory removed at the end, file writers, seeded random data.
#pragma once

#include "common/errc.hpp"

#include <boost/test/unit_test.hpp>

#include <exception>
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

/// `count` damaged copies of `bytes`, as a fuzzer makes them (bytes overwritten, runs of 1-8 bytes
/// set to 0x00, 0x7f, 0x80 or 0xff, the file cut short, random bytes inserted, two bytes swapped;
/// the first 64 bytes, the headers, hit more often), the same for a seed on every machine.
std::vector<std::vector<uint8_t>> damaged_copies(const std::vector<uint8_t>& bytes, uint64_t seed, size_t count);

/// The bytes of a file (empty if it cannot be read).
std::vector<uint8_t> read_bytes(const std::string& path);

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

/// Writes `count` damaged copies of `bytes` (damaged_copies) to `path` in turn and reads each with
/// read(path), which returns a caf::expected: every copy is read or refused by name (the error
/// names `path`), none throws (a crash ends the test binary: a failure too). Returns the copies
/// refused.
template <class Read>
size_t read_damaged(const std::vector<uint8_t>& bytes, const std::string& path, uint64_t seed, size_t count, Read read) {
  size_t refused = 0, k = 0;
  for (auto& copy : damaged_copies(bytes, seed, count)) {
    write_file(path, copy);
    try {
      auto got = read(path);
      if (!got) {
        ++refused;
        BOOST_TEST(describe(got.error()).find(path) != std::string::npos,
                   "copy " << k << " of seed " << seed << ": " << describe(got.error()));
      }
    } catch (const std::exception& e) {
      BOOST_ERROR("copy " << k << " of seed " << seed << " threw: " << e.what());
    }
    ++k;
  }
  return refused;
}

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
