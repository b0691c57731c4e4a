// Tests of actors/tower_step: the towers' averaged gradient is the whole batch's gradient on one
// device (to float tolerance), bit for bit the same from run to run whatever the threads' timing,
// and the metrics cover every tower's rows.
#include "actors/replica_step.hpp"

#include "compute/cpu_backend.hpp"
#include "model/init.hpp"
#include "model/network.hpp"
#include "tests/support/synthetic_data.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>

using namespace actorps;

namespace {

model_spec small_cnn() {
  model_spec spec;
  spec.input = {4, 4, 1};
  spec.layers = *parse_layers({"conv 3x3x4 relu", "dense 8 elu", "dense 4"});
  return spec;
}

std::vector<std::vector<float>> gradient_of(replica_model& m) {
  std::vector<std::vector<float>> out;
  for (auto& v : m.spec().variables()) {
    out.emplace_back(static_cast<size_t>(v.rows) * static_cast<size_t>(v.cols));
    BOOST_REQUIRE(!m.download_gradient(out.size() - 1, 0, out.back().data(), out.back().size()));
  }
  return out;
}

// The gradient of `rows` examples on `towers` CPU towers (one thread each).
std::vector<std::vector<float>> tower_gradient(int towers, int rows, double* loss = nullptr) {
  auto spec = small_cnn();
  std::vector<std::unique_ptr<backend>> owned;
  std::vector<backend*> devices;
  for (int t = 0; t < towers; ++t) {
    owned.push_back(make_cpu_backend(1));
    devices.push_back(owned.back().get());
  }
  auto step = make_tower_step(devices, spec, rows);
  BOOST_REQUIRE(step);
  auto values = initial_values(spec, {init_scheme::he, 0.0, 0.0, ""}, 3);
  for (size_t k = 0; k < values.size(); ++k)
    BOOST_REQUIRE(!(*step)->model().upload_parameter(k, 0, values[k].data(), values[k].size()));
  auto data = test::quadrant_set(rows, 5);
  (*step)->model().load_batch(data.images.data(), data.labels.data(), rows);
  // what the step says is ready as backprop goes: variables [first, end), the same values then
  // as at the end (the towers' average of those layers is complete when it is told)
  std::vector<size_t> told;
  std::vector<std::vector<float>> early(spec.variables().size());
  (*step)->on_gradients([&](size_t first) {
    told.push_back(first);
    for (size_t k = first; k < early.size(); ++k)
      if (early[k].empty()) {
        early[k].resize(static_cast<size_t>(spec.variables()[k].rows) * static_cast<size_t>(spec.variables()[k].cols));
        BOOST_REQUIRE(!(*step)->model().download_gradient(k, 0, early[k].data(), early[k].size()));
      }
  });
  BOOST_REQUIRE(!(*step)->begin(rows));
  BOOST_TEST(((*step)->status() == replica_step::state::ready));
  BOOST_REQUIRE(!told.empty());
  BOOST_TEST(told.back() == 0u);
  for (size_t i = 1; i < told.size(); ++i)
    BOOST_TEST(told[i] < told[i - 1]);
  if (towers > 1 && rows >= towers)
    BOOST_TEST(told.size() == 3u); // a push per layer as backprop passes it, as one device's step does
  BOOST_TEST((early == gradient_of((*step)->model())));
  BOOST_TEST((*step)->rows() == rows);
  auto m = (*step)->model().take_metrics();
  BOOST_REQUIRE(m);
  BOOST_TEST(m->rows == rows);
  if (loss)
    *loss = m->loss;
  return gradient_of((*step)->model());
}

} // namespace

BOOST_AUTO_TEST_SUITE(tower_step)

BOOST_AUTO_TEST_CASE(towers_average_to_the_whole_batchs_gradient) {
  double one_loss = 0.0;
  auto one = tower_gradient(1, 10, &one_loss);
  for (int towers : {2, 3}) {
    double loss = 0.0;
    auto many = tower_gradient(towers, 10, &loss);
    BOOST_TEST(loss == one_loss, boost::test_tools::tolerance(1e-5));
    for (size_t k = 0; k < one.size(); ++k)
      for (size_t i = 0; i < one[k].size(); ++i)
        BOOST_TEST(std::abs(many[k][i] - one[k][i]) <= 1e-5f * (1.0f + std::abs(one[k][i])),
                   towers << " towers, variable " << k << "[" << i << "]: " << many[k][i] << " vs " << one[k][i]);
  }
}

BOOST_AUTO_TEST_CASE(the_same_bits_every_run) {
  auto first = tower_gradient(3, 7);
  for (int run = 0; run < 5; ++run)
    BOOST_TEST((tower_gradient(3, 7) == first));
}

BOOST_AUTO_TEST_CASE(more_towers_than_rows_leave_some_idle) {
  double loss = 0.0, one_loss = 0.0;
  auto one = tower_gradient(1, 2, &one_loss);
  auto many = tower_gradient(3, 2, &loss);
  BOOST_TEST(loss == one_loss, boost::test_tools::tolerance(1e-5));
  BOOST_TEST(many.size() == one.size());
}

BOOST_AUTO_TEST_SUITE_END()
