// bf16 and fp16 conversions by bit manipulation (F. Giesen's round-to-nearest-even method for
// fp16; tests/wire/precision_test.cpp checks them against the compiler's _Float16 and by hand).
#include "wire/precision.hpp"

#include "common/vector_clones.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace actorps {

uint32_t bits_of(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

float float_of(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

const char* to_string(wire_precision p) {
  switch (p) {
    case wire_precision::fp32:
      return "fp32";
    case wire_precision::bf16:
      return "bf16";
    case wire_precision::fp16:
      return "fp16";
  }
  return "?";
}

std::optional<wire_precision> parse_wire_precision(const std::string& name) {
  for (auto p : {wire_precision::fp32, wire_precision::bf16, wire_precision::fp16})
    if (name == to_string(p))
      return p;
  return std::nullopt;
}

uint16_t float_to_bf16(float x) { // branch-free, so that the bulk loops vectorise
  const uint32_t u = bits_of(x);
  const uint32_t nan = (u >> 16) | 0x0040u;             // NaN: keep the sign and payload top, quiet
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16; // nearest, ties to even
  return static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

float bf16_to_float(uint16_t h) {
  return float_of(static_cast<uint32_t>(h) << 16);
}

// fp16 both ways computes every case and selects one (no branches), so that the bulk loops
// vectorise; the unselected cases' arithmetic on NaN or huge inputs is discarded.
uint16_t float_to_fp16(float x) {
  const uint32_t f32_infinity = 255u << 23;
  const uint32_t f16_overflow = (127u + 16u) << 23; // 65536: from here on, infinity
  const float denormal_magic = float_of(((127u - 15u) + (23u - 10u) + 1u) << 23);
  uint32_t u = bits_of(x);
  const uint32_t sign = u & 0x80000000u;
  u ^= sign;
  const uint32_t special = u > f32_infinity ? 0x7e00u : 0x7c00u; // NaN (quiet) or infinity
  // below fp16's smallest normal: the FPU rounds the denormal
  const uint32_t denormal = bits_of(float_of(u) + denormal_magic) - bits_of(denormal_magic);
  // normal: rebias the exponent, round to nearest with ties to even
  const uint32_t normal = (u + ((15u - 127u) << 23) + 0xfffu + ((u >> 13) & 1u)) >> 13;
  const uint32_t out = u >= f16_overflow ? special : (u < (113u << 23) ? denormal : normal);
  return static_cast<uint16_t>(out | (sign >> 16));
}

float fp16_to_float(uint16_t h) {
  const float magic = float_of(113u << 23);
  const uint32_t shifted_exponent = 0x7c00u << 13;
  const uint32_t bits = (static_cast<uint32_t>(h) & 0x7fffu) << 13;
  const uint32_t exponent = shifted_exponent & bits;
  const uint32_t normal = bits + ((127u - 15u) << 23);
  const uint32_t special = normal + ((128u - 16u) << 23);             // infinity or NaN
  const uint32_t denormal = bits_of(float_of(normal + (1u << 23)) - magic); // renormalised by the FPU
  const uint32_t out = exponent == shifted_exponent ? special : (exponent == 0 ? denormal : normal);
  return float_of(out | ((static_cast<uint32_t>(h) & 0x8000u) << 16));
}

ACTORPS_VECTOR_CLONES
void encode_halves(wire_precision p, const float* in, size_t n, uint16_t* out) {
  if (p == wire_precision::bf16)
    for (size_t i = 0; i < n; ++i)
      out[i] = float_to_bf16(in[i]);
  else
    for (size_t i = 0; i < n; ++i)
      out[i] = float_to_fp16(in[i]);
}

ACTORPS_VECTOR_CLONES
void decode_halves(wire_precision p, const uint16_t* in, size_t n, float* out) {
  if (p == wire_precision::bf16)
    for (size_t i = 0; i < n; ++i)
      out[i] = bf16_to_float(in[i]);
  else
    for (size_t i = 0; i < n; ++i)
      out[i] = fp16_to_float(in[i]);
}

void round_to_precision(wire_precision p, float* xs, size_t n) {
  if (p == wire_precision::fp32)
    return;
  uint16_t block[1024]; // through the vectorised bulk conversions, a cache-sized block at a time
  for (size_t i = 0; i < n; i += std::size(block)) {
    const size_t m = std::min(std::size(block), n - i);
    encode_halves(p, xs + i, m, block);
    decode_halves(p, block, m, xs + i);
  }
}

} // namespace actorps
