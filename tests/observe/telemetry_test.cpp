// Tests of observe/telemetry: scalars go to the event file and the registry; the rate thread
// writes counters' rates at the step gauge's value; no folder, no file.
#include "observe/telemetry.hpp"

#include "common/file_io.hpp"

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <thread>
#include <unistd.h>

using namespace actorps;
namespace fs = std::filesystem;

BOOST_AUTO_TEST_SUITE(telemetry)

BOOST_AUTO_TEST_CASE(scalars_reach_both_sinks_and_rates_are_written) {
  auto dir = fs::temp_directory_path() / ("actorps-telemetry-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  telemetry_settings s{"r", "ps", 1, (dir / "ps-1").string(), std::chrono::milliseconds(50)};
  auto t = actorps::telemetry::open(s);
  BOOST_REQUIRE(t);
  (*t)->scalars(10, {{"train/loss", 0.5}});
  BOOST_TEST((*t)->metrics().value("actorps_train_loss") == 0.5);
  (*t)->metrics().set("actorps_shard_version", 42);
  (*t)->metrics().add("actorps_shard_updates_total", 100);
  (*t)->write_rates({{"actorps_shard_updates_total", "shard/updates_per_sec"}}, "actorps_shard_version");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto path = (*t)->event_path();
  t->reset(); // stops the rate thread
  auto bytes = read_whole_file(path);
  BOOST_REQUIRE(bytes);
  BOOST_TEST(bytes->find("train/loss") != std::string::npos);
  BOOST_TEST(bytes->find("shard/updates_per_sec") != std::string::npos);
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(without_a_folder_only_the_registry) {
  auto t = actorps::telemetry::open({"r", "worker", 0, "", std::chrono::milliseconds(1000)});
  BOOST_REQUIRE(t);
  BOOST_TEST((*t)->event_path().empty());
  (*t)->scalars(1, {{"examples/sec", 10}});
  BOOST_TEST((*t)->metrics().value("actorps_examples_per_second") == 10.0);
}

BOOST_AUTO_TEST_SUITE_END()
