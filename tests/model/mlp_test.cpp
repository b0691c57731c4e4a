// Tests of model/mlp: finite-difference gradient checks of every variable for every activation,
// the loss gradient, and batch handling.
#include "model/network.hpp"

#include "common/errc.hpp"
#include "compute/cpu_backend.hpp"
#include "model/init.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>

using namespace actorps;
using actorps::test::random_values;

namespace {

constexpr int batch = 4;

struct fixture {
  std::unique_ptr<backend> be = make_cpu_backend(1);
  std::vector<float> images = random_values(batch * 6, 21, 0.0f, 1.0f);
  std::vector<float> labels = {0, 2, 1, 2};

  mlp_spec small(activation f) {
    mlp_spec spec;
    spec.input_size = 6;
    spec.hidden = {5, 4};
    spec.hidden_activation = f;
    spec.classes = 3;
    return spec;
  }

  double loss_at(actorps::mlp& net, const std::vector<std::vector<float>>& params) {
    BOOST_REQUIRE(!net.set_parameters(params));
    net.load_batch(images.data(), labels.data(), batch);
    net.forward();
    net.score();
    return net.take_metrics()->loss;
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(mlp, fixture)

BOOST_AUTO_TEST_CASE(every_variable_matches_finite_differences_for_every_activation) {
  for (auto f : {activation::relu, activation::elu, activation::sigmoid}) {
    auto spec = small(f);
    auto net = std::move(*actorps::mlp::make(*be, spec, batch));
    auto params = initial_values(spec, init_scheme::he, 3);
    for (size_t v = 1; v < params.size(); v += 2) // non-zero biases so their gradients matter
      params[v] = random_values(params[v].size(), 30 + v, -0.3f, 0.3f);
    BOOST_REQUIRE(!net->set_parameters(params));
    net->load_batch(images.data(), labels.data(), batch);
    net->forward();
    net->backward();
    std::vector<std::vector<float>> grads;
    BOOST_REQUIRE(!net->get_gradients(grads));
    (void) net->take_metrics();
    const float eps = 1e-3f;
    auto vars = spec.variables();
    for (size_t v = 0; v < params.size(); ++v)
      for (size_t i = 0; i < params[v].size(); ++i) {
        auto plus = params, minus = params;
        plus[v][i] += eps;
        minus[v][i] -= eps;
        double numeric = (loss_at(*net, plus) - loss_at(*net, minus)) / (2 * eps);
        BOOST_TEST(std::fabs(grads[v][i] - numeric) <= 5e-4 + 2e-2 * std::fabs(numeric),
                   to_string(f) << " " << vars[v].name << "[" << i << "]: analytic " << grads[v][i]
                                << " numeric " << numeric);
      }
  }
}

BOOST_AUTO_TEST_CASE(loss_gradient_matches_finite_differences) {
  const int rows = 3, cols = 4;
  auto zs = random_values(rows * cols, 5, -2.0f, 2.0f);
  std::vector<float> ls = {3, 0, 1};
  auto z = std::move(*be->allocate(zs.size())), l = std::move(*be->allocate(3)),
       g = std::move(*be->allocate(zs.size())), loss = std::move(*be->allocate(1));
  be->upload(ls.data(), 3, l.data());
  auto eval = [&](const std::vector<float>& values) {
    be->upload(values.data(), values.size(), z.data());
    be->softmax_xent(z.as_matrix(rows, cols), l.data(), g.as_matrix(rows, cols), loss.data());
    float out;
    BOOST_REQUIRE(!be->download(loss.data(), 1, &out));
    return double{out};
  };
  eval(zs);
  std::vector<float> grad(zs.size());
  BOOST_REQUIRE(!be->download(g.data(), grad.size(), grad.data()));
  for (size_t i = 0; i < zs.size(); ++i) {
    auto plus = zs, minus = zs;
    plus[i] += 1e-3f;
    minus[i] -= 1e-3f;
    double numeric = (eval(plus) - eval(minus)) / 2e-3;
    BOOST_TEST(std::fabs(grad[i] - numeric) < 2e-4, "logit " << i);
  }
}

BOOST_AUTO_TEST_CASE(metrics_average_over_batches_and_reset) {
  auto spec = small(activation::elu);
  auto net = std::move(*actorps::mlp::make(*be, spec, batch));
  BOOST_REQUIRE(!net->set_parameters(initial_values(spec, init_scheme::truncated_normal, 1)));
  net->load_batch(images.data(), labels.data(), 2);
  net->forward();
  net->score();
  auto first = *net->take_metrics();
  BOOST_TEST(first.rows == 2);
  net->load_batch(images.data(), labels.data(), 2);
  net->forward();
  net->score();
  net->forward();
  net->score();
  auto twice = *net->take_metrics();
  BOOST_TEST(twice.rows == 4);
  BOOST_TEST(twice.loss == first.loss, boost::test_tools::tolerance(1e-6));
  BOOST_TEST(twice.accuracy == first.accuracy);
  BOOST_TEST(net->take_metrics()->rows == 0);
}

BOOST_AUTO_TEST_CASE(wrong_parameter_sizes_are_rejected_and_leave_parameters) {
  auto spec = small(activation::relu);
  auto net = std::move(*actorps::mlp::make(*be, spec, batch));
  auto good = initial_values(spec, init_scheme::truncated_normal, 1);
  BOOST_REQUIRE(!net->set_parameters(good));
  auto bad = good;
  bad[2].pop_back();
  auto err = net->set_parameters(bad);
  BOOST_TEST(err == actorps::errc::shape_mismatch);
  BOOST_TEST(describe(err) == "shape_mismatch: layer1/weights: expected 20 values, got 19");
  std::vector<std::vector<float>> now;
  BOOST_REQUIRE(!net->get_parameters(now));
  BOOST_TEST((now == good));
}

BOOST_AUTO_TEST_SUITE_END()
