// Tests of model/optimizer: slots per variable (at their initial values), weight decay for weights
// only, and update numbering on a backend.
#include "model/optimizer.hpp"

#include "compute/cpu_backend.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;
using actorps::test::random_values;

BOOST_AUTO_TEST_SUITE(optimizer)

BOOST_AUTO_TEST_CASE(applies_the_host_rule_with_increasing_update_numbers) {
  auto be = make_cpu_backend(1);
  for (auto kind : all_optimizers) {
    optimizer_params p;
    p.kind = kind;
    p.weight_decay = 0.01f;
    std::vector<variable_spec> specs = {{"dense0/weights", 1, 3, {}}, {"dense0/bias", 1, 2, {}}};
    std::vector<size_t> sizes = {3, 2};
    auto opt = actorps::optimizer::make(*be, p, specs);
    BOOST_REQUIRE(opt);
    std::vector<buffer> vars, grads;
    std::vector<std::vector<float>> w_ref, slot0(2), slot1(2);
    for (size_t i = 0; i < sizes.size(); ++i) {
      auto w = random_values(sizes[i], 40 + i), g = random_values(sizes[i], 50 + i);
      vars.push_back(std::move(*be->allocate(sizes[i])));
      grads.push_back(std::move(*be->allocate(sizes[i])));
      be->upload(w.data(), w.size(), vars.back().data());
      be->upload(g.data(), g.size(), grads.back().data());
      w_ref.push_back(w);
      slot0[i].assign(sizes[i], slot_initial_value(p, 0));
      slot1[i].assign(sizes[i], slot_initial_value(p, 1));
    }
    for (long t = 1; t <= 3; ++t) {
      opt->apply(vars, grads);
      for (size_t i = 0; i < sizes.size(); ++i) {
        std::vector<float> g(sizes[i]);
        BOOST_REQUIRE(!be->download(grads[i].data(), g.size(), g.data()));
        auto pv = for_variable(p, specs[i].name, specs[i].moving_decay); // the bias does not decay
        apply_update_host(pv, t, sizes[i], w_ref[i].data(), g.data(), slot0[i].data(), slot1[i].data());
      }
    }
    BOOST_TEST(opt->steps() == 3);
    for (size_t i = 0; i < sizes.size(); ++i) {
      std::vector<float> w(sizes[i]);
      BOOST_REQUIRE(!be->download(vars[i].data(), w.size(), w.data()));
      BOOST_TEST((w == w_ref[i]), to_string(kind));
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(optimizer)

// TF's sparse apply: the gradient holds the named rows alone, in their order; only those rows
// move, their slots too; a table whose every row is named ends as the dense update leaves it.
BOOST_AUTO_TEST_CASE(named_rows_move_and_no_others) {
  auto be = make_cpu_backend(1);
  for (auto kind : {optimizer_kind::momentum, optimizer_kind::adagrad, optimizer_kind::adam}) {
    optimizer_params p;
    p.kind = kind;
    std::vector<variable_spec> specs = {{"embedding0/weights", 4, 3, {4, 3}}};
    auto sparse = actorps::optimizer::make(*be, p, specs);
    auto dense = actorps::optimizer::make(*be, p, specs);
    BOOST_REQUIRE(sparse);
    BOOST_REQUIRE(dense);
    auto w = random_values(12, 7), g = random_values(12, 8);
    auto make = [&](const std::vector<float>& v) {
      auto b = std::move(*be->allocate(v.size()));
      be->upload(v.data(), v.size(), b.data());
      return b;
    };
    std::vector<buffer> a, b, grads, rows_3_1;
    a.push_back(make(w));
    b.push_back(make(w));
    grads.push_back(make(g));
    rows_3_1.push_back(make({g[9], g[10], g[11], g[3], g[4], g[5]})); // (rows 3 and 1 of g, in that order)
    const std::vector<size_t> some{3, 1}, all{0, 1, 2, 3};
    sparse->apply(a, rows_3_1, {&some});
    std::vector<float> got(12);
    BOOST_REQUIRE(!be->download(a[0].data(), 12, got.data()));
    for (size_t i = 0; i < 12; ++i) {
      const bool moved = i / 3 == 1 || i / 3 == 3;
      BOOST_TEST((got[i] != w[i]) == moved, to_string(kind) << " value " << i);
    }
    sparse->apply(a, grads, {&all}); // (rows 0 and 2: their first update, at update number 2)
    dense->apply(b, grads);
    dense->apply(b, grads);
    std::vector<float> want(12);
    BOOST_REQUIRE(!be->download(b[0].data(), 12, want.data()));
    BOOST_REQUIRE(!be->download(a[0].data(), 12, got.data()));
    for (size_t i : {3u, 4u, 5u, 9u, 10u, 11u}) // rows updated twice agree with the dense rule
      BOOST_TEST(got[i] == want[i], to_string(kind) << " value " << i);
  }
}

BOOST_AUTO_TEST_SUITE_END()
