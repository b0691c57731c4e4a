// CRC-32C (Castagnoli), as TFRecord framing uses it, with TensorFlow's mask.
#pragma once

#include <cstddef>
#include <cstdint>

namespace actorps {

/// The CRC-32C of n bytes at data (Boost.CRC's table-driven Castagnoli polynomial, reflected).
uint32_t crc32c(const void* data, size_t n);

/// TensorFlow's masked CRC: rotated right by 15 bits plus 0xa282ead8.
uint32_t masked_crc32c(const void* data, size_t n);

} // namespace actorps
