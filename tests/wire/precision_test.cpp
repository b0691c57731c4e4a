// bf16 and fp16 conversions: every fp16 value, a sweep of floats against the compiler's
// _Float16 (IEEE round to nearest even), and hand-checked cases for rounding, NaN, infinities,
// denormals and overflow.
#include "wire/precision.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace actorps;

namespace {

// The reference: the compiler's IEEE half (software or F16C conversion, round to nearest even).
uint16_t reference_fp16(float x) {
  _Float16 h = static_cast<_Float16>(x);
  uint16_t out;
  std::memcpy(&out, &h, sizeof out);
  return out;
}

// The reference bf16: the nearest of the two bf16 neighbours by exact double arithmetic, ties
// to the even one.
uint16_t reference_bf16(float x) {
  uint32_t u = bits_of(x);
  uint16_t down = static_cast<uint16_t>(u >> 16), up = static_cast<uint16_t>(down + 1);
  double lo = bf16_to_float(down), hi = bf16_to_float(up), v = x;
  double dl = std::fabs(v - lo), dh = std::fabs(hi - v);
  if (std::isinf(hi))
    dh = std::fabs(std::ldexp(1.0, 128) * (x < 0 ? -1 : 1) - v); // infinity sits at 2^128 for rounding
  if (dl < dh)
    return down;
  if (dh < dl)
    return up;
  return (down & 1) == 0 ? down : up;
}

} // namespace

BOOST_AUTO_TEST_SUITE(precision)

BOOST_AUTO_TEST_CASE(every_fp16_value_survives_a_round_trip) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float x = fp16_to_float(static_cast<uint16_t>(h));
    _Float16 ref;
    uint16_t hh = static_cast<uint16_t>(h);
    std::memcpy(&ref, &hh, sizeof ref);
    if (std::isnan(x)) {
      BOOST_TEST(std::isnan(static_cast<float>(ref)));
      BOOST_TEST(std::isnan(fp16_to_float(float_to_fp16(x))));
      continue;
    }
    BOOST_TEST(bits_of(x) == bits_of(static_cast<float>(ref)), "fp16 0x" << std::hex << h);
    BOOST_TEST(float_to_fp16(x) == h, "fp16 0x" << std::hex << h);
  }
}

BOOST_AUTO_TEST_CASE(float_to_fp16_rounds_like_ieee) {
  std::mt19937 rng{7};
  std::uniform_int_distribution<uint32_t> any;
  size_t checked = 0;
  for (int i = 0; i < 2000000; ++i) {
    // biased towards fp16's range: exponents from denormals to overflow
    uint32_t u = any(rng);
    if (i % 2 == 0)
      u = (u & 0x807fffffu) | ((100u + u % 48u) << 23);
    float x = float_of(u);
    if (std::isnan(x))
      continue;
    BOOST_TEST_REQUIRE(float_to_fp16(x) == reference_fp16(x), "float " << x << " bits 0x" << std::hex << u);
    ++checked;
  }
  BOOST_TEST(checked > 1900000u);
}

BOOST_AUTO_TEST_CASE(fp16_special_values) {
  BOOST_TEST(float_to_fp16(65504.0f) == 0x7bffu);                   // largest finite
  BOOST_TEST(float_to_fp16(65519.99f) == 0x7bffu);                  // rounds down to it
  BOOST_TEST(float_to_fp16(65520.0f) == 0x7c00u);                   // the tie rounds to even: infinity
  BOOST_TEST(float_to_fp16(std::numeric_limits<float>::infinity()) == 0x7c00u);
  BOOST_TEST(float_to_fp16(-std::numeric_limits<float>::infinity()) == 0xfc00u);
  BOOST_TEST(std::isnan(fp16_to_float(float_to_fp16(std::nanf("")))));
  BOOST_TEST(float_to_fp16(std::ldexp(1.0f, -24)) == 0x0001u);      // smallest denormal
  BOOST_TEST(float_to_fp16(std::ldexp(1.0f, -25)) == 0x0000u);      // half of it: tie to even (0)
  BOOST_TEST(float_to_fp16(std::ldexp(1.5f, -24)) == 0x0002u);      // 1.5 ulp: tie to even (2)
  BOOST_TEST(float_to_fp16(-0.0f) == 0x8000u);
  BOOST_TEST(fp16_to_float(0x3c00u) == 1.0f);
  BOOST_TEST(fp16_to_float(0x0001u) == std::ldexp(1.0f, -24));
  BOOST_TEST(float_to_fp16(1.0f + std::ldexp(1.0f, -11)) == 0x3c00u); // tie between 1 and 1+2^-10: even
  BOOST_TEST(float_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02u);
}

BOOST_AUTO_TEST_CASE(float_to_bf16_rounds_to_nearest_even) {
  std::mt19937 rng{11};
  std::uniform_int_distribution<uint32_t> any;
  for (int i = 0; i < 1000000; ++i) {
    float x = float_of(any(rng));
    if (std::isnan(x))
      continue;
    BOOST_TEST_REQUIRE(float_to_bf16(x) == reference_bf16(x), "float " << x);
  }
  for (uint32_t h = 0; h < 0x10000; ++h) { // every bf16 value survives a round trip
    float x = bf16_to_float(static_cast<uint16_t>(h));
    if (!std::isnan(x))
      BOOST_TEST_REQUIRE(float_to_bf16(x) == h);
  }
}

BOOST_AUTO_TEST_CASE(bf16_special_values) {
  BOOST_TEST(float_to_bf16(1.0f) == 0x3f80u);
  BOOST_TEST(float_to_bf16(float_of(0x3f808000u)) == 0x3f80u); // tie: to even
  BOOST_TEST(float_to_bf16(float_of(0x3f818000u)) == 0x3f82u); // tie: to even (up)
  BOOST_TEST(float_to_bf16(float_of(0x3f808001u)) == 0x3f81u); // above the tie: up
  BOOST_TEST(float_to_bf16(std::numeric_limits<float>::max()) == 0x7f80u); // rounds to infinity
  BOOST_TEST(float_to_bf16(-std::numeric_limits<float>::infinity()) == 0xff80u);
  BOOST_TEST(std::isnan(bf16_to_float(float_to_bf16(std::nanf("")))));
  BOOST_TEST(std::isnan(bf16_to_float(float_to_bf16(float_of(0x7f800001u))))); // a NaN that would round to inf
  BOOST_TEST(float_to_bf16(float_of(0x00000001u)) == 0x0000u); // the smallest float denormal
  BOOST_TEST(float_to_bf16(float_of(0x00010000u)) == 0x0001u); // a bf16 denormal stays
  BOOST_TEST(bf16_to_float(0x0001u) == float_of(0x00010000u));
}

BOOST_AUTO_TEST_CASE(bulk_conversions_and_rounding_agree_with_the_scalar_ones) {
  // Long enough for the vectorised bodies (the bulk loops are compiled for AVX-512, AVX2 and
  // baseline; a handful of values would only reach their scalar tails): every 16-bit pattern
  // decoded, and a sweep of floats from denormals to overflow with NaNs and infinities, each
  // compared bit for bit with the scalar conversions.
  std::vector<float> xs{0.1f, -3.75f, 1e-30f, 7e4f, -0.0f, 123.456f, std::nanf(""), -std::nanf(""),
                        std::numeric_limits<float>::infinity(), 65520.0f, std::ldexp(1.0f, -25)};
  std::mt19937 rng{5};
  std::uniform_int_distribution<uint32_t> any;
  for (int i = 0; i < 200000; ++i) {
    uint32_t u = any(rng);
    xs.push_back(float_of(i % 2 == 0 ? (u & 0x807fffffu) | ((100u + u % 48u) << 23) : u));
  }
  std::vector<uint16_t> every(0x10000); // every 16-bit pattern
  for (uint32_t h = 0; h < 0x10000; ++h)
    every[h] = static_cast<uint16_t>(h);
  for (auto p : {wire_precision::bf16, wire_precision::fp16}) {
    std::vector<uint16_t> halves(xs.size());
    std::vector<float> back(xs.size()), rounded = xs;
    encode_halves(p, xs.data(), xs.size(), halves.data());
    decode_halves(p, halves.data(), halves.size(), back.data());
    round_to_precision(p, rounded.data(), rounded.size());
    for (size_t i = 0; i < xs.size(); ++i) {
      auto h = p == wire_precision::bf16 ? float_to_bf16(xs[i]) : float_to_fp16(xs[i]);
      BOOST_TEST_REQUIRE(halves[i] == h, to_string(p) << " encode of 0x" << std::hex << bits_of(xs[i]));
      BOOST_TEST_REQUIRE(bits_of(back[i]) == bits_of(rounded[i]), to_string(p) << " round of 0x" << std::hex << bits_of(xs[i]));
    }
    std::vector<float> decoded(every.size());
    decode_halves(p, every.data(), every.size(), decoded.data());
    for (uint32_t h = 0; h < 0x10000; ++h) {
      auto x = p == wire_precision::bf16 ? bf16_to_float(every[h]) : fp16_to_float(every[h]);
      BOOST_TEST_REQUIRE(bits_of(decoded[h]) == bits_of(x), to_string(p) << " decode of 0x" << std::hex << h);
    }
  }
  std::vector<float> same = xs;
  round_to_precision(wire_precision::fp32, same.data(), same.size());
  BOOST_TEST(std::memcmp(same.data(), xs.data(), xs.size() * sizeof(float)) == 0);
}

BOOST_AUTO_TEST_CASE(rounding_with_a_residual_sends_the_rounded_sum_and_keeps_what_it_dropped) {
  // The fused pass against the scalar steps it replaces: sum = residual + x, saturated for fp16,
  // rounded; the residual keeps sum - sent (fp32: nothing). Bit for bit, over the vectorised bodies' lengths.
  std::mt19937 rng{9};
  std::normal_distribution<float> normal{0.0f, 0.05f};
  std::uniform_int_distribution<uint32_t> any;
  std::vector<float> xs{1e5f, -7e4f, 65519.0f, std::numeric_limits<float>::infinity(), std::nanf(""), 1e-30f};
  std::vector<float> rs{0.0f, 0.0f, 0.5f, 1.0f, 0.0f, -1e-30f};
  for (int i = 0; i < 100000; ++i) {
    xs.push_back(i % 3 == 0 ? float_of((any(rng) & 0x807fffffu) | ((100u + any(rng) % 48u) << 23)) : normal(rng));
    rs.push_back(i % 2 == 0 ? normal(rng) * 0.01f : 0.0f);
  }
  for (auto p : {wire_precision::fp32, wire_precision::bf16, wire_precision::fp16}) {
    std::vector<float> sent = xs, kept = rs;
    round_with_residual(p, sent.data(), kept.data(), sent.size());
    for (size_t i = 0; i < xs.size(); ++i) {
      const float sum = rs[i] + xs[i];
      float want = sum;
      if (p == wire_precision::bf16)
        want = bf16_to_float(float_to_bf16(sum));
      if (p == wire_precision::fp16)
        want = fp16_to_float(float_to_fp16(std::clamp(sum, -fp16_max, fp16_max)));
      const float left = p == wire_precision::fp32 ? 0.0f : sum - want; // fp32 drops nothing
      const bool same_sent = std::isnan(want) ? std::isnan(sent[i]) : bits_of(sent[i]) == bits_of(want);
      const bool same_kept = std::isnan(left) ? std::isnan(kept[i]) : bits_of(kept[i]) == bits_of(left);
      BOOST_TEST_REQUIRE(same_sent, to_string(p) << " sent at " << i);
      BOOST_TEST_REQUIRE(same_kept, to_string(p) << " kept at " << i);
    }
  }
}

BOOST_AUTO_TEST_CASE(names_parse_and_print) {
  for (auto p : {wire_precision::fp32, wire_precision::bf16, wire_precision::fp16})
    BOOST_TEST((parse_wire_precision(to_string(p)) == p));
  BOOST_TEST(!parse_wire_precision("fp8"));
  BOOST_TEST(bytes_per_value(wire_precision::fp32) == 4u);
  BOOST_TEST(bytes_per_value(wire_precision::bf16) == 2u);
}

BOOST_AUTO_TEST_SUITE_END()
