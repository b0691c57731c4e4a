// Tests of actors/placement: round-robin and balanced plans, bytes per shard, the table.
#include "actors/placement.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(placement)

BOOST_AUTO_TEST_CASE(round_robin_in_creation_order) {
  auto plan = make_placement(mlp_spec{}.variables(), 3, placement_strategy::round_robin);
  BOOST_REQUIRE_EQUAL(plan.shard_of.size(), 12u);
  for (uint32_t k = 0; k < 12; ++k)
    BOOST_TEST(plan.shard_of[k] == k % 3);
  BOOST_TEST(variables_of(plan, 1) == std::vector<uint32_t>({1, 4, 7, 10}));
}

BOOST_AUTO_TEST_CASE(reference_model_bytes_per_shard) {
  auto vars = mlp_spec{}.variables();
  // round-robin on 2 shards puts every weight matrix on shard 0 and every bias on shard 1
  auto rr = bytes_per_shard(make_placement(vars, 2, placement_strategy::round_robin));
  BOOST_TEST(rr == std::vector<size_t>({(784u * 160 + 4u * 160 * 160 + 160u * 10) * 4, (5u * 160 + 10) * 4}));
  auto bal = bytes_per_shard(make_placement(vars, 2, placement_strategy::balanced));
  BOOST_TEST(bal[0] + bal[1] == rr[0] + rr[1]);
  BOOST_TEST(bal == std::vector<size_t>({501760u, 419240u}));
}

BOOST_AUTO_TEST_CASE(table_lists_every_variable) {
  auto plan = make_placement(mlp_spec{}.variables(), 2, placement_strategy::round_robin);
  auto table = placement_table(plan);
  BOOST_TEST(table.find("layer0/weights   784x160        501760  0") != std::string::npos, table);
  BOOST_TEST(table.find("logits/bias      1x10               40  1") != std::string::npos, table);
  BOOST_TEST(table.find("bytes per shard: 0=917760 1=3240") != std::string::npos, table);
}

BOOST_AUTO_TEST_CASE(names) {
  BOOST_TEST((parse_placement("balanced") == placement_strategy::balanced));
  BOOST_TEST(!parse_placement("random"));
}

BOOST_AUTO_TEST_SUITE_END()
