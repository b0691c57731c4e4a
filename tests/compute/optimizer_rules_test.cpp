// Tests of compute/optimizer_rules: each rule against values computed by hand.
#include "compute/optimizer_rules.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(optimizer_rules)

BOOST_AUTO_TEST_CASE(sgd_step) {
  optimizer_params p;
  p.kind = optimizer_kind::sgd;
  p.learning_rate = 0.1f;
  std::vector<float> w = {1.0f, -2.0f}, g = {0.5f, -1.0f};
  apply_update_host(p, 1, 2, w.data(), g.data(), nullptr, nullptr);
  BOOST_TEST(w[0] == 0.95f, boost::test_tools::tolerance(1e-6f));
  BOOST_TEST(w[1] == -1.9f, boost::test_tools::tolerance(1e-6f));
}

BOOST_AUTO_TEST_CASE(momentum_two_steps) {
  optimizer_params p; // momentum, lr 0.01, mu 0.95
  std::vector<float> w = {1.0f}, g = {2.0f}, a = {0.0f};
  apply_update_host(p, 1, 1, w.data(), g.data(), a.data(), nullptr);
  // a = 2, w = 1 - 0.02
  BOOST_TEST(a[0] == 2.0f);
  BOOST_TEST(w[0] == 0.98f, boost::test_tools::tolerance(1e-6f));
  g[0] = -1.0f;
  apply_update_host(p, 2, 1, w.data(), g.data(), a.data(), nullptr);
  // a = 0.95 * 2 - 1 = 0.9, w = 0.98 - 0.009 = 0.971
  BOOST_TEST(a[0] == 0.9f, boost::test_tools::tolerance(1e-6f));
  BOOST_TEST(w[0] == 0.971f, boost::test_tools::tolerance(1e-6f));
}

BOOST_AUTO_TEST_CASE(adam_first_two_steps) {
  optimizer_params p;
  p.kind = optimizer_kind::adam;
  p.learning_rate = 0.001f;
  std::vector<float> w = {0.5f}, g = {0.2f}, m = {0.0f}, v = {0.0f};
  apply_update_host(p, 1, 1, w.data(), g.data(), m.data(), v.data());
  // m = 0.02, v = 0.00004, step = 0.001 * sqrt(0.001) / 0.1; w -= step * 0.02 / (0.0063246 + 1e-8)
  BOOST_TEST(m[0] == 0.02f, boost::test_tools::tolerance(1e-6f));
  BOOST_TEST(v[0] == 0.00004f, boost::test_tools::tolerance(1e-4f));
  BOOST_TEST(w[0] == 0.499f, boost::test_tools::tolerance(1e-5f)); // first Adam step moves by ~lr
  g[0] = -0.1f;
  apply_update_host(p, 2, 1, w.data(), g.data(), m.data(), v.data());
  double m2 = 0.9 * 0.02 + 0.1 * -0.1, v2 = 0.999 * 0.00004 + 0.001 * 0.01;
  double step = 0.001 * std::sqrt(1 - 0.999 * 0.999) / (1 - 0.9 * 0.9);
  double w2 = 0.499 - step * m2 / (std::sqrt(v2) + 1e-8);
  BOOST_TEST(m[0] == m2, boost::test_tools::tolerance(1e-5));
  BOOST_TEST(w[0] == w2, boost::test_tools::tolerance(1e-5));
}

BOOST_AUTO_TEST_CASE(exponential_learning_rate_decay) {
  optimizer_params p;
  p.kind = optimizer_kind::sgd;
  p.learning_rate = 0.1f;
  BOOST_TEST(learning_rate_at(p, 12345) == 0.1f); // decay_rate 1: constant
  p.decay_rate = 0.5f;
  p.decay_steps = 10;
  BOOST_TEST(learning_rate_at(p, 10) == 0.05f, boost::test_tools::tolerance(1e-6f));
  BOOST_TEST(learning_rate_at(p, 5) == 0.1f / std::sqrt(2.0f), boost::test_tools::tolerance(1e-6f));
  std::vector<float> w = {1.0f}, g = {1.0f};
  apply_update_host(p, 20, 1, w.data(), g.data(), nullptr, nullptr);
  BOOST_TEST(w[0] == 0.975f, boost::test_tools::tolerance(1e-6f)); // lr 0.1 * 0.25
}

BOOST_AUTO_TEST_CASE(momentum_rounds_every_operation_separately) {
  // Shards in different processes must agree to the bit (seeded sync runs give identical
  // weights), so the compiled update may not fuse a*b+c into one FMA in some code paths (the
  // vector loop, its peel, one CPU's clone) and not in others: compute is built with
  // -ffp-contract=off, and every element must equal the separately rounded formula.
  const size_t n = 1000;
  optimizer_params p; // momentum 0.95, lr 0.01
  std::vector<float> w(n), g(n), a(n);
  for (size_t i = 0; i < n; ++i) {
    w[i] = 0.001f * static_cast<float>(i % 97) - 0.05f;
    g[i] = 0.0007f * static_cast<float>(i % 89) - 0.03f;
    a[i] = 0.013f * static_cast<float>(i % 31) - 0.2f;
  }
  auto w_ref = w, a_ref = a;
  apply_update_host(p, 1, n, w.data(), g.data(), a.data(), nullptr);
  for (size_t i = 0; i < n; ++i) {
    volatile float scaled = p.momentum * a_ref[i]; // volatile: no fusing in this reference either
    volatile float acc = scaled + g[i];
    volatile float step = p.learning_rate * acc;
    float want_w = w_ref[i] - step;
    float want_a = acc;
    BOOST_TEST(a[i] == want_a, "slot " << i);
    BOOST_TEST(w[i] == want_w, "weight " << i);
  }
}

BOOST_AUTO_TEST_CASE(names_and_slots) {
  BOOST_TEST(slot_count(optimizer_kind::sgd) == 0);
  BOOST_TEST(slot_count(optimizer_kind::momentum) == 1);
  BOOST_TEST(slot_count(optimizer_kind::adam) == 2);
  BOOST_TEST((parse_optimizer("adam") == optimizer_kind::adam));
  BOOST_TEST(!parse_optimizer("rmsprop"));
}

BOOST_AUTO_TEST_SUITE_END()
