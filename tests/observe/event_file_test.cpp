// Tests of observe/event_file and observe/summary_event: the TFRecord framing of every record,
// the file-version record first, a new file per open, and a failed write named.
#include "observe/event_file.hpp"
#include "observe/crc32c.hpp"
#include "observe/summary_event.hpp"

#include "common/errc.hpp"
#include "common/file_io.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

using namespace actorps;
namespace fs = std::filesystem;

namespace {

struct temp_dir {
  fs::path path = fs::temp_directory_path() / ("actorps-events-" + std::to_string(::getpid()));
  temp_dir() { fs::remove_all(path); }
  ~temp_dir() { fs::remove_all(path); }
};

// Splits a TFRecord stream, checking each record's two CRCs; returns the payloads.
std::vector<std::string> read_records(const std::string& bytes) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < bytes.size()) {
    BOOST_REQUIRE(at + 12 <= bytes.size());
    uint64_t n = 0;
    uint32_t crc = 0;
    std::memcpy(&n, bytes.data() + at, 8);
    std::memcpy(&crc, bytes.data() + at + 8, 4);
    BOOST_TEST(crc == masked_crc32c(bytes.data() + at, 8));
    BOOST_REQUIRE(at + 16 + n <= bytes.size());
    std::string body = bytes.substr(at + 12, n);
    std::memcpy(&crc, bytes.data() + at + 12 + n, 4);
    BOOST_TEST(crc == masked_crc32c(body.data(), body.size()));
    out.push_back(body);
    at += 16 + n;
  }
  return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(event_file)

BOOST_AUTO_TEST_CASE(records_are_framed_and_the_file_version_comes_first) {
  temp_dir tmp;
  auto f = actorps::event_file::create((tmp.path / "chief").string());
  BOOST_REQUIRE(f);
  BOOST_TEST(f->path().find("/chief/events.out.tfevents.") != std::string::npos, f->path());
  auto scalars = scalars_event(1.5, 7, {{"validation/accuracy", 0.25}, {"test/loss", 2.0}});
  BOOST_TEST(!f->append(scalars));
  BOOST_TEST(!f->append(text_event(1.5, 0, "config", "| key | value |")));
  auto bytes = read_whole_file(f->path());
  BOOST_REQUIRE(bytes);
  auto records = read_records(*bytes);
  BOOST_REQUIRE(records.size() == 3u);
  BOOST_TEST(records[0].find("brain.Event:2") != std::string::npos);
  BOOST_TEST(records[1] == scalars);
  // the scalar's encoding: tag (field 1) then simple_value (field 2, fixed32) inside Value
  std::string tag = "\x0a\x13validation/accuracy\x15";
  BOOST_TEST(records[1].find(tag) != std::string::npos);
  float quarter = 0.25f;
  BOOST_TEST(records[1].find(tag + std::string(reinterpret_cast<const char*>(&quarter), 4)) != std::string::npos);
}

// Issue 50, item 8: a removed tensorboard/ folder lost every later event without a word (the open
// file descriptor wrote into a deleted file). The file is written again and the log says so once.
BOOST_AUTO_TEST_CASE(a_removed_folder_is_written_again_and_said_once) {
  temp_dir tmp;
  auto f = actorps::event_file::create((tmp.path / "tensorboard" / "chief").string());
  BOOST_REQUIRE(f);
  BOOST_TEST(!f->append(scalars_event(1.0, 1, {{"loss", 1.0}})));
  fs::remove_all(tmp.path / "tensorboard");
  const auto later = scalars_event(2.0, 2, {{"loss", 0.5}});
  std::string said;
  {
    actorps::test::stderr_capture log;
    BOOST_TEST(!f->append(later));
    BOOST_TEST(!f->append(later));
    said = log.text();
  }
  BOOST_TEST(said.find(f->path() + " was removed while the run went on: writing it again (the events before are gone)")
               != std::string::npos, said);
  BOOST_TEST(said.find("was removed") == said.rfind("was removed"), said); // once
  auto bytes = read_whole_file(f->path());
  BOOST_REQUIRE(bytes);
  auto records = read_records(*bytes);
  BOOST_REQUIRE(records.size() == 3u); // a file version first, as TensorBoard's reader wants, then both events
  BOOST_TEST(records[0].find("brain.Event:2") != std::string::npos);
  BOOST_TEST(records[1] == later);
}

BOOST_AUTO_TEST_CASE(each_open_makes_a_new_file_beside_the_old) {
  temp_dir tmp;
  auto a = actorps::event_file::create(tmp.path.string());
  auto b = actorps::event_file::create(tmp.path.string());
  BOOST_REQUIRE(a);
  BOOST_REQUIRE(b);
  BOOST_TEST(a->path() != b->path());
  BOOST_TEST(std::distance(fs::directory_iterator(tmp.path), fs::directory_iterator{}) == 2);
}

BOOST_AUTO_TEST_CASE(a_folder_that_cannot_be_made_is_named) {
  temp_dir tmp;
  fs::create_directories(tmp.path);
  BOOST_REQUIRE(write_file_synced((tmp.path / "file").string(), "x") == caf::none);
  auto f = actorps::event_file::create((tmp.path / "file" / "chief").string());
  BOOST_REQUIRE(!f);
  BOOST_TEST(describe(f.error()).find((tmp.path / "file").string()) != std::string::npos, describe(f.error()));
}

BOOST_AUTO_TEST_CASE(a_full_disk_is_named_once_and_ends_the_file) {
  // the probe: a file-size limit makes the kernel refuse writes past 300 bytes (EFBIG), as a
  // full disk refuses them (ENOSPC)
  temp_dir tmp;
  auto f = actorps::event_file::create(tmp.path.string());
  BOOST_REQUIRE(f);
  rlimit old{};
  ::getrlimit(RLIMIT_FSIZE, &old);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = 300;
  BOOST_REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  caf::error first;
  int failures = 0;
  for (int i = 0; i < 20; ++i)
    if (auto err = f->append(scalars_event(1.0, i, {{"train/loss", 1.0 * i}}))) {
      ++failures;
      first = err;
    }
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  BOOST_TEST(failures == 1); // named once; the file takes nothing after
  BOOST_TEST(describe(first).find(f->path()) != std::string::npos, describe(first));
  auto bytes = read_whole_file(f->path());
  BOOST_REQUIRE(bytes);
  BOOST_TEST(bytes->size() <= 300u);
  BOOST_TEST(read_records(*bytes).size() >= 2u); // whole records only: the version and the first scalars
}

BOOST_AUTO_TEST_CASE(histogram_summaries_carry_their_counts) {
  auto e = histogram_event(2.0, 3, "lag", {{0, 1, 2}, {5, 0, 1}});
  std::string packed_limits;
  for (double v : {0.0, 1.0, 2.0})
    packed_limits.append(reinterpret_cast<const char*>(&v), 8);
  BOOST_TEST(e.find("\x0a\x03lag") != std::string::npos);
  BOOST_TEST(e.find(packed_limits) != std::string::npos);
  double six = 6.0; // num
  BOOST_TEST(e.find(std::string("\x19", 1) + std::string(reinterpret_cast<const char*>(&six), 8)) != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
