// Tests of model/mlp_slice: K = 2 and K = 3 slices, exchanging parts as the worker actors do,
// give the unsplit model's loss and every gradient for the same weights and batch, on the
// reference model and on a small model whose widths K does not divide.
#include "model/mlp_slice.hpp"

#include "common/errc.hpp"
#include "compute/cpu_backend.hpp"
#include "model/init.hpp"
#include "model/network.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>

using namespace actorps;
using actorps::test::random_values;

namespace {

struct split_result {
  double loss = 0;
  std::vector<std::vector<float>> grads; // whole variables, assembled from every slice
};

// Calls f(var, offset, count) for each row segment of slice k's columns of every variable.
template <class F>
void for_each_segment(const mlp_slice& s, F f) {
  for (int l = 0; l < s.dense().layer_count(); ++l) {
    auto own = s.columns(l, s.slice());
    size_t units = static_cast<size_t>(s.dense().layer_outputs(l));
    for (int r = 0; r < s.dense().layer_inputs(l); ++r)
      f(2 * l, r * units + own.begin, own.size());
    f(2 * l + 1, static_cast<size_t>(own.begin), own.size());
  }
}

// One training step of `slices` slices on the given weights and batch, exchanging every part
// in memory; returns the loss and the gradients put back together.
split_result split_step(const mlp_spec& spec, int slices, const std::vector<std::vector<float>>& params,
                        const std::vector<float>& images, const std::vector<float>& labels, int rows) {
  std::vector<std::unique_ptr<backend>> backends;
  std::vector<std::unique_ptr<mlp_slice>> nets;
  for (int k = 0; k < slices; ++k) {
    backends.push_back(make_cpu_backend(1));
    auto net = actorps::mlp_slice::make(*backends.back(), spec, k, slices, rows);
    BOOST_REQUIRE_MESSAGE(net, test::error_text(net));
    nets.push_back(std::move(*net));
    for_each_segment(*nets.back(), [&](size_t var, size_t offset, int n) {
      BOOST_REQUIRE(!nets.back()->upload_parameter(var, offset, params[var].data() + offset, n));
    });
    nets.back()->load_batch(images.data(), labels.data(), rows);
  }
  const int layers = spec.layer_count();
  std::vector<std::vector<float>> parts(slices);
  for (int l = 0; l < layers; ++l) { // all-gather of every layer's outputs
    for (int k = 0; k < slices; ++k)
      BOOST_REQUIRE(!nets[k]->forward(l, parts[k]));
    for (int k = 0; k < slices; ++k)
      for (int j = 0; j < slices; ++j)
        BOOST_REQUIRE(!nets[k]->accept_part(l, j, parts[j].data(), parts[j].size()));
  }
  for (auto& net : nets)
    BOOST_REQUIRE(!net->begin_backward());
  std::vector<std::vector<std::vector<float>>> partials(slices);
  for (int l = layers - 1; l >= 0; --l) { // reduce-scatter of the input gradients
    for (int k = 0; k < slices; ++k)
      BOOST_REQUIRE(!nets[k]->backward(l, partials[k]));
    if (l == 0)
      break;
    for (int j = 0; j < slices; ++j) {
      for (int k = 0; k < slices; ++k)
        BOOST_REQUIRE(!nets[j]->accept_partial(l - 1, k, partials[k][j].data(), partials[k][j].size()));
      nets[j]->finish_partials(l - 1);
    }
  }
  split_result out;
  for (auto& v : spec.variables())
    out.grads.emplace_back(v.size(), NAN);
  for (auto& net : nets)
    for_each_segment(*net, [&](size_t var, size_t offset, int n) {
      BOOST_REQUIRE(!net->download_gradient(var, offset, out.grads[var].data() + offset, n));
    });
  auto m = nets[slices - 1]->take_metrics(); // every slice computes the same loss
  BOOST_REQUIRE(m);
  out.loss = m->loss;
  return out;
}

void expect_same_step(const mlp_spec& spec, int slices, int rows) {
  auto params = initial_values(spec.to_model(), {init_scheme::truncated_normal, 0.0, 0.0, ""}, 11);
  for (auto& v : params) // biases non-zero too
    for (size_t i = 0; i < v.size(); ++i)
      v[i] += 0.01f * static_cast<float>(i % 7);
  auto images = random_values(static_cast<size_t>(rows) * spec.input_size, 5, 0.0f, 1.0f);
  std::vector<float> labels(rows);
  for (int r = 0; r < rows; ++r)
    labels[r] = static_cast<float>((r * 7) % spec.classes);
  auto be = make_cpu_backend(1);
  auto whole = network::make(*be, spec.to_model(), rows);
  BOOST_REQUIRE(whole);
  BOOST_REQUIRE(!(*whole)->set_parameters(params));
  (*whole)->load_batch(images.data(), labels.data(), rows);
  (*whole)->forward(true);
  (*whole)->backward();
  std::vector<std::vector<float>> want;
  BOOST_REQUIRE(!(*whole)->get_gradients(want));
  double want_loss = (*whole)->take_metrics()->loss;

  auto got = split_step(spec, slices, params, images, labels, rows);
  BOOST_TEST(std::abs(got.loss - want_loss) <= 1e-6 * std::max(1.0, std::abs(want_loss)),
             "K=" << slices << " loss " << got.loss << " vs " << want_loss);
  auto vars = spec.variables();
  for (size_t v = 0; v < vars.size(); ++v) {
    double worst = 0, scale = 1e-3;
    for (size_t i = 0; i < want[v].size(); ++i) {
      scale = std::max(scale, double{std::abs(want[v][i])});
      worst = std::max(worst, std::isnan(got.grads[v][i]) ? INFINITY : double{std::abs(got.grads[v][i] - want[v][i])});
    }
    BOOST_TEST(worst <= 1e-5 * scale, "K=" << slices << " " << vars[v].name << ": largest difference " << worst
                                            << " (largest gradient " << scale << ")");
  }
}

} // namespace

BOOST_AUTO_TEST_SUITE(mlp_slice)

BOOST_AUTO_TEST_CASE(two_and_three_slices_match_the_reference_model) {
  mlp_spec reference; // 784 -> 5 x 160 ELU -> 10
  for (int slices : {2, 3})
    expect_same_step(reference, slices, 50);
}

BOOST_AUTO_TEST_CASE(uneven_widths_match_the_unsplit_model) {
  mlp_spec spec;
  spec.input_size = 6;
  spec.hidden = {7, 5, 4};
  spec.classes = 3;
  for (int slices : {2, 3})
    expect_same_step(spec, slices, 9);
}

BOOST_AUTO_TEST_CASE(ranges_outside_the_slice_are_refused) {
  mlp_spec spec;
  spec.input_size = 4;
  spec.hidden = {6};
  spec.classes = 4;
  auto be = make_cpu_backend(1);
  auto net = actorps::mlp_slice::make(*be, spec, 1, 2, 2); // columns [3, 6) of layer 0, [2, 4) of the logits
  BOOST_REQUIRE(net);
  float v[6] = {};
  BOOST_TEST(!(*net)->upload_parameter(0, 6 + 3, v, 3));          // row 1, columns 3..5
  auto err = (*net)->upload_parameter(0, 6 + 2, v, 2);            // column 2 is slice 0's
  BOOST_TEST(err == errc::shape_mismatch);
  BOOST_TEST((*net)->upload_parameter(0, 4 * 6, v, 1) == errc::shape_mismatch); // past the last row
  BOOST_TEST((*net)->download_gradient(3, 2, v, 3) == errc::shape_mismatch);    // logits bias 2..4
  BOOST_TEST(!actorps::mlp_slice::make(*be, spec, 0, 5, 2)); // the logits have only 4 units
}

BOOST_AUTO_TEST_SUITE_END()
