// Tests of control/silence_watch: who has been silent for a timeout, ids learnt as they come,
// and the ages the stall report reads.
#include "control/silence_watch.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(silence_watch)

BOOST_AUTO_TEST_CASE(silent_workers_and_the_next_deadline) {
  std::chrono::steady_clock::time_point t0{};
  actorps::silence_watch w{3, t0};
  w.heard(1, t0 + 5s);
  w.heard(7, t0 + 5s); // (past the end: ignored)
  BOOST_TEST((w.silent({0, 1, 2}, t0 + 6s, 6s) == std::vector<uint32_t>{0, 2}));
  BOOST_TEST((w.next_deadline({1}, 6s) == t0 + 11s));
  BOOST_TEST((w.ages_ms(t0 + 6s) == std::vector<int64_t>{6000, 1000, 6000}));
}

BOOST_AUTO_TEST_CASE(note_learns_ids_as_they_come) {
  std::chrono::steady_clock::time_point t0{};
  actorps::silence_watch w{0, t0};
  BOOST_TEST(w.ages_ms(t0 + 1s).empty());
  w.note(2, t0 + 3s);
  BOOST_TEST((w.ages_ms(t0 + 4s) == std::vector<int64_t>{4000, 4000, 1000}));
  w.note(0, t0 + 4s);
  w.note(0, t0 + 2s); // (an older time does not move it back)
  BOOST_TEST((w.ages_ms(t0 + 4s) == std::vector<int64_t>{0, 4000, 1000}));
}

BOOST_AUTO_TEST_SUITE_END()
