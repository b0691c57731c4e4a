// Reads IDX files (the MNIST format), raw or gzip-compressed, validating every header field.
// Format: 0x00 0x00, type byte (0x08 = unsigned byte), rank byte, rank big-endian uint32
// dimensions, then prod(dimensions) bytes.
#pragma once

#include <caf/expected.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace actorps {

/// An IDX array of unsigned bytes.
struct idx_array {
  std::vector<uint32_t> dims;
  std::vector<uint8_t> data; ///< row-major, prod(dims) bytes
};

/// Reads path (gzip detected by content). Any problem -- missing file, bad gzip stream, wrong
/// magic, unsupported type, bad rank, zero dimension, truncated or trailing data -- is a
/// file_error or corrupt_data error whose text starts with the path.
caf::expected<idx_array> read_idx(const std::string& path);

} // namespace actorps
