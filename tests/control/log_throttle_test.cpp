// Tests of control/log_throttle: a burst per window, the rest counted and said with the next line.
#include "control/log_throttle.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(log_throttle)

BOOST_AUTO_TEST_CASE(a_burst_per_window_then_the_count_of_what_was_not_logged) {
  actorps::log_throttle t{3, 10s};
  const auto t0 = actorps::log_throttle::clock::time_point{} + 100s;
  for (int i = 0; i < 3; ++i)
    BOOST_TEST((t.admit(t0 + std::chrono::seconds(i)) == std::optional<uint64_t>{0}));
  for (int i = 0; i < 20000; ++i) // (a flood: nothing more in this window)
    BOOST_TEST_REQUIRE(!t.admit(t0 + 5s));
  BOOST_TEST((t.admit(t0 + 10s) == std::optional<uint64_t>{20000})); // the next window's first line says it
  BOOST_TEST((t.admit(t0 + 11s) == std::optional<uint64_t>{0}));
}

BOOST_AUTO_TEST_SUITE_END()
