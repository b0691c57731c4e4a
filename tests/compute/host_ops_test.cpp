// Tests of compute/host_ops: finiteness, sums and scaling over whole tensors.
#include "compute/host_ops.hpp"

#include <boost/test/unit_test.hpp>

#include <limits>
#include <vector>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(host_ops)

BOOST_AUTO_TEST_CASE(all_finite_finds_nan_and_inf_anywhere) {
  std::vector<float> xs(1037, 1.5f);
  xs[3] = -std::numeric_limits<float>::max();
  xs[4] = std::numeric_limits<float>::denorm_min();
  BOOST_TEST(all_finite(xs.data(), xs.size()));
  BOOST_TEST(all_finite(xs.data(), 0));
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()})
    for (size_t at : {size_t{0}, size_t{517}, xs.size() - 1}) {
      auto ys = xs;
      ys[at] = bad;
      BOOST_TEST(!all_finite(ys.data(), ys.size()), "value " << bad << " at " << at);
    }
}

// The vector clones against plain loops, bit for bit, at lengths below, at and past a vector's.
BOOST_AUTO_TEST_CASE(add_into_add_scaled_and_scale_values_match_plain_loops) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{16}, size_t{33}, size_t{1037}}) {
    std::vector<float> to(n + 1), from(n);
    for (size_t i = 0; i < n; ++i) {
      to[i] = 0.1f * static_cast<float>(i) - 3.0f;
      from[i] = 1.0f / (1.0f + static_cast<float>(i));
    }
    to[n] = 42.0f; // (past the end: untouched)
    auto added = to, scaled = to, weighted = to;
    add_into(added.data(), from.data(), n);
    scale_values(scaled.data(), n, 1.0f / 3.0f);
    add_scaled(weighted.data(), from.data(), n, 0.7f);
    for (size_t i = 0; i < n; ++i) {
      BOOST_TEST_REQUIRE(added[i] == to[i] + from[i], "n " << n << " at " << i);
      BOOST_TEST_REQUIRE(scaled[i] == to[i] * (1.0f / 3.0f), "n " << n << " at " << i);
      const volatile float product = 0.7f * from[i]; // (rounded before the sum, as add_scaled promises)
      BOOST_TEST_REQUIRE(weighted[i] == to[i] + product, "n " << n << " at " << i);
    }
    BOOST_TEST(added[n] == 42.0f);
    BOOST_TEST(scaled[n] == 42.0f);
    BOOST_TEST(weighted[n] == 42.0f);
  }
}

BOOST_AUTO_TEST_SUITE_END()
