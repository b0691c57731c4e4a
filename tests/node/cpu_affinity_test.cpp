// Tests of node/cpu_affinity: a thread pinned to one of its CPUs runs there alone, and so do the
// threads it starts; a CPU it may not use is refused naming node.cpus, its CPUs unchanged. Each
// case pins a thread of its own, so the test process keeps its CPUs.
#include "node/cpu_affinity.hpp"

#include "common/errc.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <thread>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(cpu_affinity)

BOOST_AUTO_TEST_CASE(a_pinned_thread_and_the_threads_it_starts_run_on_its_cpus) {
  const auto all = allowed_cpus();
  BOOST_REQUIRE(!all.empty());
  const std::vector<int> one{all.back()};
  std::vector<int> pinned, inherited;
  caf::error err;
  std::thread t{[&] {
    err = pin_to_cpus(one);
    pinned = allowed_cpus();
    std::thread child{[&] { inherited = allowed_cpus(); }};
    child.join();
  }};
  t.join();
  BOOST_REQUIRE_MESSAGE(!err, describe(err));
  BOOST_TEST(pinned == one, boost::test_tools::per_element());
  BOOST_TEST(inherited == one, boost::test_tools::per_element());
  BOOST_TEST(allowed_cpus() == all, boost::test_tools::per_element()); // (this thread: unchanged)
}

BOOST_AUTO_TEST_CASE(a_cpu_not_allowed_is_refused_and_nothing_changes) {
  const auto all = allowed_cpus();
  BOOST_REQUIRE(!all.empty());
  std::vector<int> after;
  caf::error err;
  std::thread t{[&] {
    err = pin_to_cpus({all.front(), 1023}); // (1023: beyond every machine here)
    after = allowed_cpus();
  }};
  t.join();
  if (all.back() == 1023)
    return; // (a machine with 1024 CPUs allowed: nothing to refuse)
  BOOST_REQUIRE(err);
  BOOST_TEST(err == errc::invalid_config);
  BOOST_TEST(describe(err).find("node.cpus") != std::string::npos, describe(err));
  BOOST_TEST(after == all, boost::test_tools::per_element());
  BOOST_TEST(!pin_to_cpus({})); // (none: not pinned)
}

BOOST_AUTO_TEST_SUITE_END()
