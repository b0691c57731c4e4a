// Vectorised host helpers: branch-free loops, compiled for AVX-512, AVX2 and baseline x86-64.
#include "compute/host_ops.hpp"

#include "compute/fast_math.hpp"

#include <cstdint>
#include <cstring>

namespace actorps {

ACTORPS_VECTOR_CLONES
bool all_finite(const float* x, size_t n) {
  // A float is NaN or infinite exactly when its exponent bits are all ones.
  uint32_t worst = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, x + i, sizeof bits);
    uint32_t exponent = bits & 0x7f800000u;
    worst = exponent > worst ? exponent : worst;
  }
  return worst != 0x7f800000u;
}

ACTORPS_VECTOR_CLONES
void add_into(float* __restrict to, const float* __restrict from, size_t n) {
  for (size_t i = 0; i < n; ++i)
    to[i] += from[i];
}

ACTORPS_VECTOR_CLONES
void add_scaled(float* __restrict to, const float* __restrict from, size_t n, float s) {
  for (size_t i = 0; i < n; ++i)
    to[i] += s * from[i];
}

ACTORPS_VECTOR_CLONES
void scale_values(float* x, size_t n, float s) {
  for (size_t i = 0; i < n; ++i)
    x[i] *= s;
}

} // namespace actorps
