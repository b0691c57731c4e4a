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

// The bulk loops move each 16-bit value with memcpy: the bytes may sit at any alignment (a
// message's buffer), and the compiler still vectorises the loop.
ACTORPS_VECTOR_CLONES
void encode_halves(wire_precision p, const float* in, size_t n, void* out) {
  auto* bytes = static_cast<unsigned char*>(out);
  if (p == wire_precision::bf16)
    for (size_t i = 0; i < n; ++i) {
      const uint16_t h = float_to_bf16(in[i]);
      std::memcpy(bytes + 2 * i, &h, 2);
    }
  else
    for (size_t i = 0; i < n; ++i) {
      const uint16_t h = float_to_fp16(in[i]);
      std::memcpy(bytes + 2 * i, &h, 2);
    }
}

ACTORPS_VECTOR_CLONES
void decode_halves(wire_precision p, const void* in, size_t n, float* out) {
  const auto* bytes = static_cast<const unsigned char*>(in);
  uint16_t h;
  if (p == wire_precision::bf16)
    for (size_t i = 0; i < n; ++i) {
      std::memcpy(&h, bytes + 2 * i, 2);
      out[i] = bf16_to_float(h);
    }
  else
    for (size_t i = 0; i < n; ++i) {
      std::memcpy(&h, bytes + 2 * i, 2);
      out[i] = fp16_to_float(h);
    }
}

// bf16 in one pass, each value the float of its encoding (at memcpy's speed); fp16's fused loop
// runs slower than its encode and decode a cache-sized block at a time, so it keeps those.
ACTORPS_VECTOR_CLONES
static void round_to_bf16(const float* in, size_t n, float* out) {
  for (size_t i = 0; i < n; ++i)
    out[i] = bf16_to_float(float_to_bf16(in[i]));
}

void round_copy(wire_precision p, const float* in, size_t n, float* out) {
  if (p == wire_precision::bf16)
    return round_to_bf16(in, n, out);
  if (p == wire_precision::fp32) {
    if (in != out && n > 0)
      std::memmove(out, in, n * sizeof(float));
    return;
  }
  uint16_t block[1024];
  for (size_t i = 0; i < n; i += std::size(block)) {
    const size_t m = std::min(std::size(block), n - i);
    encode_halves(p, in + i, m, block);
    decode_halves(p, block, m, out + i);
  }
}

void round_to_precision(wire_precision p, float* xs, size_t n) {
  round_copy(p, xs, n, xs);
}

ACTORPS_VECTOR_CLONES
void round_with_residual(wire_precision p, float* xs, float* residual, size_t n) {
  if (p == wire_precision::bf16)
    for (size_t i = 0; i < n; ++i) {
      const float sum = residual[i] + xs[i];
      const float sent = bf16_to_float(float_to_bf16(sum));
      xs[i] = sent;
      residual[i] = sum - sent; // exact: rounding drops whole low bits
    }
  else if (p == wire_precision::fp16)
    for (size_t i = 0; i < n; ++i) {
      const float sum = residual[i] + xs[i];
      const float sent = fp16_to_float(float_to_fp16(std::clamp(sum, -fp16_max, fp16_max)));
      xs[i] = sent;
      residual[i] = sum - sent;
    }
  else
    for (size_t i = 0; i < n; ++i) {
      xs[i] += residual[i];
      residual[i] = 0.0f;
    }
}

} // namespace actorps
