// Tests of actors/chief_checkpoints: a CNN's variables and optimizer slots go through a checkpoint
// on disk (make_checkpoint, the store, restore_into) and come back bit for bit on every shard;
// the manifest names the model by its input shape and layer list.
#include "actors/chief_checkpoints.hpp"

#include "control/placement.hpp"
#include "checkpoint/checkpoint_store.hpp"
#include "model/init.hpp"
#include "model/presets.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <cstring>

using namespace actorps;
using namespace actorps::test;

namespace {

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

} // namespace

BOOST_AUTO_TEST_SUITE(chief_checkpoints)


// Writes a checkpoint of the CNN placed on 2 shards with `split` (values and momentum unlike
// each other, with awkward bit patterns) and restores every shard from the file on disk: each
// part comes back bit for bit, and the files hold whole variables.
void check_round_trip(const std::string& split) {
  BOOST_TEST_CONTEXT("partitioner " << split) {
    model_spec cnn;
    cnn.layers = *parse_layers(find_preset("cnn")->layers);
    BOOST_TEST(cnn.text() == "28x28x1: conv 3x3x32 relu, maxpool 2, conv 3x3x64 relu, maxpool 2, "
                             "dense 128 relu, dense 10");
    auto plan = make_placement(cnn.variables(), 2, placement_strategy::round_robin, *parse_partitioner(split));
    auto values = initial_values(cnn, init_options{}, 9);
    std::vector<std::vector<float>> momentum;
    for (size_t k = 0; k < values.size(); ++k)
      momentum.push_back(random_values(values[k].size(), 100 + k, -1e-3f, 1e-3f));
    auto part_of = [&](const std::vector<float>& whole, const variable_part& part) {
      auto begin = whole.begin() + part.row_begin * plan.variables[part.variable].cols;
      return std::vector<float>(begin, begin + part.rows * plan.variables[part.variable].cols);
    };
    std::vector<shard_snapshot> snaps(2);
    for (auto& part : plan.parts) { // what each shard's snapshot holds: its parts
      auto offset = static_cast<uint32_t>(part.row_begin * plan.variables[part.variable].cols);
      snaps[part.shard].values.push_back({part.variable, offset, {part_of(values[part.variable], part)}});
      snaps[part.shard].slot0.push_back({part.variable, offset, {part_of(momentum[part.variable], part)}});
    }
    snaps[0].version = snaps[1].version = 1234;
    auto train = *validate(option_values{});
    auto cluster = *validate(cluster_values{});
    optimizer_params opt;
    auto ckpt = make_checkpoint(plan, cnn, opt, train, cluster, {1234, 61700, 12.5, 0.9}, snaps, data_splits{});
    temp_dir dir;
    auto store = checkpoint_store::open(dir.path(), 3);
    BOOST_REQUIRE_MESSAGE(store, error_text(store));
    auto saved = store->save(ckpt);
    BOOST_REQUIRE_MESSAGE(saved, error_text(saved));
    auto loaded = store->load_latest();
    BOOST_REQUIRE_MESSAGE(loaded && *loaded, "nothing loaded");
    auto& back = (*loaded)->ckpt;
    BOOST_TEST(back.manifest.model == cnn.text());
    BOOST_TEST(back.manifest.partitioner == split);
    for (auto& shard : back.shards) // whole variables, in the file of their first part's shard
      for (auto& v : shard.variables) {
        BOOST_TEST(back.manifest.variables[v.index].shard == shard.shard);
        BOOST_TEST(same_bits(v.values, values[v.index]), plan.variables[v.index].name);
      }
    size_t restored = 0;
    for (uint32_t s = 0; s < 2; ++s) {
      shard_setup setup;
      setup.shard = s;
      setup.plan = plan;
      BOOST_REQUIRE(!restore_into(back, setup));
      BOOST_TEST(setup.version == 1234u);
      auto mine = parts_of(plan, s);
      BOOST_REQUIRE_EQUAL(setup.initial.size(), mine.size());
      BOOST_REQUIRE_EQUAL(setup.slot0.size(), mine.size());
      for (size_t i = 0; i < mine.size(); ++i) {
        auto& part = plan.parts[mine[i]];
        BOOST_TEST(setup.initial[i].variable == part.variable);
        BOOST_TEST(same_bits(setup.initial[i].data.to_vector(), part_of(values[part.variable], part)),
                   part_name(plan, mine[i]));
        BOOST_TEST(same_bits(setup.slot0[i].data.to_vector(), part_of(momentum[part.variable], part)),
                   part_name(plan, mine[i]));
        ++restored;
      }
    }
    BOOST_TEST(restored == plan.parts.size());
  }
}

BOOST_AUTO_TEST_CASE(a_cnn_checkpoint_restores_bit_for_bit) {
  check_round_trip("none");
}

BOOST_AUTO_TEST_CASE(a_partitioned_cnn_checkpoint_restores_every_part_bit_for_bit) {
  check_round_trip("fixed:3");
  check_round_trip("max-bytes:20000");
}

BOOST_AUTO_TEST_CASE(a_checkpoint_of_another_partitioning_is_refused_by_name) {
  model_spec cnn;
  cnn.layers = *parse_layers(find_preset("cnn")->layers);
  auto whole = make_placement(cnn.variables(), 2, placement_strategy::round_robin);
  auto values = initial_values(cnn, init_options{}, 9);
  std::vector<shard_snapshot> snaps(2);
  for (uint32_t k = 0; k < values.size(); ++k)
    snaps[whole.parts[k].shard].values.push_back({k, 0, {values[k]}});
  auto ckpt = make_checkpoint(whole, cnn, optimizer_params{}, *validate(option_values{}),
                              *validate(cluster_values{}), {}, snaps, data_splits{});
  shard_setup setup;
  setup.plan = make_placement(cnn.variables(), 2, placement_strategy::round_robin, *parse_partitioner("fixed:2"));
  auto err = restore_into(ckpt, setup);
  BOOST_REQUIRE(err);
  BOOST_TEST(describe(err).find("cluster.partitioner") != std::string::npos, describe(err));
}

BOOST_AUTO_TEST_SUITE_END()
