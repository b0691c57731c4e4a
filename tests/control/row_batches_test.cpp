// Tests of control/row_batches: batches drawn ahead are taken in the order drawn, each with a
// fetch of its own; two ahead (cluster.overlap-steps) hold their rows apart; answers of a slot's
// earlier fetch or of another slot change nothing; a failure ahead makes that batch's step pull
// its rows anew, a failure of the step's own gives it up; a shard going down fails them all.
#include "control/row_batches.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;
using next = row_fetch::next;
using phase = row_fetch::phase;

BOOST_AUTO_TEST_SUITE(row_batches)

BOOST_AUTO_TEST_CASE(without_depth_every_step_pulls_in_one_slot) {
  actorps::row_batches b;
  BOOST_TEST(b.depth() == 0u);
  auto n = b.begin(2);
  BOOST_TEST(b.current() == 0u);
  BOOST_TEST((b.answered(0, n) == next::wait));
  BOOST_TEST((b.answered(0, n) == next::compute));
  auto m = b.begin(1);
  BOOST_TEST(m == n + 1);
  BOOST_TEST((b.answered(0, n) == next::wait)); // (the step before's answer)
  BOOST_TEST((b.answered(0, m) == next::compute));
}

BOOST_AUTO_TEST_CASE(two_batches_ahead_are_taken_in_the_order_drawn) {
  actorps::row_batches b{2};
  b.begin(0); // (the first step's batch, no ids)
  auto [s1, f1] = b.begin_ahead(2); // the next batch: asked back with a push, pulled from another shard
  auto [s2, f2] = b.begin_ahead(1); // the one after: its own slot
  BOOST_TEST(b.ahead() == 2u);
  BOOST_TEST(s1 != b.current());
  BOOST_TEST(s2 != b.current());
  BOOST_TEST(s1 != s2);
  BOOST_TEST((b.answered(s2, f2) == next::wait)); // (the second's rows in first: held)
  BOOST_TEST((b.fetch(s2).at() == phase::ready));
  BOOST_TEST((b.answered(s1, f1) == next::wait));
  BOOST_TEST((b.take_ahead() == next::wait)); // the first: one answer still out
  BOOST_TEST(b.current() == s1);
  BOOST_TEST((b.answered(s1, f1) == next::compute));
  BOOST_TEST((b.take_ahead() == next::compute)); // the second: all in
  BOOST_TEST(b.current() == s2);
  BOOST_TEST(b.ahead() == 0u);
}

BOOST_AUTO_TEST_CASE(a_slot_taken_again_drops_its_earlier_fetchs_answers) {
  actorps::row_batches b{1};
  b.begin(0);
  auto [s, f] = b.begin_ahead(1);
  BOOST_TEST((b.failed(s, f) == next::wait)); // (the push carrying them failed: held as failed)
  BOOST_TEST((b.take_ahead() == next::refetch));
  auto again = b.begin(1); // (the step pulls them anew in the same slot)
  BOOST_TEST(b.current() == s);
  BOOST_TEST(!b.counts(s, f));
  BOOST_TEST(b.counts(s, again));
  BOOST_TEST((b.answered(s, f) == next::wait)); // (the failed push's late answer: dropped)
  BOOST_TEST((b.answered(s, again) == next::compute));
  // the slot free again is the one the next batch ahead takes; the other slot's fetches stay apart
  auto [t, g] = b.begin_ahead(1);
  BOOST_TEST(t != s);
  BOOST_TEST(!b.counts(s, g + 100));
  BOOST_TEST((b.answered(t, g) == next::wait));
  BOOST_TEST((b.answered(99, g) == next::wait)); // (no such slot)
  BOOST_TEST((b.failed(99, g) == next::wait));
}

BOOST_AUTO_TEST_CASE(a_shard_down_gives_the_step_up_and_refetches_the_batches_ahead) {
  actorps::row_batches b{2};
  b.begin(1); // the step's own rows out
  auto [s1, f1] = b.begin_ahead(1);
  auto [s2, f2] = b.begin_ahead(1);
  BOOST_TEST((b.answered(s2, f2) == next::wait)); // (all in: a shard down does not matter to it)
  BOOST_TEST((b.failed_all() == next::abandon));
  BOOST_TEST((b.fetch(s1).at() == phase::failed_ahead));
  BOOST_TEST((b.fetch(s2).at() == phase::ready));
  BOOST_TEST((b.answered(s1, f1) == next::wait));
  BOOST_TEST((b.take_ahead() == next::refetch));
  BOOST_TEST((b.take_ahead() == next::compute));
  BOOST_TEST((b.failed_all() == next::wait)); // (nothing out)
}

BOOST_AUTO_TEST_SUITE_END()
