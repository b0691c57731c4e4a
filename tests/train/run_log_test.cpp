// Tests of train/run_log: folder creation, metrics lines, atomic summary, unwritable paths.
#include "train/run_log.hpp"

#include "common/errc.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <sys/stat.h>

using namespace actorps;
using namespace actorps::test;

BOOST_AUTO_TEST_SUITE(run_log)

BOOST_AUTO_TEST_CASE(writes_metrics_lines_and_summary) {
  temp_dir dir;
  auto log = actorps::run_log::open(dir.file("runs/deep"), "exp1");
  BOOST_REQUIRE_MESSAGE(log, error_text(log));
  BOOST_TEST(log->dir() == dir.file("runs/deep/exp1"));
  BOOST_TEST(!log->append_metrics(json_object{}.add("step", 1)));
  BOOST_TEST(!log->append_metrics(json_object{}.add("step", 2)));
  BOOST_TEST(read_text(dir.file("runs/deep/exp1/metrics.jsonl")) == "{\"step\": 1}\n{\"step\": 2}\n");
  BOOST_TEST(!log->write_summary(json_object{}.add("test_accuracy", 0.5)));
  BOOST_TEST(read_text(dir.file("runs/deep/exp1/summary.json")) == "{\"test_accuracy\": 0.5}\n");
  struct stat st;
  BOOST_TEST(::stat(dir.file("runs/deep/exp1/summary.json.tmp").c_str(), &st) != 0);
}

// Issue 32, item 8: a run folder deleted mid-run lost metrics.jsonl without a log line (rows
// went to the unlinked file). The next row finds it gone, says so, and writes it again; the
// summary lands in the recreated folder.
BOOST_AUTO_TEST_CASE(a_run_folder_deleted_mid_run_is_recreated) {
  temp_dir dir;
  auto log = actorps::run_log::open(dir.file("runs"), "exp");
  BOOST_REQUIRE_MESSAGE(log, error_text(log));
  BOOST_TEST(!log->append_metrics(json_object{}.add("step", 1)));
  BOOST_REQUIRE(std::system(("rm -rf '" + dir.file("runs/exp") + "'").c_str()) == 0);
  BOOST_TEST(!log->append_metrics(json_object{}.add("step", 2)));
  BOOST_TEST(read_text(dir.file("runs/exp/metrics.jsonl")) == "{\"step\": 2}\n");
  BOOST_TEST(!log->write_summary(json_object{}.add("steps", 2)));
  BOOST_TEST(read_text(dir.file("runs/exp/summary.json")) == "{\"steps\": 2}\n");
}

BOOST_AUTO_TEST_CASE(a_file_in_the_way_is_a_named_error) {
  temp_dir dir;
  write_file(dir.file("runs"), {1});
  auto log = actorps::run_log::open(dir.file("runs"), "x");
  BOOST_REQUIRE(!log);
  BOOST_TEST(log.error() == actorps::errc::file_error);
  BOOST_TEST(describe(log.error()).find(dir.file("runs")) != std::string::npos, describe(log.error()));
}

// Issue 11, item 5: a second process started by mistake with the same run must not touch the
// running one's files (it truncated metrics.jsonl with "w" before failing).
BOOST_AUTO_TEST_CASE(a_folder_in_use_is_refused_and_left_alone) {
  temp_dir dir;
  auto first = actorps::run_log::open(dir.file("runs"), "r");
  BOOST_REQUIRE_MESSAGE(first, error_text(first));
  BOOST_TEST(!first->append_metrics(json_object{}.add("step", 1)));
  auto second = actorps::run_log::open(dir.file("runs"), "r");
  BOOST_REQUIRE(!second);
  BOOST_TEST(describe(second.error()) == "file_error: " + dir.file("runs/r")
                                           + " is in use by another running process (a chief or trainer with the "
                                             "same train.name); its files are left alone");
  BOOST_TEST(read_text(dir.file("runs/r/metrics.jsonl")) == "{\"step\": 1}\n");
  first = caf::error{}; // the first run ends: the folder is free again, and a resumed run appends
  auto resumed = actorps::run_log::open(dir.file("runs"), "r", true);
  BOOST_REQUIRE_MESSAGE(resumed, error_text(resumed));
  BOOST_TEST(!resumed->append_metrics(json_object{}.add("step", 2)));
  BOOST_TEST(read_text(dir.file("runs/r/metrics.jsonl")) == "{\"step\": 1}\n{\"step\": 2}\n");
}

BOOST_AUTO_TEST_SUITE_END()
