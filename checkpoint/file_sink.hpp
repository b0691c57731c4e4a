// Writing a checkpoint's file as it is serialised: bytes go straight into the file 1 MiB at a
// time, with their CRC-32 and count kept on the way, so that no process holds a file's bytes
// whole (a 2^22 x 32 table's model had been serialised whole first, up to twice its size for a
// moment). Used by checkpoint_store and staged_model.
#pragma once

#include <caf/error.hpp>

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <streambuf>
#include <string>
#include <vector>

namespace actorps {

/// The CRC-32 so far (crc32(0L, Z_NULL, 0) to begin) carried on over n more bytes; zlib counts in
/// uInt, so more than 4 GiB go in pieces.
uLong crc_more(uLong crc, const char* data, size_t n);

/// A streambuf over an open file descriptor (which the caller owns and closes).
class file_sink : public std::streambuf {
public:
  file_sink(int fd, std::string path);

  /// Writes what is left; the first error on the way, if any.
  caf::error finish();

  uint64_t bytes() const { return bytes_; }
  uint32_t crc() const { return static_cast<uint32_t>(crc_); }

protected:
  int_type overflow(int_type c) override;
  int sync() override { return flush() ? 0 : -1; }

private:
  bool flush();

  int fd_;
  std::string path_;
  std::vector<char> block_;
  uLong crc_ = crc32(0L, Z_NULL, 0);
  uint64_t bytes_ = 0;
  caf::error err_;
};

} // namespace actorps
