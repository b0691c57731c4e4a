// bf16 and fp16 conversions by bit manipulation (F. Giesen's round-to-nearest-even method for
// fp16; tests/wire/precision_test.cpp checks them against the compiler's _Float16 and by hand).
#include "wire/precision.hpp"

#include <cstring>

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

uint16_t float_to_fp16(float x) {
  const uint32_t f32_infinity = 255u << 23;
  const uint32_t f16_overflow = (127u + 16u) << 23; // 65536: from here on, infinity
  const float denormal_magic = float_of(((127u - 15u) + (23u - 10u) + 1u) << 23);
  uint32_t u = bits_of(x);
  const uint32_t sign = u & 0x80000000u;
  u ^= sign;
  uint16_t out;
  if (u >= f16_overflow) {
    out = u > f32_infinity ? 0x7e00u : 0x7c00u; // NaN (quiet) or infinity
  } else if (u < (113u << 23)) { // below fp16's smallest normal: the FPU rounds the denormal
    out = static_cast<uint16_t>(bits_of(float_of(u) + denormal_magic) - bits_of(denormal_magic));
  } else {
    const uint32_t mantissa_odd = (u >> 13) & 1u;
    u += ((15u - 127u) << 23) + 0xfffu; // rebias the exponent, round
    u += mantissa_odd;                  // ties to even
    out = static_cast<uint16_t>(u >> 13);
  }
  return static_cast<uint16_t>(out | (sign >> 16));
}

float fp16_to_float(uint16_t h) {
  const float magic = float_of(113u << 23);
  const uint32_t shifted_exponent = 0x7c00u << 13;
  uint32_t out = (static_cast<uint32_t>(h) & 0x7fffu) << 13;
  const uint32_t exponent = shifted_exponent & out;
  out += (127u - 15u) << 23;
  if (exponent == shifted_exponent) { // infinity or NaN
    out += (128u - 16u) << 23;
  } else if (exponent == 0) { // zero or denormal: renormalise through the FPU
    out += 1u << 23;
    out = bits_of(float_of(out) - magic);
  }
  return float_of(out | ((static_cast<uint32_t>(h) & 0x8000u) << 16));
}

void encode_halves(wire_precision p, const float* in, size_t n, uint16_t* out) {
  if (p == wire_precision::bf16)
    for (size_t i = 0; i < n; ++i)
      out[i] = float_to_bf16(in[i]);
  else
    for (size_t i = 0; i < n; ++i)
      out[i] = float_to_fp16(in[i]);
}

void decode_halves(wire_precision p, const uint16_t* in, size_t n, float* out) {
  if (p == wire_precision::bf16)
    for (size_t i = 0; i < n; ++i)
      out[i] = bf16_to_float(in[i]);
  else
    for (size_t i = 0; i < n; ++i)
      out[i] = fp16_to_float(in[i]);
}

void round_to_precision(wire_precision p, float* xs, size_t n) {
  if (p == wire_precision::bf16)
    for (size_t i = 0; i < n; ++i)
      xs[i] = bf16_to_float(float_to_bf16(xs[i]));
  else if (p == wire_precision::fp16)
    for (size_t i = 0; i < n; ++i)
      xs[i] = fp16_to_float(float_to_fp16(xs[i]));
}

} // namespace actorps
