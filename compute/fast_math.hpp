// A vectorisable single-precision exp for the CPU backend's elementwise loops.
#pragma once

#include "common/vector_clones.hpp"

#include <cstdint>
#include <cstring>

namespace actorps::detail {

/// Returns e^x with a relative error below 2e-7 for x in [-87, 88]; clamps outside that range.
/// Branch-free (Cephes' expf polynomial), so loops over it vectorise.
inline float fast_exp(float x) {
  x = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);
  // x = n * ln2 + r, |r| <= ln2 / 2; adding 1.5 * 2^23 rounds x / ln2 to the nearest integer n,
  // which then sits in the low mantissa bits of t (no float-to-int conversion: vectorises).
  constexpr float shifter = 12582912.0f;
  float t = x * 1.44269504088896341f + shifter;
  float n = t - shifter;
  float r = x - n * 0.693359375f;
  r -= n * -2.12194440e-4f;
  float r2 = r * r;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r2 + r + 1.0f;
  int32_t tbits;
  std::memcpy(&tbits, &t, sizeof t);
  int32_t bits = (tbits - 0x4B400000 + 127) << 23; // n + bias, into the exponent field
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

} // namespace actorps::detail
