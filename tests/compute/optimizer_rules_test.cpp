// Tests of compute/optimizer_rules: each rule against values computed by hand.
#include "compute/optimizer_rules.hpp"
#include "compute/row_prefetch.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
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
  p.schedule = lr_schedule::exponential;
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

BOOST_AUTO_TEST_CASE(nesterov_looks_ahead_along_the_accumulator) {
  optimizer_params p;
  p.kind = optimizer_kind::nesterov; // lr 0.01, mu 0.95
  std::vector<float> w = {1.0f}, g = {2.0f}, a = {0.0f};
  apply_update_host(p, 1, 1, w.data(), g.data(), a.data(), nullptr);
  // a = 2; w -= 0.01 * (2 + 0.95 * 2) = 0.039
  BOOST_TEST(a[0] == 2.0f);
  BOOST_TEST(w[0] == 0.961f, boost::test_tools::tolerance(1e-6f));
}

BOOST_AUTO_TEST_CASE(adagrad_accumulates_squares_from_its_initial_value) {
  optimizer_params p;
  p.kind = optimizer_kind::adagrad;
  p.learning_rate = 0.1f;
  BOOST_TEST(slot_initial_value(p, 0) == 0.1f); // TF1's initial_accumulator_value
  std::vector<float> w = {1.0f}, g = {0.3f}, acc = {slot_initial_value(p, 0)};
  apply_update_host(p, 1, 1, w.data(), g.data(), acc.data(), nullptr);
  BOOST_TEST(acc[0] == 0.19f, boost::test_tools::tolerance(1e-6f));
  BOOST_TEST(w[0] == 1.0f - 0.1f * 0.3f / std::sqrt(0.19f), boost::test_tools::tolerance(1e-6f));
}

BOOST_AUTO_TEST_CASE(rmsprop_follows_tf1_with_its_mean_square_starting_at_one) {
  optimizer_params p;
  p.kind = optimizer_kind::rmsprop;
  p.learning_rate = 0.01f;
  p.momentum = 0.5f;
  p.epsilon = 1e-10f;
  BOOST_TEST(slot_initial_value(p, 0) == 1.0f);
  BOOST_TEST(slot_initial_value(p, 1) == 0.0f);
  std::vector<float> w = {1.0f}, g = {2.0f}, ms = {1.0f}, mom = {0.0f};
  apply_update_host(p, 1, 1, w.data(), g.data(), ms.data(), mom.data());
  // ms = 0.9 + 0.1 * 4 = 1.3; mom = 0.01 * 2 / sqrt(1.3); w -= mom
  double mom1 = 0.01 * 2 / std::sqrt(1.3);
  BOOST_TEST(ms[0] == 1.3f, boost::test_tools::tolerance(1e-6f));
  BOOST_TEST(w[0] == 1.0 - mom1, boost::test_tools::tolerance(1e-6));
  apply_update_host(p, 2, 1, w.data(), g.data(), ms.data(), mom.data());
  double ms2 = 0.9 * 1.3 + 0.4, mom2 = 0.5 * mom1 + 0.01 * 2 / std::sqrt(ms2);
  BOOST_TEST(mom[0] == mom2, boost::test_tools::tolerance(1e-5));
}

BOOST_AUTO_TEST_CASE(weight_decay_adds_to_the_gradient_of_weights_but_not_biases) {
  optimizer_params p;
  p.kind = optimizer_kind::sgd;
  p.learning_rate = 0.1f;
  p.weight_decay = 0.5f;
  std::vector<float> w = {2.0f}, g = {1.0f};
  apply_update_host(for_variable(p, "conv0/weights", 0.0f), 1, 1, w.data(), g.data(), nullptr, nullptr);
  BOOST_TEST(w[0] == 2.0f - 0.1f * (1.0f + 1.0f), boost::test_tools::tolerance(1e-6f));
  std::vector<float> b = {2.0f};
  apply_update_host(for_variable(p, "conv0/bias", 0.0f), 1, 1, b.data(), g.data(), nullptr, nullptr);
  BOOST_TEST(b[0] == 1.9f, boost::test_tools::tolerance(1e-6f));
  BOOST_TEST(decays("logits/weights"));
  BOOST_TEST(!decays("logits/bias"));
}

BOOST_AUTO_TEST_CASE(a_moving_statistic_keeps_its_decay_of_itself) {
  optimizer_params p;
  p.learning_rate = 0.5f;
  std::vector<float> w{2.0f}, g{6.0f};
  apply_update_host(for_variable(p, "bn0/moving_mean", 0.75f), 1, 1, w.data(), g.data(), nullptr, nullptr);
  BOOST_TEST(w[0] == 0.75f * 2.0f + 0.25f * 6.0f);
}

BOOST_AUTO_TEST_CASE(schedules_follow_tensorflows_decay_functions) {
  optimizer_params p;
  p.learning_rate = 0.1f;
  p.schedule = lr_schedule::exponential;
  p.decay_rate = 0.5f;
  p.decay_steps = 10;
  p.staircase = true;
  BOOST_TEST(learning_rate_at(p, 9) == 0.1f);
  BOOST_TEST(learning_rate_at(p, 10) == 0.05f, boost::test_tools::tolerance(1e-6f));
  BOOST_TEST(learning_rate_at(p, 19) == 0.05f, boost::test_tools::tolerance(1e-6f));
  p.schedule = lr_schedule::piecewise;
  p.boundaries = {100, 200};
  p.values = {0.1f, 0.01f, 0.001f};
  BOOST_TEST(learning_rate_at(p, 1) == 0.1f);
  BOOST_TEST(learning_rate_at(p, 100) == 0.1f); // piecewise_constant: x <= boundary keeps the rate
  BOOST_TEST(learning_rate_at(p, 101) == 0.01f);
  BOOST_TEST(learning_rate_at(p, 201) == 0.001f);
  p.schedule = lr_schedule::cosine;
  p.decay_steps = 100;
  p.cosine_alpha = 0.1f;
  BOOST_TEST(learning_rate_at(p, 0) == 0.1f, boost::test_tools::tolerance(1e-6f));
  BOOST_TEST(learning_rate_at(p, 50) == 0.1f * (0.9f * 0.5f + 0.1f), boost::test_tools::tolerance(1e-5f));
  BOOST_TEST(learning_rate_at(p, 100) == 0.01f, boost::test_tools::tolerance(1e-5f));
  BOOST_TEST(learning_rate_at(p, 500) == 0.01f, boost::test_tools::tolerance(1e-5f));
}

BOOST_AUTO_TEST_CASE(inconsistent_schedules_are_named) {
  optimizer_params p;
  p.schedule = lr_schedule::piecewise;
  p.boundaries = {100};
  p.values = {0.1f};
  BOOST_TEST(check(p) == "train.lr-values needs one more entry than train.lr-boundaries (1 boundaries, 1 values)");
  p.boundaries = {100, 50};
  p.values = {0.1f, 0.01f, 0.001f};
  BOOST_TEST(check(p) == "train.lr-boundaries must be positive and increasing; entry 1 is 50");
  p.schedule = lr_schedule::cosine;
  p.cosine_alpha = 2.0f;
  BOOST_TEST(check(p) == "train.lr-alpha must be in [0, 1], got 2");
  p.cosine_alpha = 0.0f;
  BOOST_TEST(check(p).empty());
}

BOOST_AUTO_TEST_CASE(names_and_slots) {
  BOOST_TEST(slot_count(optimizer_kind::sgd) == 0);
  BOOST_TEST(slot_count(optimizer_kind::momentum) == 1);
  BOOST_TEST(slot_count(optimizer_kind::nesterov) == 1);
  BOOST_TEST(slot_count(optimizer_kind::adagrad) == 1);
  BOOST_TEST(slot_count(optimizer_kind::adam) == 2);
  BOOST_TEST(slot_count(optimizer_kind::rmsprop) == 2);
  for (auto k : all_optimizers)
    BOOST_TEST((parse_optimizer(to_string(k)) == k));
  for (auto s : all_schedules)
    BOOST_TEST((parse_schedule(to_string(s)) == s));
  BOOST_TEST(!parse_optimizer("adadelta"));
}

BOOST_AUTO_TEST_CASE(updates_flush_denormal_slots_to_zero_and_restore_the_callers_mode) {
  // A slot whose gradient stays 0 decays by mu each step; below FLT_MIN it would become a
  // denormal, which costs a microcode assist per operation. The update flushes it to 0 instead,
  // and leaves the calling thread's floating-point mode as it found it.
  optimizer_params p; // momentum, mu 0.95
  const float tiny = std::numeric_limits<float>::min(); // the smallest normal float
  std::vector<float> w = {1.0f}, g = {0.0f}, a = {tiny};
  apply_update_host(p, 1, 1, w.data(), g.data(), a.data(), nullptr);
  BOOST_TEST(a[0] == 0.0f);
  BOOST_TEST(w[0] == 1.0f);
  volatile float operand = tiny;
  const float half_of_tiny = operand * 0.5f; // outside the update denormals are kept
  BOOST_TEST(half_of_tiny > 0.0f);
  BOOST_TEST(std::fpclassify(half_of_tiny) == FP_SUBNORMAL);
}

// A sparse update (apply_rows_host) is the dense rule on each named row, bit for bit, for every
// optimizer, the moving-average rule and a schedule; rows it does not name keep their weights and
// slots. The rows are scattered and out of order, more than rows_ahead of them.
BOOST_AUTO_TEST_CASE(rows_update_each_named_row_as_the_dense_rule_does) {
  const size_t rows = 128, cols = 5;
  std::vector<size_t> picked; // (rows_ahead + 8 distinct rows in a scattered order)
  for (size_t k = 0; k < rows_ahead + 8; ++k)
    picked.push_back((k * 37 + 11) % rows);
  size_t untouched = 0; // (a row not among them)
  while (std::find(picked.begin(), picked.end(), untouched) != picked.end())
    ++untouched;
  BOOST_REQUIRE(untouched < rows);
  for (auto kind : {optimizer_kind::sgd, optimizer_kind::momentum, optimizer_kind::nesterov, optimizer_kind::adam,
                    optimizer_kind::adagrad, optimizer_kind::rmsprop}) {
    for (float moving_decay : {0.0f, 0.9f}) {
      optimizer_params p;
      p.kind = kind;
      p.learning_rate = 0.05f;
      p.weight_decay = 0.01f;
      p.moving_decay = moving_decay;
      p.schedule = lr_schedule::cosine;
      p.decay_steps = 10;
      auto filled = [&](float base) {
        std::vector<float> v(rows * cols);
        for (size_t i = 0; i < v.size(); ++i)
          v[i] = base + 0.001f * static_cast<float>(i % 97);
        return v;
      };
      auto w = filled(0.5f), s0 = filled(0.2f), s1 = filled(0.3f);
      auto w_ref = w, s0_ref = s0, s1_ref = s1;
      std::vector<float> g(picked.size() * cols);
      for (size_t i = 0; i < g.size(); ++i)
        g[i] = 0.01f * static_cast<float>(i % 13) - 0.05f;
      std::vector<size_t> at;
      for (size_t r : picked)
        at.push_back(r * cols);
      for (long t : {1L, 2L, 7L}) {
        apply_rows_host(p, t, cols, at.data(), at.size(), w.data(), g.data(), s0.data(), s1.data());
        for (size_t j = 0; j < picked.size(); ++j)
          apply_update_host(p, t, cols, w_ref.data() + at[j], g.data() + j * cols, s0_ref.data() + at[j],
                            s1_ref.data() + at[j]);
      }
      BOOST_TEST_INFO("optimizer " << to_string(kind) << ", moving decay " << moving_decay);
      BOOST_TEST(w == w_ref, boost::test_tools::per_element());
      BOOST_TEST(s0 == s0_ref, boost::test_tools::per_element());
      BOOST_TEST(s1 == s1_ref, boost::test_tools::per_element());
      BOOST_TEST(w[untouched * cols] == 0.5f + 0.001f * static_cast<float>(untouched * cols % 97)); // (not named: untouched)
    }
  }
}

// A span's update is its floats updated one at a time, bit for bit, for every rule: the loops run
// in vector lanes (sqrt and division too: compute/ builds without errno from sqrt), whose IEEE
// operations round as the scalar ones do, so a value never depends on where in a span it lies.
BOOST_AUTO_TEST_CASE(a_spans_update_is_its_floats_updated_one_at_a_time) {
  const size_t n = 1000 + 13; // (whole vectors, then a remainder)
  for (auto kind : all_optimizers) {
    optimizer_params p;
    p.kind = kind;
    p.learning_rate = 0.05f;
    p.weight_decay = 0.01f;
    std::vector<float> w(n), g(n), s0(n), s1(n);
    for (size_t i = 0; i < n; ++i) {
      w[i] = 0.5f + 0.001f * static_cast<float>(i % 97);
      g[i] = 0.01f * static_cast<float>(i % 13) - 0.05f;
      s0[i] = 0.2f + 0.0007f * static_cast<float>(i % 31); // (positive: a second moment's slot)
      s1[i] = 0.3f + 0.0003f * static_cast<float>(i % 17);
    }
    auto w1 = w, s01 = s0, s11 = s1;
    for (long t : {1L, 2L, 3L}) {
      apply_update_host(p, t, n, w.data(), g.data(), s0.data(), s1.data());
      for (size_t i = 0; i < n; ++i)
        apply_update_host(p, t, 1, &w1[i], &g[i], &s01[i], &s11[i]);
    }
    BOOST_TEST_INFO("optimizer " << to_string(kind));
    BOOST_TEST(w == w1, boost::test_tools::per_element());
    BOOST_TEST(s0 == s01, boost::test_tools::per_element());
    BOOST_TEST(s1 == s11, boost::test_tools::per_element());
  }
}

// Without slots (sgd) the rows' update takes null slot pointers.
BOOST_AUTO_TEST_CASE(rows_update_without_slots) {
  optimizer_params p;
  p.kind = optimizer_kind::sgd;
  p.learning_rate = 0.5f;
  std::vector<float> w = {1, 1, 2, 2, 3, 3}, g = {1, 2, 4, 6};
  const std::vector<size_t> at = {4, 0};
  apply_rows_host(p, 1, 2, at.data(), at.size(), w.data(), g.data(), nullptr, nullptr);
  BOOST_TEST(w == (std::vector<float>{-1, -2, 2, 2, 2.5f, 2}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()
