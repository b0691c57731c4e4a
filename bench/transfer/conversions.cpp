// See conversions.hpp.
#include "bench/transfer/conversions.hpp"

#include "bench/transfer/bench_io.hpp"
#include "wire/precision.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace actorps::bench {

void conversions(double seconds) {
  const size_t n = payload / sizeof(float);
  std::vector<float> xs(n), ys(n);
  std::vector<uint16_t> halves(n);
  std::mt19937 rng{1};
  std::normal_distribution<float> normal{0.0f, 0.05f}; // gradient- and weight-like values
  for (auto& x : xs)
    x = normal(rng);
  auto rate = [&](auto f) { // GB/s of floats
    return rounds_per_second(seconds, [&] { f(); return true; }) * static_cast<double>(payload) / 1e9;
  };
  const double copy = rate([&] { std::memcpy(ys.data(), xs.data(), payload); });
  std::printf("16-bit conversions of 1 MiB of floats, GB/s of floats (memcpy: %.1f)\n", copy);
  for (auto p : {wire_precision::bf16, wire_precision::fp16}) {
    const double enc = rate([&] { encode_halves(p, xs.data(), n, halves.data()); });
    const double dec = rate([&] { decode_halves(p, halves.data(), n, ys.data()); });
    const double rnd = rate([&] { round_to_precision(p, ys.data(), n); });
    std::printf("  %s: encode %.1f, decode %.1f, round %.1f (%.2f / %.2f / %.2f of memcpy)\n", to_string(p), enc,
                dec, rnd, enc / copy, dec / copy, rnd / copy);
  }
}

} // namespace actorps::bench
