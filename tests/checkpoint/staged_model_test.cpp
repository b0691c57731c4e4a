// Tests of checkpoint/staged_model: a model written a piece at a time is byte for byte the
// checkpoint write_checkpoint writes, reads back, publishes under two names, refuses values
// beyond the model's and a publish before its last value, and leaves no staging folder behind.
#include "checkpoint/staged_model.hpp"

#include "checkpoint/checkpoint_store.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <filesystem>

#include <sys/wait.h>
#include <unistd.h>
#include <fstream>
#include <sstream>

using namespace actorps;
namespace fs = std::filesystem;

namespace {

// A kept model: a 6 x 2 table, a 2 x 3 weight, a 1 x 3 bias (placement single).
checkpoint kept(const std::vector<std::vector<float>>& values, int64_t step) {
  checkpoint c;
  auto& m = c.manifest;
  m.global_step = step;
  m.validation_accuracy = 0.75;
  m.model = "6: embedding 3 2 mean, dense 3";
  m.placement = "single";
  m.variables = {{"embedding0/weights", 6, 2, 0}, {"dense0/weights", 2, 3, 0}, {"dense0/bias", 1, 3, 0}};
  m.mode = "async";
  m.class_names = {"ham", "spam"};
  shard_checkpoint shard;
  for (uint32_t k = 0; k < values.size(); ++k)
    shard.variables.push_back({k, values[k], {}, {}});
  c.shards.push_back(std::move(shard));
  return c;
}

std::string bytes_of(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::vector<std::vector<float>> model_values() {
  return {test::random_values(12, 1), test::random_values(6, 2), test::random_values(3, 3)};
}

// Every value of the model, in pieces of `piece` values across the variables' bounds.
caf::error write_in_pieces(staged_model& m, const std::vector<std::vector<float>>& values, size_t piece) {
  std::vector<float> all;
  for (auto& v : values)
    all.insert(all.end(), v.begin(), v.end());
  for (size_t at = 0; at < all.size(); at += piece)
    if (auto err = m.append(all.data() + at, std::min(piece, all.size() - at)))
      return err;
  return m.finish();
}

} // namespace

BOOST_AUTO_TEST_SUITE(staged_model)

BOOST_AUTO_TEST_CASE(a_model_written_in_pieces_is_the_checkpoint_written_whole) {
  test::temp_dir dir;
  auto values = model_values();
  auto whole = kept(values, 40);
  BOOST_REQUIRE(!write_checkpoint(whole, dir.path() + "/whole"));
  for (size_t piece : {1u, 5u, 100u}) {
    auto staged = actorps::staged_model::open(dir.path(), {12, 6, 3});
    BOOST_REQUIRE(staged);
    BOOST_REQUIRE(!write_in_pieces(**staged, values, piece));
    auto name = cat(dir.path(), "/pieces-", piece);
    BOOST_REQUIRE(!(*staged)->publish(whole.manifest, name));
    BOOST_TEST(bytes_of(name + "/shard-0.bin") == bytes_of(dir.path() + "/whole/shard-0.bin"));
    BOOST_TEST(bytes_of(name + "/manifest.bin") == bytes_of(dir.path() + "/whole/manifest.bin"));
    auto back = read_checkpoint(name);
    BOOST_REQUIRE(back);
    BOOST_TEST(back->shards.at(0).variables.at(0).values == values[0]);
    BOOST_TEST(back->shards.at(0).variables.at(2).values == values[2]);
  }
}

BOOST_AUTO_TEST_CASE(one_file_is_published_under_two_names_with_their_own_manifests) {
  test::temp_dir dir;
  auto values = model_values();
  {
    auto staged = actorps::staged_model::open(dir.path(), {12, 6, 3});
    BOOST_REQUIRE(staged);
    BOOST_REQUIRE(!write_in_pieces(**staged, values, 4));
    auto final_manifest = kept(values, 40).manifest;
    auto best_manifest = kept(values, 30).manifest;
    BOOST_REQUIRE(!(*staged)->publish(final_manifest, dir.path() + "/final"));
    BOOST_REQUIRE(!(*staged)->publish(best_manifest, dir.path() + "/best"));
  }
  auto final_model = read_checkpoint(dir.path() + "/final");
  auto best_model = read_checkpoint(dir.path() + "/best");
  BOOST_REQUIRE(final_model);
  BOOST_REQUIRE(best_model);
  BOOST_TEST(final_model->manifest.global_step == 40);
  BOOST_TEST(best_model->manifest.global_step == 30);
  BOOST_TEST(best_model->shards.at(0).variables.at(1).values == values[1]);
  for (auto& entry : fs::directory_iterator(dir.path())) // the staging folder is gone
    BOOST_TEST(entry.path().filename().string().rfind(".staged-", 0) != 0);
}

BOOST_AUTO_TEST_CASE(values_beyond_the_model_and_a_publish_before_the_last_value_are_refused) {
  test::temp_dir dir;
  auto staged = actorps::staged_model::open(dir.path(), {2, 1});
  BOOST_REQUIRE(staged);
  const float some[4] = {1, 2, 3, 4};
  BOOST_REQUIRE(!(*staged)->append(some, 2));
  BOOST_TEST(((*staged)->finish() == errc::invalid_argument)); // the second variable's value is missing
  BOOST_TEST(((*staged)->publish(kept({}, 1).manifest, dir.path() + "/early") == errc::invalid_argument));
  BOOST_TEST(!fs::exists(dir.path() + "/early"));
  BOOST_TEST(((*staged)->append(some, 2) == errc::invalid_argument)); // one value too many
}

BOOST_AUTO_TEST_CASE(a_folder_a_process_that_no_longer_runs_left_is_removed) {
  test::temp_dir dir;
  int pid = ::fork(); // (a process that has ended: its pid no longer runs)
  if (pid == 0)
    ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  const auto orphan = dir.file(cat(".staged-", pid, "-0"));
  const auto mine = dir.file(cat(".staged-", ::getpid(), "-999"));
  fs::create_directories(orphan);
  fs::create_directories(mine);
  auto staged = actorps::staged_model::open(dir.path(), {1});
  BOOST_REQUIRE(staged);
  BOOST_TEST(!fs::exists(orphan));
  BOOST_TEST(fs::exists(mine)); // (this process's: a model being written)
}

BOOST_AUTO_TEST_CASE(a_folder_that_cannot_be_created_is_named) {
  test::temp_dir dir;
  std::ofstream{dir.path() + "/file"} << "x";
  auto staged = actorps::staged_model::open(dir.path() + "/file", {1});
  BOOST_REQUIRE(!staged);
  BOOST_TEST((staged.error() == errc::file_error));
  BOOST_TEST(describe(staged.error()).find(dir.path() + "/file") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
