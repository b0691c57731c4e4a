// Tests of config/cpu_list: node.cpus in Linux's CPU-list form, parsed, written back and
// checked against the CPUs a process may use; anything else refused naming the key.
#include "config/cpu_list.hpp"

#include "common/errc.hpp"
#include "config/cluster_options.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(cpu_list)

BOOST_AUTO_TEST_CASE(lists_ranges_and_repeats_parse_to_ascending_cpus) {
  BOOST_TEST(parse_cpu_list("").value().empty());
  BOOST_TEST(parse_cpu_list("3").value() == (std::vector<int>{3}), boost::test_tools::per_element());
  BOOST_TEST(parse_cpu_list("4-5,0,2-3,0").value() == (std::vector<int>{0, 2, 3, 4, 5}), boost::test_tools::per_element());
  BOOST_TEST(parse_cpu_list("1023").value() == (std::vector<int>{1023}), boost::test_tools::per_element());
  BOOST_TEST(cpu_list_text({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8");
  BOOST_TEST(cpu_list_text({}) == "");
  BOOST_TEST(cpu_list_text(parse_cpu_list("6,0-1,3").value()) == "0-1,3,6");
}

BOOST_AUTO_TEST_CASE(anything_else_is_refused_naming_the_key) {
  for (const char* bad : {"a", "0-a", "3-1", "-1", "0,,1", "0,", ",0", "1024", "0 1", "0-", "12345"}) {
    auto got = parse_cpu_list(bad);
    BOOST_REQUIRE_MESSAGE(!got, "\"" << bad << "\" was taken");
    BOOST_TEST(got.error() == errc::invalid_config);
    BOOST_TEST(describe(got.error()).find("node.cpus") != std::string::npos, describe(got.error()));
  }
}

BOOST_AUTO_TEST_CASE(a_cpu_the_process_may_not_use_is_refused_saying_which_it_may) {
  BOOST_TEST(!check_cpus_allowed({0, 2}, {0, 1, 2, 3}));
  auto err = check_cpus_allowed({1, 5}, {0, 1, 2, 3});
  BOOST_REQUIRE(err);
  BOOST_TEST(describe(err).find("names CPU 5") != std::string::npos, describe(err));
  BOOST_TEST(describe(err).find("allowed: 0-3") != std::string::npos, describe(err));
}

BOOST_AUTO_TEST_CASE(node_cpus_reaches_the_cluster_settings) {
  cluster_values v;
  v.cpus = "1,0";
  auto s = validate(v);
  BOOST_REQUIRE_MESSAGE(s, actorps::test::error_text(s));
  BOOST_TEST(s->cpus == (std::vector<int>{0, 1}), boost::test_tools::per_element());
  v.cpus = "one";
  auto bad = validate(v);
  BOOST_REQUIRE(!bad);
  BOOST_TEST(describe(bad.error()).find("node.cpus") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
