// Tests of checkpoint/checkpoint_store: a checkpoint reads back exactly; only the newest K are
// kept and the best apart; a corrupt or truncated newest checkpoint is named and the previous
// one loaded; a leftover temporary directory is ignored; another model's checkpoint is refused.
#include "checkpoint/checkpoint_store.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cereal/archives/binary.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/vector.hpp>
#include <zlib.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace actorps;

namespace {

// Two shards: "w" (3 x 4, momentum slot) on shard 0, "b" (1 x 4) on shard 1; values depend on step.
checkpoint sample(int64_t step) {
  checkpoint c;
  auto& m = c.manifest;
  m.global_step = step;
  m.examples = step * 50;
  m.model = "3-4 elu";
  m.placement = "round-robin";
  m.variables = {{"w", 3, 4, 0}, {"b", 1, 4, 1}};
  m.optimizer = {"momentum", 0.01f, 0.9f, 0.9f, 0.999f, 1e-8f, 1.0f, 1000};
  m.mode = "async";
  m.batch_size = 50;
  m.seed = 7;
  m.workers = 2;
  m.members = {0, 3};
  m.data_plan = {1, 9, 600, 0};
  m.class_names = {"T-shirt/top", "Ankle boot"};
  auto w = test::random_values(12, static_cast<uint32_t>(step));
  c.shards.push_back({checkpoint_format_version, 0, static_cast<uint64_t>(step), {{0, w, w, {}}}});
  c.shards.push_back({checkpoint_format_version, 1, static_cast<uint64_t>(step), {{1, {1, 2, 3, float(step)}, {}, {}}}});
  return c;
}

void flip_byte(const std::string& path, long at) {
  std::fstream f{path, std::ios::in | std::ios::out | std::ios::binary};
  f.seekg(at);
  char c = 0;
  f.get(c);
  f.seekp(at);
  f.put(static_cast<char>(c ^ 0x5a));
}

struct fixture {
  test::temp_dir tmp;
  checkpoint_store store = *checkpoint_store::open(tmp.file("ckpt"), 3);
};

} // namespace

// (in a namespace: the suite's name is also the class's)
namespace checkpoint_tests {

BOOST_FIXTURE_TEST_SUITE(checkpoint_store, fixture)

BOOST_AUTO_TEST_CASE(a_checkpoint_reads_back_exactly) {
  auto c = sample(1200);
  auto path = store.save(c);
  BOOST_REQUIRE_MESSAGE(path, test::error_text(path));
  BOOST_TEST(*path == tmp.file("ckpt") + "/ckpt-000000001200");
  auto got = store.load_latest();
  BOOST_REQUIRE_MESSAGE(got, test::error_text(got));
  BOOST_REQUIRE(got->has_value());
  auto& back = (*got)->ckpt;
  BOOST_TEST(back.manifest.global_step == 1200);
  BOOST_TEST(back.manifest.examples == 60000);
  BOOST_TEST(back.manifest.optimizer.momentum == 0.9f);
  BOOST_TEST(back.manifest.files.size() == 2u);
  BOOST_TEST(back.manifest.members == std::vector<uint32_t>({0, 3}), boost::test_tools::per_element());
  BOOST_TEST(back.manifest.data_plan == std::vector<int64_t>({1, 9, 600, 0}), boost::test_tools::per_element());
  BOOST_TEST((back.manifest.class_names == std::vector<std::string>{"T-shirt/top", "Ankle boot"}));
  BOOST_TEST(back.shards[0].variables[0].values == c.shards[0].variables[0].values);
  BOOST_TEST(back.shards[0].variables[0].slot0 == c.shards[0].variables[0].slot0);
  BOOST_TEST(back.shards[1].variables[0].values == c.shards[1].variables[0].values);
  BOOST_TEST((*got)->skipped.empty());
}

// Issue 50, item 18: the run folder deleted mid-run made every later save fail (25 times) while the
// log said the previous checkpoints were intact, though they went with the folder. The store
// creates its directory again and says truthfully what is gone; a later save reads back.
BOOST_AUTO_TEST_CASE(a_removed_directory_is_created_again_and_the_loss_said) {
  BOOST_REQUIRE(store.save(sample(100)));
  std::filesystem::remove_all(tmp.file("ckpt"));
  std::string said;
  {
    test::stderr_capture log;
    BOOST_REQUIRE(store.save(sample(200)));
    said = log.text();
  }
  BOOST_TEST(said.find(tmp.file("ckpt") + " was removed while the run went on: created it again; the checkpoints saved in it "
                       "before are gone") != std::string::npos, said);
  BOOST_TEST(store.list().size() == 1u);
  BOOST_TEST((*store.load_latest())->ckpt.manifest.global_step == 200);
  { // once: the next save says nothing
    test::stderr_capture log;
    BOOST_REQUIRE(store.save(sample(300)));
    BOOST_TEST(log.text().empty(), log.text());
  }
}

// A shard file larger than its 1 MiB write blocks reads back exactly (the file is written as it
// is serialised, its CRC-32 kept on the way).
BOOST_AUTO_TEST_CASE(a_shard_file_of_several_blocks_reads_back_exactly) {
  auto c = sample(5);
  c.manifest.variables[0] = {"w", 3000, 200, 0}; // (2.4 MB of values, as much of momentum)
  c.shards[0].variables[0].values = test::random_values(3000 * 200, 11);
  c.shards[0].variables[0].slot0 = test::random_values(3000 * 200, 12);
  auto path = store.save(c);
  BOOST_REQUIRE_MESSAGE(path, test::error_text(path));
  auto got = store.load_latest();
  BOOST_REQUIRE_MESSAGE(got, test::error_text(got));
  BOOST_REQUIRE(got->has_value());
  BOOST_TEST((*got)->ckpt.shards[0].variables[0].values == c.shards[0].variables[0].values);
  BOOST_TEST((*got)->ckpt.shards[0].variables[0].slot0 == c.shards[0].variables[0].slot0);
  BOOST_TEST((*got)->ckpt.manifest.files[0].bytes > (size_t{4} << 20));
}

// The probe of a full disk: a file-size limit makes the kernel refuse writes past 2 MiB (EFBIG,
// as ENOSPC would). The save fails naming the shard file, and the checkpoint before it stays the
// newest, whole.
BOOST_AUTO_TEST_CASE(a_full_disk_fails_the_save_by_name_and_keeps_the_last_checkpoint) {
  BOOST_REQUIRE(store.save(sample(100)));
  auto big = sample(200);
  big.manifest.variables[0] = {"w", 3000, 200, 0};
  big.shards[0].variables[0].values = test::random_values(3000 * 200, 13);
  big.shards[0].variables[0].slot0 = test::random_values(3000 * 200, 14);
  rlimit old{};
  ::getrlimit(RLIMIT_FSIZE, &old);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = 2 << 20;
  BOOST_REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  auto saved = store.save(big);
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  BOOST_REQUIRE(!saved);
  BOOST_TEST(saved.error() == errc::file_error);
  BOOST_TEST(test::error_text(saved).find("shard-0.bin") != std::string::npos, test::error_text(saved));
  auto got = store.load_latest();
  BOOST_REQUIRE_MESSAGE(got, test::error_text(got));
  BOOST_REQUIRE(got->has_value());
  BOOST_TEST((*got)->ckpt.manifest.global_step == 100);
  BOOST_TEST((*got)->skipped.empty());
}

BOOST_AUTO_TEST_CASE(no_checkpoint_is_not_an_error) {
  auto got = store.load_latest();
  BOOST_REQUIRE(got);
  BOOST_TEST(!got->has_value());
}

BOOST_AUTO_TEST_CASE(the_newest_k_are_kept_and_the_best_apart) {
  BOOST_REQUIRE(store.save_best(sample(100)));
  for (int64_t step : {100, 200, 300, 400, 500})
    BOOST_REQUIRE(store.save(sample(step)));
  auto all = store.list();
  BOOST_REQUIRE_EQUAL(all.size(), 3u);
  BOOST_TEST(all.front() == tmp.file("ckpt") + "/ckpt-000000000300");
  BOOST_TEST((*store.load_latest())->ckpt.manifest.global_step == 500);
  BOOST_TEST((*store.load_best())->ckpt.manifest.global_step == 100); // untouched by retention
  BOOST_REQUIRE(store.save_best(sample(400)));
  BOOST_TEST(store.list(true).size() == 1u);
  BOOST_TEST((*store.load_best())->ckpt.manifest.global_step == 400);
}

BOOST_AUTO_TEST_CASE(a_corrupt_newest_checkpoint_is_named_and_the_previous_one_used) {
  BOOST_REQUIRE(store.save(sample(100)));
  auto newest = *store.save(sample(200));
  flip_byte(newest + "/shard-0.bin", 20);
  auto got = store.load_latest();
  BOOST_REQUIRE_MESSAGE(got, test::error_text(got));
  BOOST_TEST((*got)->ckpt.manifest.global_step == 100);
  BOOST_REQUIRE_EQUAL((*got)->skipped.size(), 1u);
  BOOST_TEST((*got)->skipped[0].find(newest + "/shard-0.bin: checksum mismatch") != std::string::npos,
             (*got)->skipped[0]);
}

// A checkpoint verified on disk (what a chief restores from): the same checks, no values held,
// and every array found where read_floats reads it back exactly.
BOOST_AUTO_TEST_CASE(a_checkpoint_verified_on_disk_finds_every_array) {
  BOOST_REQUIRE(store.save(sample(100)));
  auto newest = *store.save(sample(200));
  auto want = sample(200);
  auto disk = verify_checkpoint(newest);
  BOOST_REQUIRE_MESSAGE(disk, test::error_text(disk));
  BOOST_TEST(disk->manifest.global_step == 200);
  BOOST_REQUIRE_EQUAL(disk->files.size(), 2u);
  for (uint32_t s = 0; s < 2; ++s) {
    BOOST_TEST(disk->files[s].version == 200u);
    BOOST_REQUIRE_EQUAL(disk->files[s].entries.size(), 1u);
    auto& e = disk->files[s].entries[0];
    auto& v = want.shards[s].variables[0];
    BOOST_TEST(e.index == v.index);
    BOOST_TEST(e.slot0.count == v.slot0.size());
    BOOST_TEST(e.slot1.count == 0u);
    std::vector<float> values(e.values.count), slot0(e.slot0.count);
    auto file = newest + cat("/shard-", s, ".bin");
    BOOST_REQUIRE(!read_floats(file, e.values.offset, values.data(), values.size()));
    BOOST_REQUIRE(!read_floats(file, e.slot0.offset, slot0.data(), slot0.size()));
    BOOST_TEST(values == v.values);
    BOOST_TEST(slot0 == v.slot0);
    std::vector<float> past(values.size() + 1000); // (more than the file holds after the offset)
    BOOST_TEST((read_floats(file, e.values.offset, past.data(), past.size()) == errc::file_error));
  }
  flip_byte(newest + "/shard-1.bin", 20);
  std::vector<std::string> skipped;
  auto found = store.find_latest(skipped);
  BOOST_REQUIRE(found && *found);
  BOOST_TEST((*found)->manifest.global_step == 100);
  BOOST_REQUIRE_EQUAL(skipped.size(), 1u);
  BOOST_TEST(skipped[0].find(newest + "/shard-1.bin: checksum mismatch") != std::string::npos, skipped[0]);
}

BOOST_AUTO_TEST_CASE(truncated_files_are_named) {
  BOOST_REQUIRE(store.save(sample(100)));
  auto newest = *store.save(sample(200));
  std::filesystem::resize_file(newest + "/shard-1.bin", 10);
  auto got = store.load_latest();
  BOOST_REQUIRE(got);
  BOOST_TEST((*got)->ckpt.manifest.global_step == 100);
  BOOST_TEST((*got)->skipped[0].find("shard-1.bin: 10 bytes, the manifest says") != std::string::npos, (*got)->skipped[0]);
  // a truncated manifest
  auto third = *store.save(sample(300));
  std::filesystem::resize_file(third + "/manifest.bin", 30);
  got = store.load_latest();
  BOOST_REQUIRE(got);
  BOOST_TEST((*got)->ckpt.manifest.global_step == 100);
  BOOST_TEST((*got)->skipped[0].find("manifest.bin: truncated") != std::string::npos, (*got)->skipped[0]);
  // a missing shard file (keep 3: the 100 is gone now, so nothing verifies)
  BOOST_REQUIRE(store.save(sample(400)));
  std::filesystem::remove(tmp.file("ckpt") + "/ckpt-000000000400/shard-0.bin");
  got = store.load_latest();
  BOOST_REQUIRE(!got);
  auto text = describe(got.error());
  for (auto step : {"400/shard-0.bin: cannot be read", "300/manifest.bin", "200/shard-1.bin"})
    BOOST_TEST(text.find(step) != std::string::npos, text);
}

// A fuzzer's damaged copies of a checkpoint's manifest and of a shard file (tests/support's
// damaged_copies): each checkpoint reads or is refused naming the damaged file, none crashes or
// throws (actorps-predict read 400 such copies of a run's model by hand first).
BOOST_AUTO_TEST_CASE(damaged_copies_of_its_files_are_read_or_refused_by_name) {
  const auto dir = *store.save(sample(100));
  uint64_t seed = 11;
  for (auto name : {"/manifest.bin", "/shard-0.bin"}) {
    const auto path = dir + name;
    const auto good = test::read_bytes(path);
    const auto refused = test::read_damaged(good, path, seed++, 300, [&](const std::string&) { return read_checkpoint(dir); });
    BOOST_TEST(refused > 250u, name); // (the checksums catch nearly every change)
    test::write_file(path, good);
  }
  BOOST_TEST(static_cast<bool>(read_checkpoint(dir)));
}

BOOST_AUTO_TEST_CASE(when_nothing_verifies_every_checkpoint_is_named) {
  auto only = *store.save(sample(100));
  flip_byte(only + "/manifest.bin", 0);
  auto got = store.load_latest();
  BOOST_REQUIRE(!got);
  BOOST_TEST(got.error() == errc::corrupt_data);
  BOOST_TEST(describe(got.error()).find(only + "/manifest.bin: not an actorps checkpoint manifest") != std::string::npos,
             describe(got.error()));
}

BOOST_AUTO_TEST_CASE(a_leftover_temporary_directory_is_ignored) {
  BOOST_REQUIRE(store.save(sample(100)));
  std::filesystem::create_directory(tmp.file("ckpt") + "/ckpt-000000000200.tmp-999"); // a crash mid-write
  BOOST_TEST(store.list().size() == 1u);
  BOOST_TEST((*store.load_latest())->ckpt.manifest.global_step == 100);
}

// Issue 11, item 8: a save killed mid-write left its .tmp-<pid> folder behind for good.
BOOST_AUTO_TEST_CASE(unfinished_saves_of_dead_processes_are_removed_on_open) {
  pid_t child = ::fork();
  if (child == 0)
    ::_exit(0);
  ::waitpid(child, nullptr, 0); // a pid that no longer runs
  auto dead = tmp.file("ckpt") + "/ckpt-000000000200.tmp-" + std::to_string(child);
  auto live = tmp.file("ckpt") + "/best-000000000300.tmp-" + std::to_string(::getpid());
  std::filesystem::create_directory(dead);
  std::filesystem::create_directory(live);
  BOOST_REQUIRE(actorps::checkpoint_store::open(tmp.file("ckpt"), 3));
  BOOST_TEST(!std::filesystem::exists(dead));
  BOOST_TEST(std::filesystem::exists(live)); // a save in progress
}

BOOST_AUTO_TEST_CASE(a_shard_file_of_other_variables_is_refused) {
  auto c = sample(100);
  c.shards[1].variables[0].index = 0; // shard 1 claims shard 0's variable
  auto path = *store.save(c);
  auto got = read_checkpoint(path);
  BOOST_REQUIRE(!got);
  BOOST_TEST(describe(got.error()).find("shard-1.bin") != std::string::npos, describe(got.error()));
}

BOOST_AUTO_TEST_CASE(another_models_checkpoint_is_refused_by_name) {
  auto c = sample(100);
  BOOST_TEST(!check_same_model(c.manifest, "3-4 elu", c.manifest.variables, "p"));
  auto other = c.manifest.variables;
  other[0].rows = 5;
  auto err = check_same_model(c.manifest, "5-4 elu", other, "/runs/x/ckpt-000000000100");
  BOOST_TEST(err == errc::invalid_config);
  BOOST_TEST(describe(err).find("checkpoint /runs/x/ckpt-000000000100 is of another model") != std::string::npos,
             describe(err));
  BOOST_TEST(!actorps::checkpoint_store::open(tmp.file("k"), 0)); // keep >= 1
}

// Checkpoints as earlier builds wrote them: format 1 (no input scaling after the files) and
// format 5 (no input crop or standardisation) read, and are written again in this format.
BOOST_AUTO_TEST_CASE(older_formats_still_read) {
  for (uint32_t format : {1u, 5u}) {
    BOOST_TEST_CONTEXT("format " << format) {
      auto c = sample(5);
      c.manifest.format = format;
      c.manifest.input_crop = 7; // (not written by these formats: read back as 0)
      auto dir = tmp.file("v" + std::to_string(format));
      std::filesystem::create_directories(dir);
      auto bytes_of = [](const auto& x) {
        std::ostringstream os{std::ios::binary};
        {
          cereal::BinaryOutputArchive ar{os};
          ar(x);
        }
        return os.str();
      };
      auto crc = [](const std::string& b) {
        return static_cast<uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(b.data()), static_cast<uInt>(b.size())));
      };
      for (uint32_t s = 0; s < 2; ++s) {
        c.shards[s].format = format;
        auto b = bytes_of(c.shards[s]);
        std::ofstream{dir + "/shard-" + std::to_string(s) + ".bin", std::ios::binary} << b;
        c.manifest.files.push_back({s, "shard-" + std::to_string(s) + ".bin", b.size(), crc(b)});
      }
      auto payload = bytes_of(c.manifest);
      uint32_t sum = crc(payload);
      uint64_t length = payload.size();
      std::ofstream m{dir + "/manifest.bin", std::ios::binary};
      m.write("APSCKPT1", 8);
      m.write(reinterpret_cast<const char*>(&sum), 4);
      m.write(reinterpret_cast<const char*>(&length), 8);
      m << payload;
      m.close();
      auto read = read_checkpoint(dir);
      BOOST_REQUIRE_MESSAGE(read, test::error_text(read));
      BOOST_TEST(read->manifest.format == format);
      BOOST_TEST(read->manifest.input_mean.empty());
      BOOST_TEST(read->manifest.input_crop == 0);
      BOOST_TEST(!read->manifest.input_standardize);
      BOOST_TEST(read->manifest.input_bigrams); // (before format 7: words and bigrams)
      BOOST_TEST(read->shards[0].variables[0].values == c.shards[0].variables[0].values);
      // written again, it is this format, crop and standardisation included
      read->manifest.input_crop = 24;
      read->manifest.input_source_height = 28;
      read->manifest.input_source_width = 30;
      read->manifest.input_standardize = true;
      read->manifest.input_bigrams = false;
      BOOST_REQUIRE(!write_checkpoint(*read, dir + "-again"));
      auto again = read_checkpoint(dir + "-again");
      BOOST_REQUIRE_MESSAGE(again, test::error_text(again));
      BOOST_TEST(again->manifest.format == checkpoint_format_version);
      BOOST_TEST(again->manifest.input_crop == 24);
      BOOST_TEST(again->manifest.input_source_height == 28);
      BOOST_TEST(again->manifest.input_source_width == 30);
      BOOST_TEST(again->manifest.input_standardize);
      BOOST_TEST(!again->manifest.input_bigrams);
      BOOST_TEST(again->shards[1].variables[0].values == c.shards[1].variables[0].values);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace checkpoint_tests
