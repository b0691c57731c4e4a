// Tests of control/push_plan: a step's pushes cut into parts in the order backprop completes them.
#include "control/push_plan.hpp"

#include "control/placement.hpp"
#include "control/slicing.hpp"

#include <boost/test/unit_test.hpp>

#include <tuple>

using namespace actorps;

namespace {

using due_list = std::vector<std::pair<uint32_t, uint32_t>>;

// The reference MLP's shape in small: dense0 (784 -> 8), dense1 (8 -> 8), dense2 (8 -> 10), on
// 2 shards round-robin: shard 0 holds the weights, shard 1 the biases.
std::vector<std::vector<slice_ref>> held_of_mlp() {
  auto plan = make_placement({{"dense0/weights", 784, 8}, {"dense0/bias", 1, 8}, {"dense1/weights", 8, 8},
                              {"dense1/bias", 1, 8}, {"dense2/weights", 8, 10}, {"dense2/bias", 1, 10}},
                             2, placement_strategy::round_robin);
  return {held_ranges(plan, 0), held_ranges(plan, 1)};
}

std::vector<std::tuple<uint32_t, uint32_t, uint32_t>> ranges_of(const push_part& p) {
  std::vector<std::tuple<uint32_t, uint32_t, uint32_t>> out;
  for (auto& r : p.ranges)
    out.emplace_back(r.variable, r.offset, r.count);
  return out;
}

// Every held value is in exactly one part of its shard.
void check_covers(const push_plan& plan, const std::vector<std::vector<slice_ref>>& held) {
  for (uint32_t s = 0; s < held.size(); ++s) {
    std::map<uint32_t, std::vector<int>> seen;
    for (auto& r : held[s])
      seen[r.variable].assign(r.offset + r.count, 0);
    for (auto& part : plan.parts(s))
      for (auto& r : part.ranges)
        for (uint32_t i = r.offset; i < r.offset + r.count; ++i)
          ++seen.at(r.variable).at(i);
    for (auto& r : held[s])
      for (uint32_t i = r.offset; i < r.offset + r.count; ++i)
        BOOST_TEST(seen[r.variable][i] == 1);
  }
}

} // namespace

BOOST_AUTO_TEST_SUITE(push_plan)

BOOST_AUTO_TEST_CASE(without_buckets_each_shard_gets_one_push_when_backprop_is_over) {
  auto held = held_of_mlp();
  actorps::push_plan plan{held, 0, 1u << 20};
  for (uint32_t s = 0; s < 2; ++s) {
    BOOST_REQUIRE_EQUAL(plan.parts(s).size(), 1u);
    BOOST_TEST(plan.parts(s)[0].ranges.size() == held[s].size()); // the held order, as before
  }
  plan.begin_step();
  BOOST_TEST(plan.due(4).empty()); // the last layers are done: nothing goes yet
  BOOST_TEST((plan.due(0) == due_list{{0, 0}, {1, 0}}));
  BOOST_TEST(plan.due(0).empty()); // each part once per step
  plan.begin_step();
  BOOST_TEST(plan.due(0).size() == 2u);
}

BOOST_AUTO_TEST_CASE(parts_close_at_the_bucket_size_last_layers_first) {
  auto held = held_of_mlp();
  actorps::push_plan plan{held, 64, 1u << 20}; // 64 floats: dense2 and dense1 weights (80 + 64) each alone
  using ranges = std::vector<std::tuple<uint32_t, uint32_t, uint32_t>>;
  BOOST_REQUIRE_EQUAL(plan.parts(0).size(), 3u);
  BOOST_TEST((ranges_of(plan.parts(0)[0]) == ranges{{4, 0, 80}}));
  BOOST_TEST(plan.parts(0)[0].ready_after == 4u);
  BOOST_TEST((ranges_of(plan.parts(0)[1]) == ranges{{2, 0, 64}}));
  BOOST_TEST((ranges_of(plan.parts(0)[2]) == ranges{{0, 0, 6272}}));
  BOOST_REQUIRE_EQUAL(plan.parts(1).size(), 1u); // the biases (26 floats) never fill a bucket
  BOOST_TEST((ranges_of(plan.parts(1)[0]) == ranges{{5, 0, 10}, {3, 0, 8}, {1, 0, 8}}));
  BOOST_TEST(plan.parts(1)[0].ready_after == 1u);
  check_covers(plan, held);

  plan.begin_step(); // backprop: layer 2 (variables 4, 5), layer 1 (2, 3), layer 0 (0, 1)
  BOOST_TEST((plan.due(4) == due_list{{0, 0}}));
  BOOST_TEST((plan.due(2) == due_list{{0, 1}}));
  BOOST_TEST((plan.due(0) == due_list{{0, 2}, {1, 0}}));
}

BOOST_AUTO_TEST_CASE(no_part_carries_more_than_a_message_may) {
  auto held = held_of_mlp();
  actorps::push_plan plan{held, 1, 1000}; // every variable its own part; at most 1000 floats each
  BOOST_REQUIRE_EQUAL(plan.parts(0).size(), 2u + 7u); // dense0/weights (6,272 floats) in 7 parts
  for (auto& part : plan.parts(0)) {
    uint32_t floats = 0;
    for (auto& r : part.ranges)
      floats += r.count;
    BOOST_TEST(floats <= 1000u);
  }
  BOOST_TEST(plan.parts(0).back().ready_after == 0u);
  BOOST_TEST(plan.parts(0)[2].ready_after == 0u); // the pieces of one variable fall due together
  BOOST_TEST(plan.parts(1).size() == 3u);
  check_covers(plan, held);
  plan.begin_step();
  BOOST_TEST(plan.due(2).size() == 4u); // dense2 and dense1, weights and bias
  BOOST_TEST(plan.due(0).size() == 8u);
}

// A model-parallel slice holds one range per row of each weight matrix: a variable's ranges stay
// together, in offset order.
BOOST_AUTO_TEST_CASE(a_variables_ranges_stay_together_in_offset_order) {
  std::vector<std::vector<slice_ref>> held{{{0, 0, 2}, {0, 4, 2}, {1, 0, 2}, {2, 0, 3}, {2, 6, 3}}};
  actorps::push_plan plan{held, 4, 1u << 20};
  using ranges = std::vector<std::tuple<uint32_t, uint32_t, uint32_t>>;
  BOOST_REQUIRE_EQUAL(plan.parts(0).size(), 2u);
  BOOST_TEST((ranges_of(plan.parts(0)[0]) == ranges{{2, 0, 3}, {2, 6, 3}}));
  BOOST_TEST((ranges_of(plan.parts(0)[1]) == ranges{{1, 0, 2}, {0, 0, 2}, {0, 4, 2}}));
  check_covers(plan, held);
}

// A table's rows go with the last part of every shard holding a part of it (an empty part where
// the shard holds nothing else), due once backprop has reached the table.
BOOST_AUTO_TEST_CASE(the_last_part_of_a_table_shard_carries_its_rows) {
  actorps::push_plan plan{{{{1, 0, 64}, {2, 0, 8}}, {}}, 10, 1000};
  BOOST_REQUIRE_EQUAL(plan.parts(0).size(), 1u);
  BOOST_TEST(plan.parts(1).empty());
  plan.carry_rows(0, 0);
  plan.carry_rows(1, 0);
  BOOST_TEST(plan.parts(0).back().rows);
  BOOST_TEST(plan.parts(0).back().ready_after == 0u);
  BOOST_REQUIRE_EQUAL(plan.parts(1).size(), 1u);
  BOOST_TEST(plan.parts(1)[0].ranges.empty());
  BOOST_TEST(plan.parts(1)[0].rows);
  plan.begin_step();
  BOOST_TEST(plan.due(1).empty()); // (the table, variable 0, is not done yet)
  BOOST_TEST((plan.due(0) == due_list{{0, 0}, {1, 0}}));
}

// cluster.push-early-ms: a part backprop's rest would not hide joins the shard's next part (its
// ranges first, its rows with it) while the joined part fits a message; the last stays.
BOOST_AUTO_TEST_CASE(parts_not_worth_sending_early_join_the_next) {
  auto held = held_of_mlp();
  actorps::push_plan plan{held, 64, 1u << 20}; // shard 0: dense2 (after 4), dense1 (after 2), dense0 (after 0)
  using ranges = std::vector<std::tuple<uint32_t, uint32_t, uint32_t>>;
  BOOST_TEST(plan.count() == 4u);
  // dense2's part has backprop's rest to hide it; dense1's does not: it goes with dense0's
  BOOST_TEST(plan.keep_early([](uint32_t ready_after) { return ready_after >= 4; }) == 3u);
  BOOST_REQUIRE_EQUAL(plan.parts(0).size(), 2u);
  BOOST_TEST((ranges_of(plan.parts(0)[0]) == ranges{{4, 0, 80}}));
  BOOST_TEST((ranges_of(plan.parts(0)[1]) == ranges{{2, 0, 64}, {0, 0, 6272}}));
  BOOST_TEST(plan.parts(0)[1].ready_after == 0u);
  BOOST_TEST(plan.parts(1).size() == 1u);
  check_covers(plan, held);
  plan.begin_step();
  BOOST_TEST((plan.due(4) == due_list{{0, 0}}));
  BOOST_TEST(plan.due(2).empty()); // (dense1 waits for the last push now)
  BOOST_TEST((plan.due(0) == due_list{{0, 1}, {1, 0}}));
  // none worth it: one push per shard, as push-bucket-bytes = 0 would cut them
  BOOST_TEST(plan.keep_early([](uint32_t) { return false; }) == 2u);
  BOOST_TEST((ranges_of(plan.parts(0)[0]) == ranges{{4, 0, 80}, {2, 0, 64}, {0, 0, 6272}}));
  check_covers(plan, held);
}

BOOST_AUTO_TEST_CASE(joined_parts_stay_within_a_message_and_keep_their_rows) {
  auto held = held_of_mlp();
  actorps::push_plan plan{held, 1, 1000}; // shard 0: dense2 (80), dense1 (64), dense0 in 7 pieces
  plan.carry_rows(0, 0);
  plan.keep_early([](uint32_t) { return false; });
  uint64_t total = 0;
  for (auto& part : plan.parts(0)) {
    uint32_t floats = 0;
    for (auto& r : part.ranges)
      floats += r.count;
    BOOST_TEST(floats <= 1000u);
    total += floats;
  }
  BOOST_TEST(total == 80u + 64u + 6272u);
  BOOST_TEST(plan.parts(0).size() < 9u);
  BOOST_TEST(plan.parts(0).back().rows);
  BOOST_TEST(plan.parts(0).back().ready_after == 0u);
  check_covers(plan, held);
}

BOOST_AUTO_TEST_SUITE_END()
