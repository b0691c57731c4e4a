// Tests of control/ssp_session: answers parked while their worker is too far ahead of the slowest,
// released as the slowest catches up or is lost, and the silence check that lets go of a slowest
// worker silent for the step timeout -- what the SyncAggregator's ssp part held in the actor and
// the simulator repeated beside it.
#include "control/ssp_session.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;
using namespace std::chrono_literals;

namespace {

using session = actorps::ssp_session<int>; // a ticket: the id of an answer (the suite is named ssp_session too)
using go_list = std::vector<std::pair<uint32_t, int>>;
const session::time_point t0{};

} // namespace

BOOST_AUTO_TEST_SUITE(ssp_session)

BOOST_AUTO_TEST_CASE(an_answer_too_far_ahead_is_parked_until_the_slowest_catches_up) {
  session s{ssp_rule{2, 0}, 2, t0, 1s}; // lock-step
  auto a = s.finished(0, 0, 10, t0 + 10ms);
  BOOST_TEST(a.parked);
  BOOST_TEST(a.ahead == 1u);
  BOOST_TEST(a.go.empty());
  BOOST_REQUIRE(a.check_at);
  BOOST_TEST((*a.check_at == t0 + 1s)); // worker 1 was last heard at the start
  auto b = s.finished(1, 0, 20, t0 + 20ms);
  BOOST_TEST(!b.parked);
  BOOST_TEST((b.go == go_list{{1, 20}, {0, 10}}));
  BOOST_TEST(!b.check_at); // one check is armed already
}

// The stats' counts: each push's lag (steps ahead of the slowest), and the slowest workers a parked
// answer waited on.
BOOST_AUTO_TEST_CASE(its_counts_take_each_push_once) {
  session s{ssp_rule{3, 1}, 3, t0, 1s};
  s.finished(0, 0, 10, t0); // 1 ahead: may go on (staleness 1)
  s.finished(0, 1, 11, t0); // 2 ahead: parked on workers 1 and 2
  auto& c = s.counts();
  BOOST_TEST(c.lag_histogram[1] == 1u);
  BOOST_TEST(c.lag_histogram[2] == 1u);
  BOOST_TEST((c.waited_on == std::vector<uint64_t>{0, 1, 1}));
}

BOOST_AUTO_TEST_CASE(a_slowest_worker_silent_for_the_timeout_is_let_go) {
  session s{ssp_rule{2, 0}, 2, t0, 1s};
  s.heard(0, t0 + 500ms);
  auto a = s.finished(0, 0, 10, t0 + 500ms);
  BOOST_REQUIRE(a.parked);
  auto early = s.tick(t0 + 900ms);
  BOOST_TEST(early.silent.empty());
  BOOST_TEST(early.go.empty());
  BOOST_REQUIRE(early.check_at); // armed again at the deadline
  BOOST_TEST((*early.check_at == t0 + 1s));
  auto due = s.tick(t0 + 1s);
  BOOST_TEST((due.silent == std::vector<uint32_t>{1}));
  BOOST_TEST((due.go == go_list{{0, 10}}));
  auto idle = s.tick(t0 + 2s); // nothing parked: nobody is let go
  BOOST_TEST(idle.silent.empty());
}

BOOST_AUTO_TEST_CASE(a_lost_worker_releases_the_answers_waiting_on_it) {
  session s{ssp_rule{3, 0}, 3, t0, 1s};
  s.finished(0, 0, 10, t0);
  s.finished(1, 0, 11, t0);
  auto gone = s.lose(2, t0 + 1ms);
  BOOST_TEST((gone.go == go_list{{0, 10}, {1, 11}}));
}

BOOST_AUTO_TEST_SUITE_END()
