// Tests of control/value_views: a worker that applies what the shard sends holds exactly the
// shard's view of it, and what top-k holds back reaches it later (error feedback on values).
#include "control/value_views.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <random>

using namespace actorps;

namespace {

variable_slice slice_of(const std::vector<float>& values, uint32_t var = 2, uint32_t offset = 10) {
  return {var, offset, {values}};
}

} // namespace

BOOST_AUTO_TEST_SUITE(value_views)

BOOST_AUTO_TEST_CASE(without_a_view_the_values_go_whole_and_become_the_view) {
  actorps::value_views views;
  auto s = slice_of({0.5f, 1.0f / 3.0f});
  views.encode(1, s, 0.5, wire_precision::bf16);
  BOOST_TEST(!s.delta);
  BOOST_TEST(!s.data.sparse);
  BOOST_TEST(s.data.values[1] == bf16_to_float(float_to_bf16(1.0f / 3.0f)));
  BOOST_TEST(views.floats() == 2u);
  // the next answer is a delta against it
  auto next = slice_of({0.75f, 1.0f / 3.0f});
  views.encode(1, next, 0.5, wire_precision::fp32);
  BOOST_TEST(next.delta);
  BOOST_TEST(next.data.sparse);
  BOOST_TEST(next.data.values[0] == 0.25f);
}

BOOST_AUTO_TEST_CASE(a_receiver_tracks_the_view_exactly_and_converges_to_the_values) {
  actorps::value_views views;
  std::mt19937 rng{4};
  std::normal_distribution<float> d;
  const size_t n = 200;
  std::vector<float> values(n);
  for (auto& v : values)
    v = d(rng);
  std::vector<float> worker(n);
  auto first = slice_of(values);
  views.record(0, first.variable, first.offset, values.data(), n); // the worker's pull
  merge_into(worker.data(), first);
  for (int step = 0; step < 300; ++step) {
    for (auto& v : values) // every value changes a little each step
      v += 0.01f * d(rng);
    auto s = slice_of(values);
    views.encode(0, s, 0.05, wire_precision::bf16);
    BOOST_REQUIRE(s.delta);
    size_t sent = 0;
    for (float x : s.data.values)
      sent += x != 0.0f;
    BOOST_TEST_REQUIRE(sent <= 10u); // 5% of 200
    merge_into(worker.data(), s);
  }
  // what the shard believes the worker holds is what it holds, bit for bit
  auto check = slice_of(worker);
  views.encode(0, check, 1.0, wire_precision::fp32); // the full difference: worker vs itself
  for (float x : check.data.values)
    BOOST_TEST_REQUIRE(x == 0.0f);
  // and held-back changes went out later: the worker is close to the values
  auto last = slice_of(values);
  views.encode(0, last, 1.0, wire_precision::fp32);
  merge_into(worker.data(), last);
  double worst = 0;
  for (size_t i = 0; i < n; ++i)
    worst = std::max(worst, static_cast<double>(std::fabs(worker[i] - values[i])));
  BOOST_TEST(worst < 1e-5);
}

BOOST_AUTO_TEST_CASE(views_are_per_worker_and_slice_and_forgotten_per_worker) {
  actorps::value_views views;
  std::vector<float> v{1.0f, 2.0f};
  views.record(0, 2, 10, v.data(), 2);
  views.record(1, 2, 10, v.data(), 2);
  views.record(1, 2, 12, v.data(), 2);
  BOOST_TEST(views.floats() == 6u);
  auto other_range = slice_of({1.0f, 2.0f, 3.0f}); // same key, other size: sent whole
  views.encode(0, other_range, 0.5, wire_precision::fp32);
  BOOST_TEST(!other_range.delta);
  views.forget(1);
  BOOST_TEST(views.floats() == 3u);
  auto s = slice_of({1.0f, 2.0f});
  views.encode(1, s, 0.5, wire_precision::fp32);
  BOOST_TEST(!s.delta); // worker 1 has no view any more
}

BOOST_AUTO_TEST_SUITE_END()
