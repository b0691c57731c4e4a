// Tests of model/init and model/mlp_spec: variable order, shapes and seeded initial values.
#include "model/init.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(init)

BOOST_AUTO_TEST_CASE(reference_variables_in_creation_order) {
  mlp_spec spec;
  auto vars = spec.variables();
  BOOST_REQUIRE_EQUAL(vars.size(), 12u);
  BOOST_TEST(vars[0].name == "layer0/weights");
  BOOST_TEST(vars[0].rows == 784);
  BOOST_TEST(vars[0].cols == 160);
  BOOST_TEST(vars[1].name == "layer0/bias");
  BOOST_TEST(vars[1].rows == 1);
  BOOST_TEST(vars[9].name == "layer4/bias");
  BOOST_TEST(vars[10].name == "logits/weights");
  BOOST_TEST(vars[10].cols == 10);
  BOOST_TEST(vars[11].name == "logits/bias");
  BOOST_TEST(spec.forward_macs() == 784u * 160 + 4u * 160 * 160 + 160u * 10);
}

BOOST_AUTO_TEST_CASE(truncated_normal_statistics_and_zero_biases) {
  mlp_spec spec;
  auto values = initial_values(spec, init_scheme::truncated_normal, 42);
  auto vars = spec.variables();
  const double stddev = 2.0 / std::sqrt(784.0 + 160.0);
  double sum = 0, sq = 0, worst = 0;
  for (float v : values[0]) {
    sum += v;
    sq += double(v) * v;
    worst = std::max(worst, std::fabs(double(v)));
  }
  double n = static_cast<double>(values[0].size());
  BOOST_TEST(std::fabs(sum / n) < 0.01 * stddev * 10);
  // A normal truncated at 2 sigma has a standard deviation of 0.88 sigma.
  BOOST_TEST(std::sqrt(sq / n) == 0.88 * stddev, boost::test_tools::tolerance(0.02));
  BOOST_TEST(worst <= 2.0 * stddev);
  for (size_t i = 1; i < vars.size(); i += 2)
    for (float v : values[i])
      BOOST_TEST(v == 0.0f);
}

BOOST_AUTO_TEST_CASE(he_uses_fan_in) {
  mlp_spec spec;
  auto values = initial_values(spec, init_scheme::he, 1);
  double sq = 0;
  for (float v : values[2])
    sq += double(v) * v;
  BOOST_TEST(std::sqrt(sq / values[2].size()) == 0.88 * std::sqrt(2.0 / 160.0),
             boost::test_tools::tolerance(0.03));
}

BOOST_AUTO_TEST_CASE(same_seed_same_values_other_seed_other_values) {
  mlp_spec spec;
  BOOST_TEST((initial_values(spec, init_scheme::truncated_normal, 7)
              == initial_values(spec, init_scheme::truncated_normal, 7)));
  BOOST_TEST((initial_values(spec, init_scheme::truncated_normal, 7)[0]
              != initial_values(spec, init_scheme::truncated_normal, 8)[0]));
}

BOOST_AUTO_TEST_CASE(invalid_specs_are_named) {
  mlp_spec spec;
  spec.hidden = {160, 0};
  BOOST_TEST(spec.validate() == "hidden layer 1 must have positive width, got 0");
  spec.hidden = {};
  BOOST_TEST(spec.validate().empty()); // softmax regression is a valid model
  spec.classes = 1;
  BOOST_TEST(!spec.validate().empty());
}

BOOST_AUTO_TEST_SUITE_END()
