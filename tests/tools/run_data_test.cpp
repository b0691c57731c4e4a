// Tests of tools/run_data: the data set a run's summary.json records, found from the run, its
// model directory or a checkpoint in it; and the class check of an evaluation.
#include "tools/run_data.hpp"

#include "common/errc.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <filesystem>

using namespace actorps;
using namespace actorps::test;

BOOST_AUTO_TEST_SUITE(run_data)

BOOST_AUTO_TEST_CASE(the_runs_data_set_is_found_from_the_run_or_its_models) {
  temp_dir dir;
  std::filesystem::create_directories(dir.file("runs/digits/model/best"));
  const std::string summary = R"({"steps": 10, "data": {"dir": "/data/mnist", "format": "idx", "validation_size": 500}})";
  write_file(dir.file("runs/digits/summary.json"), std::vector<uint8_t>(summary.begin(), summary.end()));
  for (const char* at : {"runs/digits", "runs/digits/model", "runs/digits/model/best"}) {
    auto found = recorded_data(dir.file(at));
    BOOST_TEST_INFO(at);
    BOOST_REQUIRE(found);
    BOOST_TEST(found->dir == "/data/mnist");
    BOOST_TEST((found->format == data_format::idx));
    BOOST_TEST(found->validation_size == 500);
  }
  BOOST_TEST(!recorded_data(dir.file("elsewhere.npz")));
  const std::string old = R"({"steps": 10})"; // (a summary of before the data was recorded)
  write_file(dir.file("runs/digits/summary.json"), std::vector<uint8_t>(old.begin(), old.end()));
  BOOST_TEST(!recorded_data(dir.file("runs/digits")));
}

BOOST_AUTO_TEST_CASE(a_data_set_of_other_classes_is_refused_by_name) {
  const std::vector<std::string> digits{"0", "1", "2"}, clothes{"T-shirt/top", "Trouser", "Pullover"};
  BOOST_TEST(!check_same_classes(digits, "runs/d", digits, "/data/mnist"));
  BOOST_TEST(!check_same_classes(digits, "runs/d", {}, "/data/plain")); // (unnamed: nothing to compare)
  auto err = check_same_classes(digits, "runs/d", clothes, "/data/fashion");
  BOOST_REQUIRE(err);
  BOOST_TEST(err == errc::shape_mismatch);
  BOOST_TEST(describe(err) == "shape_mismatch: runs/d knows the classes 0, 1, 2; /data/fashion has T-shirt/top, Trouser, "
                              "Pullover: another data set (give the model's own with --data.dir)");
}

BOOST_AUTO_TEST_SUITE_END()
