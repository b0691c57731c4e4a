// Tests of control/fan_in: one continuation after every answer, or one failure, never both.
#include "control/fan_in.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(fan_in)

BOOST_AUTO_TEST_CASE(calls_done_once_with_every_answer_in_slot_order) {
  std::vector<int> got;
  int calls = 0;
  auto fan = actorps::fan_in<int>::make(
    3, [&](std::vector<int>& xs) { got = xs; ++calls; }, [&](std::string) { calls += 100; });
  fan->put(2, 30);
  fan->put(0, 10);
  BOOST_TEST(calls == 0);
  fan->put(1, 20);
  BOOST_TEST(calls == 1);
  BOOST_TEST((got == std::vector<int>{10, 20, 30}));
  fan->put(1, 99);
  fan->fail("late");
  BOOST_TEST(calls == 1);
}

BOOST_AUTO_TEST_CASE(the_first_failure_ends_it) {
  std::string why;
  int done = 0;
  auto fan = actorps::fan_in<int>::make(2, [&](std::vector<int>&) { ++done; }, [&](std::string w) { why += w; });
  fan->put(0, 1);
  fan->fail("shard 1 timed out");
  fan->fail("again");
  fan->put(1, 2);
  BOOST_TEST(why == "shard 1 timed out");
  BOOST_TEST(done == 0);
}

BOOST_AUTO_TEST_SUITE_END()
