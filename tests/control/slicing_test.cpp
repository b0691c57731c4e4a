// Tests of control/slicing: variables split into wire-sized pieces and put back together.
#include "control/slicing.hpp"

#include "control/placement.hpp"
#include "common/errc.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;

namespace {

placement_plan small_plan() {
  return make_placement({{"a", 2, 5}, {"b", 1, 3}, {"c", 1, 4}}, 2, placement_strategy::round_robin);
}

} // namespace

BOOST_AUTO_TEST_SUITE(slicing)

BOOST_AUTO_TEST_CASE(pull_ranges_cover_the_shards_variables_within_the_limit) {
  auto plan = small_plan(); // shard 0 holds a (10 floats) and c (4 floats)
  auto reqs = pull_requests_for(held_ranges(plan, 0), 1, 4);
  // 14 floats in pieces of at most 4 per request
  BOOST_REQUIRE_EQUAL(reqs.size(), 4u);
  std::vector<std::tuple<uint32_t, uint32_t, uint32_t>> pieces;
  for (auto& r : reqs) {
    uint32_t total = 0;
    for (auto& range : r.ranges) {
      pieces.emplace_back(range.variable, range.offset, range.count);
      total += range.count;
    }
    BOOST_TEST(total <= 4u);
    BOOST_TEST(r.worker == 1u);
  }
  std::vector<std::tuple<uint32_t, uint32_t, uint32_t>> want = {{0, 0, 4}, {0, 4, 4}, {0, 8, 2}, {2, 0, 2}, {2, 2, 2}};
  BOOST_TEST(pieces == want);
  BOOST_TEST(pull_requests_for(held_ranges(plan, 1), 1, 1000).size() == 1u);
}

BOOST_AUTO_TEST_CASE(slices_hold_their_columns_of_every_row) {
  auto plan = small_plan(); // shard 0: a (2 x 5), c (1 x 4)
  using range = std::tuple<uint32_t, uint32_t, uint32_t>;
  auto ranges = [&](uint32_t slice) {
    std::vector<range> out;
    for (auto& r : held_ranges(plan, 0, slice, 2))
      out.emplace_back(r.variable, r.offset, r.count);
    return out;
  };
  // a's columns [0, 3) and [3, 5) in each of its 2 rows; c's columns [0, 2) and [2, 4)
  BOOST_TEST(ranges(0) == (std::vector<range>{{0, 0, 3}, {0, 5, 3}, {2, 0, 2}}));
  BOOST_TEST(ranges(1) == (std::vector<range>{{0, 3, 2}, {0, 8, 2}, {2, 2, 2}}));
  // whole variables without slices
  BOOST_TEST(held_ranges(plan, 0).size() == 2u);
  // pieces never cross a range, and the limit still holds
  auto reqs = pull_requests_for(held_ranges(plan, 0, 0, 2), 3, 4);
  std::vector<range> pieces;
  for (auto& r : reqs)
    for (auto& p : r.ranges)
      pieces.emplace_back(p.variable, p.offset, p.count);
  BOOST_TEST(pieces == (std::vector<range>{{0, 0, 3}, {0, 5, 1}, {0, 6, 2}, {2, 0, 2}}));
}

BOOST_AUTO_TEST_CASE(push_pieces_are_filled_from_the_source) {
  auto plan = small_plan();
  auto reqs = push_requests_for(held_ranges(plan, 0), 2, 9, 8, [](uint32_t k, uint32_t offset, uint32_t count, float* dst) {
    for (uint32_t i = 0; i < count; ++i)
      dst[i] = static_cast<float>(k * 100 + offset + i);
    return caf::error{};
  });
  BOOST_REQUIRE(reqs);
  BOOST_REQUIRE_EQUAL(reqs->size(), 2u);
  BOOST_TEST((*reqs)[0].step == 9u);
  BOOST_TEST((*reqs)[0].grads[0].data.values == std::vector<float>({0, 1, 2, 3, 4, 5, 6, 7}));
  BOOST_TEST((*reqs)[1].grads[0].offset == 8u);
  BOOST_TEST((*reqs)[1].grads[1].data.values == std::vector<float>({200, 201, 202, 203}));
  auto failing = push_requests_for(held_ranges(plan, 0), 2, 9, 8, [](uint32_t, uint32_t, uint32_t, float*) {
    return caf::make_error(errc::device_error, "boom");
  });
  BOOST_REQUIRE(!failing);
  BOOST_TEST(failing.error() == errc::device_error);
}

BOOST_AUTO_TEST_CASE(scatter_puts_slices_back_and_refuses_misfits) {
  std::vector<std::vector<float>> values = {std::vector<float>(10, 0.0f), std::vector<float>(3, 0.0f)};
  pull_reply reply{1, {{0, 8, {{1.0f, 2.0f}}}, {1, 0, {{3.0f}}}}};
  BOOST_REQUIRE(!scatter_slices(reply, values));
  BOOST_TEST(values[0][8] == 1.0f);
  BOOST_TEST(values[0][9] == 2.0f);
  BOOST_TEST(values[1][0] == 3.0f);
  pull_reply bad{1, {{0, 9, {{1.0f, 2.0f}}}}};
  BOOST_TEST(scatter_slices(bad, values) == errc::protocol_error);
}

BOOST_AUTO_TEST_SUITE_END()
