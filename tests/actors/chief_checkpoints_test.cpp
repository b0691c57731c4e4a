// Tests of actors/chief_checkpoints: a CNN's variables and optimizer slots go through a checkpoint
// on disk (make_checkpoint, the store, restore_into) and come back bit for bit on every shard;
// the manifest names the model by its input shape and layer list.
#include "actors/chief_checkpoints.hpp"
#include "tests/support/checkpoint_assembly.hpp"

#include "control/placement.hpp"
#include "checkpoint/checkpoint_store.hpp"
#include "model/init.hpp"
#include "model/presets.hpp"
#include "common/log.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <cstring>

using namespace actorps;
using namespace actorps::test;

namespace {

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// c written into dir and verified there: what a chief restores from (its values on disk).
checkpoint_on_disk on_disk(const checkpoint& c, const temp_dir& dir) {
  auto path = dir.file(cat("ckpt-", c.manifest.global_step));
  BOOST_REQUIRE(!write_checkpoint(c, path));
  auto found = verify_checkpoint(path);
  BOOST_REQUIRE_MESSAGE(found, error_text(found));
  return *found;
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
    auto found = verify_checkpoint((*loaded)->path);
    BOOST_REQUIRE_MESSAGE(found, error_text(found));
    for (uint32_t s = 0; s < 2; ++s) {
      shard_setup setup;
      setup.shard = s;
      setup.plan = plan;
      BOOST_REQUIRE(!restore_into(*found, setup));
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

// A table split by mod: its parts store every third row; a checkpoint holds the table's rows in
// order, and restoring cuts each part's rows again (so a run split by div restores it too).
BOOST_AUTO_TEST_CASE(a_table_split_by_mod_is_checkpointed_in_row_order) {
  model_spec text;
  text.input = {1, 4, 1};
  text.layers = *parse_layers({"embedding 3 2 mean", "dense 2"});
  auto plan = make_placement(text.variables(), 3, placement_strategy::round_robin, {}, "mod");
  BOOST_REQUIRE(check_parts(plan).empty());
  std::vector<float> table(8 * 2); // row r holds r, r + 0.5
  for (size_t r = 0; r < 8; ++r)
    table[2 * r] = float(r), table[2 * r + 1] = float(r) + 0.5f;
  std::vector<shard_snapshot> snaps(3);
  for (auto& part : plan.parts) {
    std::vector<float> stored;
    const uint32_t offset = static_cast<uint32_t>(part.row_begin) * plan.variables[part.variable].cols;
    if (part.variable == 0) // (what the shard holds: rows j, j + 3, ...)
      for (int i = 0; i < part.rows; ++i)
        for (int c = 0; c < 2; ++c)
          stored.push_back(table[2 * table_row(plan, 0, static_cast<uint32_t>(part.row_begin + i)) + c]);
    else
      stored.assign(static_cast<size_t>(part.rows) * plan.variables[part.variable].cols, 1.0f);
    snaps[part.shard].values.push_back({part.variable, offset, {stored}});
  }
  auto ckpt = make_checkpoint(plan, text, optimizer_params{}, *validate(option_values{}), *validate(cluster_values{}),
                              {7, 350, 1.0, 0.5}, snaps, data_splits{});
  const checkpoint_variable_state* saved = nullptr;
  for (auto& shard : ckpt.shards)
    for (auto& v : shard.variables)
      if (v.index == 0)
        saved = &v;
  BOOST_REQUIRE(saved != nullptr);
  BOOST_TEST(same_bits(saved->values, table)); // the rows in order
  temp_dir dir;
  auto disk = on_disk(ckpt, dir);
  shard_setup setup;
  setup.shard = 1;
  setup.plan = plan;
  BOOST_REQUIRE(!restore_into(disk, setup));
  BOOST_REQUIRE(!setup.initial.empty());
  BOOST_TEST(setup.initial[0].data.to_vector() == std::vector<float>({1.0f, 1.5f, 4.0f, 4.5f, 7.0f, 7.5f}));
  auto by_div = make_placement(text.variables(), 3, placement_strategy::round_robin, {}, "div");
  setup.plan = by_div;
  BOOST_REQUIRE(!restore_into(disk, setup));
  BOOST_TEST(setup.initial[0].data.to_vector() == std::vector<float>({3.0f, 3.5f, 4.0f, 4.5f, 5.0f, 5.5f}));
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
  temp_dir dir;
  auto err = restore_into(on_disk(ckpt, dir), setup);
  BOOST_REQUIRE(err);
  BOOST_TEST(describe(err).find("cluster.partitioner") != std::string::npos, describe(err));
}

BOOST_AUTO_TEST_SUITE_END()
