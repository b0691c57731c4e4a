// Tests of control/placement: round-robin and balanced plans, partitioned variables, bytes per
// shard, the table.
#include "control/placement.hpp"
#include "model/mlp_spec.hpp"
#include "model/model_spec.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdlib>

using namespace actorps;

namespace {

// |a - b| / max(a, b)
double imbalance(const std::vector<size_t>& bytes) {
  auto [lo, hi] = std::minmax_element(bytes.begin(), bytes.end());
  return static_cast<double>(*hi - *lo) / static_cast<double>(*hi);
}

} // namespace

BOOST_AUTO_TEST_SUITE(placement)

BOOST_AUTO_TEST_CASE(round_robin_in_creation_order) {
  auto plan = make_placement(mlp_spec{}.variables(), 3, placement_strategy::round_robin);
  BOOST_REQUIRE_EQUAL(plan.parts.size(), 12u);
  for (uint32_t k = 0; k < 12; ++k) {
    BOOST_TEST(plan.parts[k].variable == k);
    BOOST_TEST(plan.parts[k].rows == plan.variables[k].rows);
    BOOST_TEST(plan.parts[k].shard == k % 3);
  }
  BOOST_TEST(parts_of(plan, 1) == std::vector<uint32_t>({1, 4, 7, 10}));
  BOOST_TEST(plan.partitioner == "none");
  BOOST_TEST(check_parts(plan) == "");
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

BOOST_AUTO_TEST_CASE(partitions_balance_the_reference_model_on_two_shards) {
  auto vars = mlp_spec{}.variables();
  // whole variables: round-robin 917,760 / 3,240 and balanced 501,760 / 419,240 bytes
  BOOST_TEST(imbalance(bytes_per_shard(make_placement(vars, 2, placement_strategy::round_robin))) > 0.99);
  BOOST_TEST(imbalance(bytes_per_shard(make_placement(vars, 2, placement_strategy::balanced))) > 0.16);
  for (const char* split : {"fixed:2", "fixed:4", "max-bytes:65536"})
    for (auto strategy : {placement_strategy::round_robin, placement_strategy::balanced}) {
      auto plan = make_placement(vars, 2, strategy, *parse_partitioner(split));
      BOOST_TEST(check_parts(plan) == "");
      auto bytes = bytes_per_shard(plan);
      BOOST_TEST(bytes[0] + bytes[1] == 920000u + 1000u);
      BOOST_TEST(imbalance(bytes) < 0.10, split << " " << to_string(strategy) << ": " << bytes[0] << " / " << bytes[1]);
    }
  auto fixed2 = bytes_per_shard(make_placement(vars, 2, placement_strategy::round_robin, *parse_partitioner("fixed:2")));
  BOOST_TEST(fixed2 == std::vector<size_t>({460800u, 460200u}));
}

BOOST_AUTO_TEST_CASE(parts_are_placed_like_variables_of_their_own) {
  auto plan = make_placement(mlp_spec{}.variables(), 2, placement_strategy::round_robin, *parse_partitioner("fixed:2"));
  // dense0/weights in two parts, then its bias, then dense1/weights in two parts, ...
  BOOST_REQUIRE(plan.parts.size() >= 4u);
  BOOST_TEST(plan.parts[0].variable == 0u);
  BOOST_TEST(plan.parts[0].row_begin == 0);
  BOOST_TEST(plan.parts[0].rows == 392);
  BOOST_TEST(plan.parts[1].row_begin == 392);
  BOOST_TEST(plan.parts[2].variable == 1u);
  for (uint32_t i = 0; i < plan.parts.size(); ++i)
    BOOST_TEST(plan.parts[i].shard == i % 2);
  BOOST_TEST(part_name(plan, 0) == "dense0/weights/part_0");
  BOOST_TEST(part_name(plan, 1) == "dense0/weights/part_1");
  BOOST_TEST(part_name(plan, 2) == "dense0/bias");
  BOOST_TEST(home_shard(plan, 0) == 0u);
  BOOST_TEST(home_shard(plan, 2) == 1u); // dense1/weights/part_0 is part 3
  auto table = placement_table(plan);
  BOOST_TEST(table.find("partitioner fixed:2") != std::string::npos, table);
  BOOST_TEST(table.find("dense0/weights/part_1    392x160        250880  1      /job:ps/task:1/device:CPU:0") != std::string::npos, table);
  BOOST_TEST(table.find("bytes per shard: 0=460800 1=460200") != std::string::npos, table);
}

BOOST_AUTO_TEST_CASE(check_parts_names_what_is_wrong) {
  auto plan = make_placement(mlp_spec{}.variables(), 2, placement_strategy::round_robin, *parse_partitioner("fixed:2"));
  auto gap = plan;
  gap.parts.erase(gap.parts.begin() + 1); // dense0/weights loses its second half
  BOOST_TEST(check_parts(gap) != "");
  auto overlap = plan;
  overlap.parts[1].row_begin = 391;
  BOOST_TEST(check_parts(overlap) != "");
  auto far = plan;
  far.parts[3].shard = 2;
  BOOST_TEST(check_parts(far).find("shard 2") != std::string::npos);
  auto short_end = plan;
  short_end.parts.pop_back();
  BOOST_TEST(check_parts(short_end) != "");
}

BOOST_AUTO_TEST_CASE(table_lists_every_variable) {
  auto plan = make_placement(mlp_spec{}.variables(), 2, placement_strategy::round_robin);
  auto table = placement_table(plan);
  BOOST_TEST(table.find("dense0/weights           784x160        501760  0      /job:ps/task:0/device:CPU:0") != std::string::npos, table);
  BOOST_TEST(table.find("logits/bias              1x10               40  1      /job:ps/task:1/device:CPU:0") != std::string::npos, table);
  BOOST_TEST(table.find("bytes per shard: 0=917760 1=3240") != std::string::npos, table);
}

BOOST_AUTO_TEST_CASE(the_cnn_places_its_kernels_round_robin_and_balanced) {
  model_spec cnn;
  cnn.layers = *parse_layers({"conv 3x3x32 relu", "maxpool 2", "conv 3x3x64 relu", "maxpool 2",
                              "dense 128 relu", "dense 10"});
  auto rr = make_placement(cnn.variables(), 2, placement_strategy::round_robin);
  auto table = placement_table(rr);
  BOOST_TEST(table.find("conv0/weights            9x32             1152  0") != std::string::npos, table);
  BOOST_TEST(table.find("conv1/weights            288x64          73728  0") != std::string::npos, table);
  BOOST_TEST(table.find("dense0/weights           3136x128      1605632  0") != std::string::npos, table);
  BOOST_TEST(table.find("logits/bias              1x10               40  1      /job:ps/task:1/device:CPU:0") != std::string::npos, table);
  // round-robin puts every kernel on shard 0; balanced evens the bytes out as far as whole
  // variables allow (dense0's kernel alone is 93% of the model); partitions even them out
  auto bal = bytes_per_shard(make_placement(cnn.variables(), 2, placement_strategy::balanced));
  BOOST_TEST(bal[0] == 1605632u);
  BOOST_TEST(bal[1] == 1152u + 128 + 73728 + 256 + 512 + 5120 + 40);
  auto split = bytes_per_shard(
    make_placement(cnn.variables(), 2, placement_strategy::balanced, *parse_partitioner("max-bytes:65536")));
  BOOST_TEST(imbalance(split) < 0.10, split[0] << " / " << split[1]);
}

BOOST_AUTO_TEST_CASE(names) {
  BOOST_TEST((parse_placement("balanced") == placement_strategy::balanced));
  BOOST_TEST(!parse_placement("random"));
}

// An embedding table is split over every shard whatever the partitioner: by div into ranges, by
// mod (TF's partition strategies) into parts holding the rows r mod shards = j; the placement
// table says which rows each part holds.
BOOST_AUTO_TEST_CASE(a_table_is_split_over_every_shard_by_div_or_mod) {
  variable_spec table{"embedding0/weights", 10, 4};
  table.table = true;
  auto div = make_placement({table, {"logits/bias", 1, 2}}, 3, placement_strategy::round_robin);
  auto mod = make_placement({table, {"logits/bias", 1, 2}}, 3, placement_strategy::round_robin, {}, "mod");
  for (auto* plan : {&div, &mod}) {
    BOOST_REQUIRE(check_parts(*plan).empty());
    BOOST_REQUIRE_EQUAL(plan->parts.size(), 4u);
    BOOST_TEST(plan->parts[0].rows == 4); // 10 rows in 4, 3, 3
    BOOST_TEST(plan->parts[1].rows == 3);
    BOOST_TEST(plan->parts[2].shard == 2u);
  }
  BOOST_TEST(!rows_permuted(div, 0));
  BOOST_TEST(rows_permuted(mod, 0));
  BOOST_TEST(!rows_permuted(mod, 1));
  for (uint32_t r = 0; r < 10; ++r) {
    BOOST_TEST(stored_row(div, 0, r) == r);
    BOOST_TEST(table_row(mod, 0, stored_row(mod, 0, r)) == r);
  }
  BOOST_TEST(stored_row(mod, 0, 4) == 5u); // (part 1, rows 1, 4, 7, starts at stored row 4)
  BOOST_TEST(stored_row(mod, 0, 1) == 4u);
  BOOST_TEST(stored_row(mod, 0, 9) == 3u);
  BOOST_TEST(table_row(mod, 0, 7) == 2u);
  auto shown = placement_table(mod);
  BOOST_TEST(shown.find("tables by mod") != std::string::npos, shown);
  BOOST_TEST(shown.find("rows r with r mod 3 = 1") != std::string::npos, shown);
  BOOST_TEST(placement_table(div).find("rows [4, 7)") != std::string::npos, placement_table(div));
  auto odd = mod;
  odd.table_partition = "hash";
  BOOST_TEST(check_parts(odd) == "unknown table partition \"hash\" (div or mod)");
}

BOOST_AUTO_TEST_SUITE_END()
