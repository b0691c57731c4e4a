// Tests of control/step_timer: compute, push and wait time per step, as means since the last take.
#include "control/step_timer.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(step_timer)

BOOST_AUTO_TEST_CASE(two_steps_averaged) {
  actorps::step_timer t;
  std::chrono::steady_clock::time_point t0{};
  BOOST_TEST(t.take().steps == 0);
  t.compute_begins(t0); // (the first step: no wait before it)
  t.compute_ends(t0 + 10ms);
  t.push_begins(t0 + 10ms);
  t.push_ends(t0 + 12ms);
  BOOST_TEST((t.at() == actorps::step_timer::phase::waiting));
  t.compute_begins(t0 + 20ms); // 8 ms waiting for the replies
  t.compute_ends(t0 + 26ms);
  t.push_begins(t0 + 26ms);
  t.push_ends(t0 + 30ms);
  t.compute_begins(t0 + 34ms);
  auto m = t.take();
  BOOST_TEST(m.steps == 2);
  BOOST_TEST(m.compute_ms == 8.0);
  BOOST_TEST(m.push_ms == 3.0);
  BOOST_TEST(m.wait_ms == 6.0); // (8 + 4) / 2
  BOOST_TEST(t.take().steps == 0); // new sums
}

BOOST_AUTO_TEST_CASE(ends_without_a_begin_are_ignored) {
  actorps::step_timer t;
  std::chrono::steady_clock::time_point t0{};
  t.compute_ends(t0 + 5ms);
  t.push_ends(t0 + 6ms);
  auto m = t.take();
  BOOST_TEST(m.steps == 0);
  BOOST_TEST(m.push_ms == 0.0);
}

BOOST_AUTO_TEST_SUITE_END()
