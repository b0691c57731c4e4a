// Tests of control/push_leads: how long backprop had left after each part of a push was complete,
// the least over the measured steps, read for a part by its ready_after.
#include "control/push_leads.hpp"

#include <boost/test/unit_test.hpp>

#include <random>

using namespace actorps;
using namespace std::chrono_literals;

namespace {

using clock_type = std::chrono::steady_clock;

// One step of backprop from t0: callbacks at floors 4, 2, 0 after the given microseconds, the
// end after `end` microseconds.
bool step(actorps::push_leads& l, clock_type::time_point t0, std::vector<std::pair<uint32_t, int>> calls, int end) {
  l.begin_step();
  for (auto [floor, us] : calls)
    l.completed(floor, t0 + std::chrono::microseconds{us});
  return l.end_step(t0 + std::chrono::microseconds{end});
}

} // namespace

BOOST_AUTO_TEST_SUITE(push_leads)

BOOST_AUTO_TEST_CASE(the_least_lead_of_the_measured_steps_after_the_warm_up) {
  actorps::push_leads l{1, 3};
  const auto t0 = clock_type::time_point{} + 1s;
  BOOST_TEST(!step(l, t0, {{4, 10}, {2, 20}, {0, 100}}, 100)); // warm-up: not measured (its leads are large)
  BOOST_TEST(!l.done());
  BOOST_TEST(!step(l, t0, {{4, 1000}, {2, 1500}, {0, 1600}}, 1600));
  BOOST_TEST(!step(l, t0, {{4, 900}, {2, 1550}, {0, 1600}}, 1600));
  BOOST_TEST(step(l, t0, {{4, 1000}, {2, 1500}, {0, 1600}}, 1600)); // the last measured step
  BOOST_TEST(l.done());
  BOOST_TEST(!step(l, t0, {{4, 0}}, 5000)); // (after the measurement: nothing changes)
  BOOST_TEST(l.lead(4).count() == 600); // 1600 - 1000 (a step left less than the others)
  BOOST_TEST(l.lead(5).count() == 600); // (variables 5..: complete at floor 4's callback)
  BOOST_TEST(l.lead(3).count() == 50);  // (variables 3..: complete only at floor 2's)
  BOOST_TEST(l.lead(2).count() == 50);  // 1600 - 1550
  BOOST_TEST(l.lead(0).count() == 0);   // at the end
}

BOOST_AUTO_TEST_CASE(a_floor_some_step_did_not_reach_early_has_no_lead) {
  actorps::push_leads l{0, 2};
  const auto t0 = clock_type::time_point{} + 1s;
  step(l, t0, {{4, 100}, {0, 900}}, 900);
  BOOST_TEST(step(l, t0, {{2, 100}, {0, 900}}, 900));
  BOOST_TEST(l.lead(4).count() == 0); // (the second step reached 4 only with floor 2's callback)
  BOOST_TEST(l.lead(2).count() == 0); // (and the first reached 2 only at the end)
}

// Seeded steps with jitter: the lead of every floor is the least over the measured steps and
// never more than any step's.
BOOST_AUTO_TEST_CASE(seeded_steps_give_each_floor_its_least_lead) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng{seed};
    actorps::push_leads l{2, 10};
    const auto t0 = clock_type::time_point{} + 1s;
    std::vector<int> least(5, 1 << 30);
    bool done = false;
    for (int s = 0; s < 12; ++s) {
      const int a = 100 + static_cast<int>(rng() % 500), b = a + 100 + static_cast<int>(rng() % 500),
                end = b + 50 + static_cast<int>(rng() % 100);
      done = step(l, t0, {{4, a}, {2, b}, {0, end}}, end);
      if (s >= 2) {
        least[4] = std::min(least[4], end - a);
        least[2] = std::min(least[2], end - b);
      }
    }
    BOOST_TEST(done);
    BOOST_TEST(l.lead(4).count() == least[4]);
    BOOST_TEST(l.lead(2).count() == least[2]);
    BOOST_TEST(l.lead(0).count() == 0);
  }
}

BOOST_AUTO_TEST_SUITE_END()
