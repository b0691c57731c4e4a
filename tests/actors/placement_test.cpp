// Tests of actors/placement: round-robin and balanced plans, bytes per shard, the table.
#include "actors/placement.hpp"
#include "model/model_spec.hpp"

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
  BOOST_TEST(table.find("dense0/weights   784x160        501760  0") != std::string::npos, table);
  BOOST_TEST(table.find("logits/bias      1x10               40  1") != std::string::npos, table);
  BOOST_TEST(table.find("bytes per shard: 0=917760 1=3240") != std::string::npos, table);
}

BOOST_AUTO_TEST_CASE(the_cnn_places_its_kernels_round_robin_and_balanced) {
  model_spec cnn;
  cnn.layers = *parse_layers({"conv 3x3x32 relu", "maxpool 2", "conv 3x3x64 relu", "maxpool 2",
                              "dense 128 relu", "dense 10"});
  auto rr = make_placement(cnn.variables(), 2, placement_strategy::round_robin);
  auto table = placement_table(rr);
  BOOST_TEST(table.find("conv0/weights    9x32             1152  0") != std::string::npos, table);
  BOOST_TEST(table.find("conv1/weights    288x64          73728  0") != std::string::npos, table);
  BOOST_TEST(table.find("dense0/weights   3136x128      1605632  0") != std::string::npos, table);
  BOOST_TEST(table.find("logits/bias      1x10               40  1") != std::string::npos, table);
  // round-robin puts every kernel on shard 0; balanced evens the bytes out as far as whole
  // variables allow (dense0's kernel alone is 93% of the model)
  auto bal = bytes_per_shard(make_placement(cnn.variables(), 2, placement_strategy::balanced));
  BOOST_TEST(bal[0] == 1605632u);
  BOOST_TEST(bal[1] == 1152u + 128 + 73728 + 256 + 512 + 5120 + 40);
}

BOOST_AUTO_TEST_CASE(names) {
  BOOST_TEST((parse_placement("balanced") == placement_strategy::balanced));
  BOOST_TEST(!parse_placement("random"));
}

BOOST_AUTO_TEST_SUITE_END()
