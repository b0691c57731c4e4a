// Tests of saved_model/saved_model: export shapes, checkpoint and .npz round trips of a CNN with
// per-channel scaling, loading by path kind, and model.init-from's matching by name and shape.
#include "saved_model/saved_model.hpp"

#include "checkpoint/checkpoint_store.hpp"
#include "common/errc.hpp"
#include "common/json_reader.hpp"
#include "model/presets.hpp"
#include "data/npz_file.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <map>

using namespace actorps;
using namespace actorps::test;

namespace {

saved_model cnn_model() {
  saved_model m;
  m.spec.input = {8, 8, 3};
  m.spec.layers = *parse_layers({"conv 3x3x4 relu", "maxpool 2", "dropout 0.5", "dense 6 tanh", "dense 3"});
  auto vars = m.spec.variables();
  for (size_t k = 0; k < vars.size(); ++k)
    m.values.push_back(random_values(vars[k].size(), static_cast<uint32_t>(10 + k)));
  m.scaling = {{0.25f, 0.5f, 0.125f}, {0.2f, 0.3f, 0.1f}, 8, 10, 12, true}; // (central 8x8 of 10x12, standardised)
  m.scaling.bigrams = false; // (a text model's words alone: carried whatever the model)
  m.step = 77;
  m.validation_accuracy = 0.625;
  return m;
}

void same_model(const saved_model& a, const saved_model& b) {
  BOOST_TEST((a.spec.input == b.spec.input));
  BOOST_TEST((a.spec.layers == b.spec.layers));
  BOOST_TEST(a.values == b.values);
  BOOST_TEST(a.scaling.mean == b.scaling.mean);
  BOOST_TEST(a.scaling.stddev == b.scaling.stddev);
  BOOST_TEST(a.scaling.crop_size == b.scaling.crop_size);
  BOOST_TEST(a.scaling.source_height == b.scaling.source_height);
  BOOST_TEST(a.scaling.source_width == b.scaling.source_width);
  BOOST_TEST(a.scaling.standardize == b.scaling.standardize);
  BOOST_TEST(a.scaling.bigrams == b.scaling.bigrams);
  BOOST_TEST(a.step == b.step);
  BOOST_TEST(a.validation_accuracy == b.validation_accuracy);
}

} // namespace

BOOST_AUTO_TEST_SUITE(saved_model)

BOOST_AUTO_TEST_CASE(export_shapes_follow_tf) {
  auto m = cnn_model();
  auto shapes = export_shapes(m.spec);
  BOOST_TEST((shapes[0] == std::vector<size_t>{3, 3, 3, 4})); // conv0/weights, HWIO
  BOOST_TEST((shapes[1] == std::vector<size_t>{4}));          // conv0/bias
  BOOST_TEST((shapes[2] == std::vector<size_t>{64, 6}));      // dense0/weights: 4x4x4 in
  BOOST_TEST((shapes[5] == std::vector<size_t>{3}));          // logits/bias
}

BOOST_AUTO_TEST_CASE(checkpoint_and_npz_round_trips) {
  temp_dir dir;
  auto m = cnn_model();
  BOOST_REQUIRE(!write_checkpoint(to_checkpoint(m), dir.file("ckpt")));
  auto from_ckpt = load_saved_model(dir.file("ckpt"));
  BOOST_REQUIRE_MESSAGE(from_ckpt, error_text(from_ckpt));
  same_model(*from_ckpt, m);
  BOOST_TEST(from_ckpt->source == dir.file("ckpt"));
  BOOST_REQUIRE(!export_npz(*from_ckpt, dir.file("m.npz")));
  auto from_npz = load_saved_model(dir.file("m.npz"));
  BOOST_REQUIRE_MESSAGE(from_npz, error_text(from_npz));
  same_model(*from_npz, m);
  BOOST_TEST(weights_digest(from_npz->values) == weights_digest(m.values));
  // the description entry is JSON naming the model, its variables and shapes
  auto arrays = read_npz(dir.file("m.npz"));
  BOOST_REQUIRE(arrays);
  auto json = parse_json(arrays->back().text, "model.json");
  BOOST_REQUIRE_MESSAGE(json, error_text(json));
  BOOST_TEST(arrays->back().name == model_entry);
  BOOST_TEST(json->find("model")->text == m.spec.text());
  BOOST_TEST(json->find("classes")->number == 3.0);
  BOOST_TEST(json->find("layers")->items.size() == 5u);
  BOOST_TEST(json->find("variables")->items[0].find("name")->text == "conv0/weights");
  BOOST_TEST(json->find("variables")->items[0].find("shape")->items.size() == 4u);
}

BOOST_AUTO_TEST_CASE(run_and_model_directories_mean_their_best_model) {
  temp_dir dir;
  auto best = cnn_model();
  auto final_model = cnn_model();
  final_model.values[0][0] += 1.0f;
  std::filesystem::create_directories(dir.file("run/model"));
  BOOST_REQUIRE(!write_checkpoint(to_checkpoint(best), dir.file("run/model/best")));
  BOOST_REQUIRE(!write_checkpoint(to_checkpoint(final_model), dir.file("run/model/final")));
  for (auto path : {dir.file("run"), dir.file("run/model")}) {
    auto m = load_saved_model(path);
    BOOST_REQUIRE_MESSAGE(m, error_text(m));
    BOOST_TEST(m->values == best.values);
    BOOST_TEST(m->source == dir.file("run/model/best"));
  }
  auto f = load_saved_model(dir.file("run/model/final"));
  BOOST_REQUIRE(f);
  BOOST_TEST(f->values == final_model.values);
}

BOOST_AUTO_TEST_CASE(bad_models_are_named) {
  temp_dir dir;
  auto check = [&](const std::string& path, errc code, const std::string& want) {
    auto m = load_saved_model(path);
    BOOST_TEST_INFO(path);
    BOOST_TEST_REQUIRE(!m);
    BOOST_TEST((m.error() == code));
    BOOST_TEST(describe(m.error()).find(want) != std::string::npos, describe(m.error()));
  };
  check(dir.file("absent"), errc::file_error, "no such file or directory");
  std::filesystem::create_directories(dir.file("empty"));
  check(dir.file("empty"), errc::file_error, "neither a checkpoint");
  write_file(dir.file("foreign.bin"), {1, 2, 3, 4, 5});
  check(dir.file("foreign.bin"), errc::corrupt_data, "neither an .npz file nor a checkpoint");
  // an .npz without the description, and one whose array has another shape
  BOOST_REQUIRE(!write_npz({float_array("logits/weights", {784, 10}, std::vector<float>(7840))}, dir.file("bare.npz")));
  check(dir.file("bare.npz"), errc::corrupt_data, "has no model.json");
  auto m = cnn_model();
  BOOST_REQUIRE(!export_npz(m, dir.file("m.npz")));
  auto arrays = *read_npz(dir.file("m.npz"));
  arrays[0].shape = {3, 3, 4, 3}; // conv0/weights with in and out swapped
  BOOST_REQUIRE(!write_npz(arrays, dir.file("swapped.npz")));
  check(dir.file("swapped.npz"), errc::corrupt_data, "conv0/weights has shape 3x3x4x3, the model needs 3x3x3x4");
  arrays = *read_npz(dir.file("m.npz")); // a crop that is not the model's input
  auto& json = arrays.back().text;
  json.replace(json.find("\"crop\": 8"), 9, "\"crop\": 6");
  BOOST_REQUIRE(!write_npz(arrays, dir.file("crop.npz")));
  check(dir.file("crop.npz"), errc::corrupt_data, "scaling.crop 6 is not the model's input (8x8x3)");
  json.replace(json.find("\"crop\": 6"), 9, "\"crop\": 8");
  json.replace(json.find("\"source\": [10, 12]"), 18, "\"source\": [7, 12]");
  BOOST_REQUIRE(!write_npz(arrays, dir.file("source.npz")));
  check(dir.file("source.npz"), errc::corrupt_data, "scaling.source must be the [height, width] of the images the crop of 8");
  // a checkpoint whose shard file was damaged
  BOOST_REQUIRE(!write_checkpoint(to_checkpoint(m), dir.file("ckpt")));
  auto shard = read_text(dir.file("ckpt/shard-0.bin"));
  shard[shard.size() / 2] ^= 1;
  write_file(dir.file("ckpt/shard-0.bin"), {shard.begin(), shard.end()});
  check(dir.file("ckpt"), errc::corrupt_data, "shard-0.bin: checksum mismatch");
}

BOOST_AUTO_TEST_CASE(init_from_matches_by_name_and_shape) {
  temp_dir dir;
  auto m = cnn_model();
  BOOST_REQUIRE(!export_npz(m, dir.file("m.npz")));
  init_options init;
  init.from = dir.file("m.npz");
  auto values = starting_values(m.spec, init, 1);
  BOOST_REQUIRE_MESSAGE(values, error_text(values));
  BOOST_TEST(*values == m.values); // exactly the exported model
  BOOST_REQUIRE(!write_checkpoint(to_checkpoint(m), dir.file("ckpt")));
  init.from = dir.file("ckpt");
  BOOST_TEST(*starting_values(m.spec, init, 1) == m.values);
  // without init.from: the initialiser
  BOOST_TEST(*starting_values(m.spec, init_options{}, 1) == initial_values(m.spec, init_options{}, 1));
  auto refused = [&](const model_spec& spec, const std::string& want) {
    auto v = starting_values(spec, init, 1);
    BOOST_TEST_REQUIRE(!v);
    BOOST_TEST((v.error() == errc::invalid_config));
    BOOST_TEST(describe(v.error()).find(want) != std::string::npos, describe(v.error()));
  };
  init.from = dir.file("m.npz");
  auto wider = m.spec;
  wider.layers[3].units = 7;
  refused(wider, "dense0/weights has shape 64x6, this model's is 64x7");
  auto deeper = m.spec;
  deeper.layers.insert(deeper.layers.begin() + 3, *parse_layer("dense 6 tanh"));
  refused(deeper, "lacks the variable dense1/weights");
  auto shallower = m.spec;
  shallower.layers.erase(shallower.layers.begin() + 3);
  refused(shallower, "logits/weights has shape 6x3, this model's is 64x3");
  // a plain numpy-style archive of arrays (no model.json) is enough, and extra arrays are refused
  auto arrays = *read_npz(dir.file("m.npz"));
  arrays.pop_back();
  BOOST_REQUIRE(!write_npz(arrays, dir.file("plain.npz")));
  init.from = dir.file("plain.npz");
  BOOST_TEST(*starting_values(m.spec, init, 1) == m.values);
  arrays.push_back(float_array("extra/weights", {1}, {0}));
  BOOST_REQUIRE(!write_npz(arrays, dir.file("extra.npz")));
  init.from = dir.file("extra.npz");
  refused(m.spec, "holds extra/weights, which this model does not have");
  init.from = dir.file("absent.npz");
  refused(m.spec, "model.init-from " + dir.file("absent.npz") + ": no such file or directory");
}

// An embedding table exported in parts (--table-parts): the arrays a cluster's ps nodes hold,
// by div (consecutive rows) or mod (every parts-th row); model.json names the split; actorps'
// own tools read a table whole, and say so.
BOOST_AUTO_TEST_CASE(a_table_exports_as_the_parts_a_cluster_holds) {
  actorps::saved_model m;
  m.spec.input = {1, 4, 1};
  m.spec.layers = *parse_layers({"embedding 3 2 mean", "dense 2"});
  for (auto& v : m.spec.variables())
    m.values.push_back(random_values(v.size(), 5));
  temp_dir dir;
  auto rows_of = [&](std::vector<size_t> rows) {
    std::vector<float> out;
    for (size_t r : rows)
      out.insert(out.end(), m.values[0].begin() + 2 * r, m.values[0].begin() + 2 * r + 2);
    return out;
  };
  for (bool mod : {false, true}) {
    const auto path = dir.path() + (mod ? "/mod.npz" : "/div.npz");
    BOOST_REQUIRE(!export_npz(m, path, {3, mod}));
    auto arrays = read_npz(path);
    BOOST_REQUIRE(arrays);
    std::map<std::string, const npy_array*> by_name;
    for (auto& a : *arrays)
      by_name[a.name] = &a;
    BOOST_REQUIRE(by_name.count("embedding0/weights/part_2") == 1);
    BOOST_TEST(by_name.count("embedding0/weights") == 0);
    auto& part1 = *by_name["embedding0/weights/part_1"];
    BOOST_TEST((part1.shape == std::vector<size_t>{3, 2}));
    BOOST_TEST(part1.values == (mod ? rows_of({1, 4, 7}) : rows_of({3, 4, 5})));
    BOOST_TEST(by_name["model.json"]->text.find(mod ? "\"table_partition\": \"mod\"" : "\"table_parts\": 3")
               != std::string::npos);
    auto back = load_saved_model(path);
    BOOST_REQUIRE(!back);
    BOOST_TEST(describe(back.error()).find("exported in parts") != std::string::npos, describe(back.error()));
  }
  BOOST_TEST(static_cast<bool>(export_npz(m, dir.path() + "/x.npz", {9, false}))); // (8 rows)
  BOOST_REQUIRE(!export_npz(m, dir.path() + "/whole.npz"));
  BOOST_TEST(load_saved_model(dir.path() + "/whole.npz")->values == m.values);
}

BOOST_AUTO_TEST_SUITE_END()
