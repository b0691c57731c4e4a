// Tests of actors/chief_checkpoints: a CNN's variables and optimizer slots go through a checkpoint
// on disk (make_checkpoint, the store, restore_into) and come back bit for bit on every shard;
// the manifest names the model by its input shape and layer list.
#include "actors/chief_checkpoints.hpp"

#include "actors/placement.hpp"
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

BOOST_AUTO_TEST_CASE(a_cnn_checkpoint_restores_bit_for_bit) {
  model_spec cnn;
  cnn.layers = *parse_layers(find_preset("cnn")->layers);
  BOOST_TEST(cnn.text() == "28x28x1: conv 3x3x32 relu, maxpool 2, conv 3x3x64 relu, maxpool 2, "
                                  "dense 128 relu, dense 10");
  auto plan = make_placement(cnn.variables(), 2, placement_strategy::round_robin);
  auto values = initial_values(cnn, init_options{}, 9);
  std::vector<std::vector<float>> momentum;
  for (size_t k = 0; k < values.size(); ++k) // slots unlike the values, with awkward bit patterns
    momentum.push_back(random_values(values[k].size(), 100 + k, -1e-3f, 1e-3f));
  std::vector<shard_snapshot> snaps(2);
  for (uint32_t k = 0; k < values.size(); ++k) {
    auto& snap = snaps[plan.shard_of[k]];
    snap.values.push_back({k, 0, {values[k]}});
    snap.slot0.push_back({k, 0, {momentum[k]}});
  }
  snaps[0].version = snaps[1].version = 1234;
  auto train = *validate(option_values{});
  auto cluster = *validate(cluster_values{});
  optimizer_params opt;
  auto ckpt = make_checkpoint(plan, cnn, opt, train, cluster, {1234, 61700, 12.5, 0.9}, snaps);
  temp_dir dir;
  auto store = checkpoint_store::open(dir.path(), 3);
  BOOST_REQUIRE_MESSAGE(store, error_text(store));
  auto saved = store->save(ckpt);
  BOOST_REQUIRE_MESSAGE(saved, error_text(saved));
  auto loaded = store->load_latest();
  BOOST_REQUIRE_MESSAGE(loaded && *loaded, "nothing loaded");
  BOOST_TEST((*loaded)->ckpt.manifest.model == cnn.text());
  std::vector<bool> seen(values.size(), false);
  for (uint32_t s = 0; s < 2; ++s) {
    shard_setup setup;
    setup.shard = s;
    setup.plan = plan;
    BOOST_REQUIRE(!restore_into((*loaded)->ckpt, setup));
    BOOST_TEST(setup.version == 1234u);
    for (auto& slice : setup.initial) {
      BOOST_TEST(same_bits(slice.data.to_vector(), values[slice.variable]), plan.variables[slice.variable].name);
      seen[slice.variable] = true;
    }
    for (auto& slice : setup.slot0)
      BOOST_TEST(same_bits(slice.data.to_vector(), momentum[slice.variable]), plan.variables[slice.variable].name);
  }
  for (size_t k = 0; k < seen.size(); ++k)
    BOOST_TEST(seen[k], plan.variables[k].name << " was not restored");
}

BOOST_AUTO_TEST_SUITE_END()
