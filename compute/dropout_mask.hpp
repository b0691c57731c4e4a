// Dropout's keep mask as a pure function of (seed, element index, rate): the CPU and CUDA backends
// draw identical masks, and a step's mask depends only on its seed, not on the thread that runs it.
#pragma once

#include "compute/host_device.hpp"

#include <cstddef>
#include <cstdint>

namespace actorps {

/// SplitMix64's finaliser: a bijective 64-bit mix.
ACTORPS_HOST_DEVICE inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Returns 1 / (1 - rate) if element i is kept, 0 if it is dropped (probability rate).
/// REQUIRES: 0 <= rate < 1.
ACTORPS_HOST_DEVICE inline float dropout_keep_scale(uint64_t seed, size_t i, float rate) {
  uint64_t bits = mix64(seed + 0x9e3779b97f4a7c15ull * (static_cast<uint64_t>(i) + 1));
  float u = static_cast<float>(bits >> 40) * (1.0f / 16777216.0f); // [0, 1), 24 bits
  return u >= rate ? 1.0f / (1.0f - rate) : 0.0f;
}

} // namespace actorps
