// Error feedback keeps the sum of what was sent plus the residual equal to the sum of the
// gradients, at every precision and with top-k; top-k keeps exactly the k largest magnitudes.
#include "wire/gradient_encoder.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <random>

using namespace actorps;

namespace {

// Gradients on a grid of 1/64 so that every sum below is exact in float.
std::vector<float> grid_gradient(std::mt19937& rng, size_t n) {
  std::uniform_int_distribution<int> d(-4096, 4096);
  std::vector<float> g(n);
  for (auto& x : g)
    x = static_cast<float>(d(rng)) / 64.0f;
  return g;
}

void check_sums_are_kept(compression_settings settings) {
  gradient_encoder enc{settings};
  std::mt19937 rng{3};
  const size_t n = 1000;
  const uint32_t offset = 40;
  std::vector<double> gradients(n, 0.0), sent(n, 0.0);
  for (int step = 0; step < 50; ++step) {
    auto g = grid_gradient(rng, n);
    for (size_t i = 0; i < n; ++i)
      gradients[i] += g[i];
    enc.encode(7, offset, g.data(), n);
    for (size_t i = 0; i < n; ++i)
      sent[i] += g[i];
  }
  auto residual = enc.residual(7, offset, n);
  for (size_t i = 0; i < n; ++i)
    BOOST_TEST_REQUIRE(sent[i] + residual[i] == gradients[i], "entry " << i);
}

} // namespace

BOOST_AUTO_TEST_SUITE(gradient_encoder)

BOOST_AUTO_TEST_CASE(exact_settings_send_the_gradient_unchanged) {
  actorps::gradient_encoder enc{{}};
  std::vector<float> g{0.1f, -0.2f, 0.3f};
  auto before = g;
  enc.encode(0, 0, g.data(), g.size());
  BOOST_TEST(g == before);
  BOOST_TEST(enc.residual(0, 0, 3) == std::vector<float>(3, 0.0f));
}

BOOST_AUTO_TEST_CASE(error_feedback_keeps_the_sum_of_updates) {
  check_sums_are_kept({wire_precision::bf16, sparsifier::none, 0.01});
  check_sums_are_kept({wire_precision::fp16, sparsifier::none, 0.01});
  check_sums_are_kept({wire_precision::fp32, sparsifier::topk, 0.01});
  check_sums_are_kept({wire_precision::bf16, sparsifier::topk, 0.05});
}

BOOST_AUTO_TEST_CASE(what_is_sent_is_exact_at_the_wire_precision) {
  actorps::gradient_encoder enc{{wire_precision::bf16, sparsifier::none, 0.01}};
  std::vector<float> g{0.1f, 1.0f / 3.0f, -7.123f};
  enc.encode(0, 0, g.data(), g.size());
  for (float x : g)
    BOOST_TEST(bf16_to_float(float_to_bf16(x)) == x);
  auto r = enc.residual(0, 0, 3);
  BOOST_TEST(g[0] + r[0] == 0.1f);
  BOOST_TEST(std::fabs(r[0]) > 0.0f); // 0.1 is not a bf16 value: something was kept
}

BOOST_AUTO_TEST_CASE(fp16_saturates_and_keeps_the_excess) {
  actorps::gradient_encoder enc{{wire_precision::fp16, sparsifier::none, 0.01}};
  std::vector<float> g{1e6f, -1e6f};
  enc.encode(2, 0, g.data(), g.size());
  BOOST_TEST(g[0] == 65504.0f);
  BOOST_TEST(g[1] == -65504.0f);
  auto r = enc.residual(2, 0, 2);
  BOOST_TEST(r[0] == 1e6f - 65504.0f);
  BOOST_TEST(std::isfinite(r[1]));
}

BOOST_AUTO_TEST_CASE(topk_keeps_the_largest_magnitudes) {
  std::vector<float> xs{0.5f, -3.0f, 0.1f, 2.0f, -0.2f, 2.0f, 0.0f, 1.0f};
  BOOST_TEST(keep_topk(xs.data(), xs.size(), 3) == 3u);
  std::vector<float> expected{0.0f, -3.0f, 0.0f, 2.0f, 0.0f, 2.0f, 0.0f, 0.0f};
  BOOST_TEST(xs == expected);
  std::vector<float> ties{1.0f, -1.0f, 1.0f, 1.0f};
  keep_topk(ties.data(), ties.size(), 2); // equal magnitudes: the lower indices win
  BOOST_TEST(ties == (std::vector<float>{1.0f, -1.0f, 0.0f, 0.0f}));
  std::vector<float> all{1.0f, 2.0f};
  BOOST_TEST(keep_topk(all.data(), 2, 5) == 2u);
  BOOST_TEST(all == (std::vector<float>{1.0f, 2.0f}));
}

BOOST_AUTO_TEST_CASE(topk_of_large_slices_matches_a_full_sort) {
  // large slices take the sampled path; heavy ties and skewed data must not change the result
  std::mt19937 rng{21};
  for (int trial = 0; trial < 20; ++trial) {
    const size_t n = 50000 + 977 * static_cast<size_t>(trial);
    std::vector<float> xs(n);
    std::normal_distribution<float> d;
    for (size_t i = 0; i < n; ++i)
      xs[i] = trial % 3 == 0 ? std::round(d(rng) * 4.0f) : trial % 3 == 1 ? (i < n / 100 ? 100.0f : d(rng)) : d(rng);
    const size_t k = topk_count(0.01 * (1 + trial % 4), n);
    // the reference: sort indices by magnitude, lower index first among equals
    std::vector<uint32_t> order(n);
    for (uint32_t i = 0; i < n; ++i)
      order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return std::fabs(xs[a]) > std::fabs(xs[b]); });
    std::vector<float> expected(n, 0.0f);
    for (size_t i = 0; i < k; ++i)
      expected[order[i]] = xs[order[i]];
    keep_topk(xs.data(), n, k);
    BOOST_TEST_REQUIRE((xs == expected), "trial " << trial);
  }
}

BOOST_AUTO_TEST_CASE(topk_count_rounds_up_and_sends_at_least_one) {
  BOOST_TEST(topk_count(0.01, 125440) == 1255u);
  BOOST_TEST(topk_count(0.01, 10) == 1u);
  BOOST_TEST(topk_count(1.0, 10) == 10u);
  BOOST_TEST(topk_count(0.01, 0) == 0u);
}

BOOST_AUTO_TEST_CASE(topk_with_feedback_sends_every_coordinate_eventually) {
  // a constant gradient: unsent coordinates grow until they win a place
  actorps::gradient_encoder enc{{wire_precision::fp32, sparsifier::topk, 0.1}};
  const size_t n = 20;
  std::vector<int> times_sent(n, 0);
  for (int step = 0; step < 40; ++step) {
    std::vector<float> g(n, 1.0f);
    enc.encode(0, 0, g.data(), n);
    size_t nonzero = 0;
    for (size_t i = 0; i < n; ++i)
      if (g[i] != 0.0f) {
        ++times_sent[i];
        ++nonzero;
      }
    BOOST_TEST(nonzero == 2u);
  }
  for (size_t i = 0; i < n; ++i)
    BOOST_TEST(times_sent[i] == 4);
}

// DGC's warm-up: the share falls geometrically from a quarter to the ratio over the warm-up's
// steps, and encode() sends that share of the step begin_step() names.
BOOST_AUTO_TEST_CASE(topk_warmup_falls_geometrically_to_the_ratio) {
  compression_settings settings{wire_precision::fp32, sparsifier::topk, 0.01};
  BOOST_TEST(topk_ratio_at(settings, 0) == 0.01); // no warm-up
  settings.topk_warmup_steps = 100;
  BOOST_TEST(topk_ratio_at(settings, 0) == 0.25, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(topk_ratio_at(settings, 50) == 0.05, boost::test_tools::tolerance(1e-12)); // sqrt(0.25 * 0.01)
  BOOST_TEST(topk_ratio_at(settings, 100) == 0.01);
  BOOST_TEST(topk_ratio_at(settings, 5000) == 0.01);
  for (uint64_t step = 1; step < 100; ++step) { // the same factor every step
    BOOST_TEST_REQUIRE(topk_ratio_at(settings, step) < topk_ratio_at(settings, step - 1));
    BOOST_TEST_REQUIRE(topk_ratio_at(settings, step) / topk_ratio_at(settings, step - 1)
                         == std::pow(0.04, 0.01), boost::test_tools::tolerance(1e-9));
  }
  settings.topk_ratio = 0.5; // a ratio above the start: no warm-up
  BOOST_TEST(topk_ratio_at(settings, 0) == 0.5);

  settings.topk_ratio = 0.01;
  actorps::gradient_encoder enc{settings};
  std::mt19937 rng{5};
  auto sent_at = [&](uint64_t step) {
    enc.begin_step(step);
    auto g = grid_gradient(rng, 1000);
    enc.encode(1, 0, g.data(), g.size());
    return std::count_if(g.begin(), g.end(), [](float x) { return x != 0.0f; });
  };
  BOOST_TEST(sent_at(0) == 250);
  BOOST_TEST(sent_at(50) == 50);
  BOOST_TEST(sent_at(100) == 10);
}

// Momentum correction (DGC): the residual accumulates the velocity u = m u + g instead of g,
// so sent + residual equals the sum of the velocities; a coordinate sent starts its velocity
// afresh (momentum factor masking), one not sent keeps it.
BOOST_AUTO_TEST_CASE(momentum_correction_accumulates_velocities_and_masks_what_was_sent) {
  compression_settings settings{wire_precision::fp32, sparsifier::topk, 0.25};
  settings.momentum = 0.5f; // exact in float on the grid of 1/64 for a few steps
  actorps::gradient_encoder enc{settings};
  std::vector<double> velocity(4, 0.0), velocities(4, 0.0), sent(4, 0.0);
  const std::vector<std::vector<float>> steps = {{1.0f, 0.5f, 0.25f, -2.0f}, {1.0f, 0.5f, 0.25f, 0.0f},
                                                 {0.0f, 2.0f, 0.25f, 0.0f}};
  for (auto g : steps) {
    std::vector<bool> was_sent(4);
    for (size_t i = 0; i < 4; ++i) {
      velocity[i] = 0.5 * velocity[i] + g[i];
      velocities[i] += velocity[i];
    }
    enc.encode(3, 0, g.data(), 4);
    size_t nonzero = 0;
    for (size_t i = 0; i < 4; ++i) {
      sent[i] += g[i];
      was_sent[i] = g[i] != 0.0f;
      nonzero += was_sent[i];
      if (was_sent[i]) // masked: the reference velocity starts over too
        velocity[i] = 0.0;
    }
    BOOST_TEST(nonzero == 1u); // top-k of 4 at 25%
    auto residual = enc.residual(3, 0, 4);
    for (size_t i = 0; i < 4; ++i)
      BOOST_TEST(sent[i] + residual[i] == velocities[i], "entry " << i);
  }
  // step 1 sends -2 (entry 3), step 2 entry 0 (residual 1 + 1.5), step 3 entry 1 (0.5 + 0.75 + 2.375)
  BOOST_TEST(sent[3] == -2.0);
  BOOST_TEST(sent[0] == 2.5);
  BOOST_TEST(sent[1] == 0.5 + 0.75 + 2.375); // its velocity, never masked before
}

BOOST_AUTO_TEST_CASE(names_parse_and_print) {
  BOOST_TEST((parse_sparsifier("topk") == sparsifier::topk));
  BOOST_TEST((parse_sparsifier("none") == sparsifier::none));
  BOOST_TEST(!parse_sparsifier("top-k"));
}

BOOST_AUTO_TEST_SUITE_END()
