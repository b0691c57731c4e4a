// Tests of control/sync_session: a sync step's contributors and their tickets, stale and refused
// pushes answered at once, and the step clock that lets go of silent workers (cluster.step-timeout)
// -- the bookkeeping the SyncAggregator held in the actor and the simulator repeated beside it.
#include "control/sync_session.hpp"

#include "common/errc.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;
using namespace std::chrono_literals;

namespace {

using session = actorps::sync_session<int>; // a ticket: the id of a reply to send (the suite is named sync_session too)
const session::time_point t0{};

std::vector<variable_slice> grad(float x) {
  return {{0, 0, {x, 2 * x}}};
}

} // namespace

BOOST_AUTO_TEST_SUITE(sync_session)

BOOST_AUTO_TEST_CASE(a_step_completes_with_its_contributors_tickets_in_worker_order) {
  session s{sync_rule{3, 2}, 1s};
  auto a = s.offer(2, 0, grad(1), {20, 21}, t0);
  BOOST_TEST((a.what == session::offered::kind::accepted));
  BOOST_TEST(a.arm); // the step's first push starts its clock
  BOOST_TEST(!a.applied);
  auto b = s.offer(0, 0, grad(3), {10}, t0 + 10ms);
  BOOST_TEST(!b.arm);
  BOOST_REQUIRE(b.applied);
  BOOST_TEST((b.applied->done.released == std::vector<uint32_t>{0, 2}));
  BOOST_TEST((b.applied->release == std::vector<std::vector<int>>{{10}, {20, 21}}));
  BOOST_TEST(b.applied->done.average[0].data.values[0] == 2.0f);
  auto late = s.offer(1, 0, grad(5), {30}, t0 + 20ms); // step 0 is over
  BOOST_TEST((late.what == session::offered::kind::stale));
  BOOST_TEST((late.back == std::vector<int>{30}));
  auto twice = s.offer(0, 1, grad(1), {11}, t0 + 30ms);
  auto again = s.offer(0, 1, grad(1), {12}, t0 + 31ms);
  BOOST_TEST((again.what == session::offered::kind::refused));
  BOOST_TEST((again.error == errc::protocol_error));
  BOOST_TEST((again.back == std::vector<int>{12}));
  BOOST_TEST((twice.what == session::offered::kind::accepted));
}

// The stats' counts (shard_stats): each push's lag once, a stale push dropped once, the worker a
// completed step waited on last; a push in parts counts at its last part only.
BOOST_AUTO_TEST_CASE(its_counts_take_each_push_once) {
  session s{sync_rule{2, 2}, 1s};
  s.offer(1, 0, grad(1), {1}, t0);
  s.offer(0, 0, grad(1), {2}, t0); // step 0 waited on worker 0 last
  s.offer(1, 0, grad(1), {3}, t0, false); // a late part of a push: not counted
  s.offer(1, 0, grad(1), {4}, t0);        // its last part: one stale push, lag 1
  auto& c = s.counts();
  BOOST_TEST(c.stale_dropped == 1u);
  BOOST_TEST((c.waited_on == std::vector<uint64_t>{1, 0}));
  BOOST_TEST(c.lag_histogram.size() == lag_buckets);
  BOOST_TEST(c.lag_histogram[0] == 2u);
  BOOST_TEST(c.lag_histogram[1] == 1u);
  s.offer(0, 1, grad(1), {5}, t0);
  auto again = s.offer(0, 1, grad(1), {6}, t0); // refused (twice in a step): counts nothing
  BOOST_REQUIRE((again.what == session::offered::kind::refused));
  BOOST_TEST(c.lag_histogram[0] == 3u);
  BOOST_TEST(c.stale_dropped == 1u);
}

// Issue 32, item 4: none of the aggregator's test cases covered cluster.step-timeout.
BOOST_AUTO_TEST_CASE(the_step_clock_lets_go_of_workers_silent_for_the_step_timeout) {
  session s{sync_rule{3, 3}, 1s};
  BOOST_TEST(s.tick(t0).silent.empty()); // nobody pushed: nothing to time
  BOOST_TEST(!s.tick(t0).again);
  s.offer(1, 0, grad(1), {1}, t0 + 100ms);
  auto early = s.tick(t0 + 600ms);
  BOOST_TEST(early.silent.empty());
  BOOST_REQUIRE(early.again);
  BOOST_TEST((*early.again == std::chrono::nanoseconds(500ms)));
  auto due = s.tick(t0 + 1100ms);
  BOOST_TEST((due.silent == std::vector<uint32_t>{0, 2}));
  BOOST_REQUIRE(due.applied);
  BOOST_TEST((due.applied->release == std::vector<std::vector<int>>{{1}}));
  // the next step does not wait for the silent ones until they push again
  auto next = s.offer(1, 1, grad(2), {2}, t0 + 1200ms);
  BOOST_TEST(next.applied.has_value());
  auto back = s.offer(0, 2, grad(3), {3}, t0 + 1300ms); // worker 0 wakes: waited for again
  BOOST_TEST(!back.applied);
  BOOST_TEST((s.rule().missing() == std::vector<uint32_t>{1}));
}

// Found by the simulator's event rate: every step's first push armed another timer, and each
// timer re-armed itself to the current step's deadline, so a sync run of N steps kept N timers
// firing every step timeout (the SyncAggregator did the same). One timer is armed at a time.
BOOST_AUTO_TEST_CASE(the_step_clock_keeps_one_timer_armed) {
  session s{sync_rule{2, 2}, 1s};
  int armed = 0;
  for (uint64_t step = 0; step < 5; ++step) { // five quick steps: one timer
    auto t = t0 + std::chrono::milliseconds(10 * step);
    armed += s.offer(0, step, grad(1), {0}, t).arm ? 1 : 0;
    armed += s.offer(1, step, grad(1), {1}, t).arm ? 1 : 0;
  }
  BOOST_TEST(armed == 1);
  s.offer(0, 5, grad(1), {0}, t0 + 900ms);
  auto fired = s.tick(t0 + 1s); // the one timer: step 5 began at 900 ms, so again in 900 ms
  BOOST_REQUIRE(fired.again);
  BOOST_TEST((*fired.again == std::chrono::nanoseconds(900ms)));
  s.offer(1, 5, grad(1), {1}, t0 + 1100ms);
  auto idle = s.tick(t0 + 1900ms); // nothing waits: the timer ends
  BOOST_TEST(!idle.again);
  BOOST_TEST(s.offer(0, 6, grad(1), {0}, t0 + 2s).arm); // the next first push arms it again
}

BOOST_AUTO_TEST_CASE(a_lost_worker_releases_the_step_and_its_tickets_are_dropped) {
  session s{sync_rule{3, 3}, 1s};
  s.offer(0, 0, grad(1), {10}, t0);
  s.offer(1, 0, grad(1), {20}, t0);
  auto done = s.lose(2, t0 + 1ms);
  BOOST_REQUIRE(done);
  BOOST_TEST((done->done.released == std::vector<uint32_t>{0, 1}));
  s.offer(0, 1, grad(1), {11}, t0 + 2ms);
  BOOST_TEST(!s.lose(0, t0 + 3ms)); // its step-1 gradient and ticket go with it
  auto next = s.offer(1, 1, grad(1), {21}, t0 + 4ms);
  BOOST_REQUIRE(next.applied);
  BOOST_TEST((next.applied->release == std::vector<std::vector<int>>{{21}}));
}

BOOST_AUTO_TEST_SUITE_END()
