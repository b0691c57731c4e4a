// Tests of model/init: each initialiser's statistics, the notebook's exact rule, constant biases,
// conv fans, and seeding.
#include "model/init.hpp"

#include "model/mlp_spec.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>

using namespace actorps;

namespace {

model_spec reference() {
  return dense_model({28, 28, 1}, {160, 160, 160, 160, 160}, activation::elu, 10);
}

struct stats {
  double mean = 0, rms = 0, worst = 0;
};

stats of(const std::vector<float>& xs) {
  stats s;
  for (float v : xs) {
    s.mean += v;
    s.rms += double(v) * v;
    s.worst = std::max(s.worst, std::fabs(double(v)));
  }
  s.mean /= xs.size();
  s.rms = std::sqrt(s.rms / xs.size());
  return s;
}

std::vector<std::vector<float>> values_of(const model_spec& spec, init_scheme scheme, double stddev = 0,
                                          double bias = 0, uint64_t seed = 42) {
  return initial_values(spec, {scheme, stddev, bias, ""}, seed);
}

// A normal truncated at 2 sigma has a standard deviation of 0.88 sigma.
constexpr double truncated_rms = 0.88;

} // namespace

BOOST_AUTO_TEST_SUITE(init)

BOOST_AUTO_TEST_CASE(the_notebook_rule_uses_the_model_inputs_for_every_hidden_layer_and_glorot_for_logits) {
  auto spec = reference();
  auto values = values_of(spec, init_scheme::notebook);
  const double stddev = 2.0 / std::sqrt(784.0 + 160.0);
  for (size_t layer : {0, 2, 4, 6, 8}) { // every hidden weight matrix, layers 1-4 included
    auto s = of(values[layer]);
    BOOST_TEST(s.rms == truncated_rms * stddev, boost::test_tools::tolerance(0.03));
    BOOST_TEST(s.worst <= 2.0 * stddev);
  }
  auto logits = of(values[10]);
  const double limit = std::sqrt(6.0 / (160.0 + 10.0));
  BOOST_TEST(logits.worst <= limit);
  BOOST_TEST(logits.rms == limit / std::sqrt(3.0), boost::test_tools::tolerance(0.05));
  for (size_t i = 1; i < values.size(); i += 2)
    for (float v : values[i])
      BOOST_TEST(v == 0.0f);
}

BOOST_AUTO_TEST_CASE(truncated_normal_takes_an_explicit_stddev_or_the_per_layer_fan_rule) {
  auto spec = reference();
  auto fixed = values_of(spec, init_scheme::truncated_normal, 0.05);
  BOOST_TEST(of(fixed[4]).rms == truncated_rms * 0.05, boost::test_tools::tolerance(0.03));
  BOOST_TEST(of(fixed[4]).worst <= 0.1);
  auto fan = values_of(spec, init_scheme::truncated_normal);
  BOOST_TEST(of(fan[4]).rms == truncated_rms * 2.0 / std::sqrt(320.0), boost::test_tools::tolerance(0.03));
}

BOOST_AUTO_TEST_CASE(random_normal_defaults_to_tensorflows_stddev_one) {
  auto spec = reference();
  auto s = of(values_of(spec, init_scheme::random_normal)[0]);
  BOOST_TEST(std::fabs(s.mean) < 0.01);
  BOOST_TEST(s.rms == 1.0, boost::test_tools::tolerance(0.02));
  BOOST_TEST(s.worst > 3.0); // not truncated
  BOOST_TEST(of(values_of(spec, init_scheme::random_normal, 0.1)[0]).rms == 0.1, boost::test_tools::tolerance(0.02));
}

BOOST_AUTO_TEST_CASE(he_and_glorot_count_a_conv_kernels_window_in_its_fans) {
  model_spec spec;
  spec.layers = *parse_layers({"conv 3x3x32 relu", "maxpool 2", "dense 10"});
  auto he = values_of(spec, init_scheme::he);
  BOOST_TEST(of(he[0]).rms == truncated_rms * std::sqrt(2.0 / 9.0), boost::test_tools::tolerance(0.05));
  auto glorot = values_of(spec, init_scheme::glorot_uniform);
  const double limit = std::sqrt(6.0 / (9.0 + 9.0 * 32));
  BOOST_TEST(of(glorot[0]).worst <= limit);
  BOOST_TEST(of(glorot[0]).worst > 0.9 * limit);
}

BOOST_AUTO_TEST_CASE(biases_start_at_the_configured_constant) {
  auto values = values_of(reference(), init_scheme::he, 0, 0.1);
  for (size_t i = 1; i < values.size(); i += 2)
    for (float v : values[i])
      BOOST_TEST(v == 0.1f);
}

BOOST_AUTO_TEST_CASE(same_seed_same_values_other_seed_other_values) {
  auto spec = reference();
  BOOST_TEST((values_of(spec, init_scheme::notebook, 0, 0, 7) == values_of(spec, init_scheme::notebook, 0, 0, 7)));
  BOOST_TEST((values_of(spec, init_scheme::notebook, 0, 0, 7)[0] != values_of(spec, init_scheme::notebook, 0, 0, 8)[0]));
}

BOOST_AUTO_TEST_CASE(scheme_names_round_trip) {
  for (auto s : all_init_schemes)
    BOOST_TEST((parse_init_scheme(to_string(s)) == s));
  BOOST_TEST(!parse_init_scheme("xavier"));
}

BOOST_AUTO_TEST_CASE(invalid_dense_specs_are_named) {
  mlp_spec spec;
  spec.hidden = {160, 0};
  BOOST_TEST(spec.validate() == "hidden layer 1 must have positive width, got 0");
  spec.hidden = {};
  BOOST_TEST(spec.validate().empty()); // softmax regression is a valid model
  spec.classes = 1;
  BOOST_TEST(!spec.validate().empty());
}

// An embedding table's rows come out the same whichever part (or process) makes them: a ps node
// making rows [r, r + n) gives initial_values' rows there; the values have stddev about 1/sqrt(D)
// and none beyond 2 stddev.
BOOST_AUTO_TEST_CASE(a_tables_rows_are_the_same_from_any_part) {
  model_spec spec;
  spec.input = {1, 8, 1};
  spec.layers = *parse_layers({"embedding 10 16 mean", "dense 2"});
  auto whole = initial_values(spec, {}, 7);
  BOOST_REQUIRE_EQUAL(whole[0].size(), 1024u * 16);
  std::vector<float> part(300 * 16);
  table_rows_initial(7, 500, 300, 16, part.data());
  BOOST_TEST(std::equal(part.begin(), part.end(), whole[0].begin() + 500 * 16));
  BOOST_TEST(initial_values(spec, {}, 7, false)[0].empty());
  BOOST_TEST((initial_values(spec, {}, 7, false)[1] == whole[1])); // (the rest does not move)
  double sum2 = 0.0, most = 0.0;
  for (float v : whole[0]) {
    sum2 += double(v) * v;
    most = std::max(most, std::fabs(double(v)));
  }
  const double stddev = std::sqrt(sum2 / whole[0].size());
  BOOST_TEST(stddev > 0.85 * 0.25);
  BOOST_TEST(stddev < 0.25);
  BOOST_TEST(most <= 0.5);
  std::vector<float> other(16);
  table_rows_initial(8, 500, 1, 16, other.data());
  BOOST_TEST(!std::equal(other.begin(), other.end(), whole[0].begin() + 500 * 16)); // (another seed)
}

// Every other row of the 1,024 (a part split by mod), made on 1 and on 3 threads: initial_values'
// rows, the same on any count (the ps nodes and the trainer make large tables on every core).
BOOST_AUTO_TEST_CASE(a_tables_rows_are_the_same_on_any_number_of_threads) {
  model_spec spec;
  spec.input = {1, 8, 1};
  spec.layers = *parse_layers({"embedding 10 16 mean", "dense 2"});
  auto whole = initial_values(spec, {}, 7);
  for (unsigned threads : {1u, 3u}) {
    std::vector<float> odd(512 * 16, 0.0f);
    table_rows_initial(7, 1, 2, 512, 16, odd.data(), threads);
    for (size_t r = 0; r < 512; ++r)
      BOOST_TEST(std::equal(odd.begin() + r * 16, odd.begin() + (r + 1) * 16, whole[0].begin() + (2 * r + 1) * 16),
                 "row " << 2 * r + 1 << " on " << threads << " threads");
  }
  std::vector<float> many(40000 * 2), one(40000 * 2); // (enough rows for threads to start)
  table_rows_initial(3, 0, 1, 40000, 2, many.data(), 3);
  table_rows_initial(3, 0, 40000, 2, one.data());
  BOOST_TEST((many == one));
}

BOOST_AUTO_TEST_SUITE_END()
