// Tests of control/row_fetch: a step computes once every row pull is answered; a failure gives
// it up once, and the answers still coming for it (or for an older fetch) change nothing. A fetch
// ahead (the next batch's rows asked for with a push) holds its rows until the step computes, and
// a failure of it makes the step pull its rows anew instead of giving the step up.
#include "control/row_fetch.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;
using next = row_fetch::next;

BOOST_AUTO_TEST_SUITE(row_fetch)

BOOST_AUTO_TEST_CASE(the_step_computes_once_every_pull_is_answered) {
  actorps::row_fetch f;
  auto n = f.begin(3);
  BOOST_TEST((f.at() == actorps::row_fetch::phase::pulling));
  BOOST_TEST((f.answered(n) == next::wait));
  BOOST_TEST((f.answered(n) == next::wait));
  BOOST_TEST((f.answered(n) == next::compute));
  BOOST_TEST((f.at() == actorps::row_fetch::phase::idle));
  BOOST_TEST((f.answered(n) == next::wait)); // (a stray answer computes nothing twice)
  BOOST_TEST(f.begin(0) == n + 1);           // (a batch without ids: the caller computes at once)
  BOOST_TEST((f.at() == actorps::row_fetch::phase::idle));
}

BOOST_AUTO_TEST_CASE(a_failed_pull_gives_the_step_up_once) {
  actorps::row_fetch f;
  auto n = f.begin(2);
  BOOST_TEST(f.current(n));
  BOOST_TEST((f.failed(n) == next::abandon));
  BOOST_TEST(!f.current(n));
  BOOST_TEST((f.failed(n) == next::wait));   // (its other pull failing too)
  BOOST_TEST((f.answered(n) == next::wait)); // (or answered: dropped)
  BOOST_TEST((f.failed() == next::wait));    // (a shard down afterwards)
  auto m = f.begin(1);
  BOOST_TEST((f.failed(n) == next::wait));   // an old fetch's failure leaves the new one alone
  BOOST_TEST((f.failed() == next::abandon)); // a shard down gives up whichever is out
  BOOST_TEST((f.answered(m) == next::wait));
}

using phase = actorps::row_fetch::phase;

BOOST_AUTO_TEST_CASE(a_fetch_ahead_holds_its_rows_until_the_step_computes) {
  actorps::row_fetch f;
  auto n = f.begin_ahead(2);
  BOOST_TEST(f.holds_ahead());
  BOOST_TEST((f.at() == phase::pulling_ahead));
  BOOST_TEST((f.answered(n) == next::wait));
  BOOST_TEST((f.answered(n) == next::wait)); // (every row in: nothing computes before the step asks)
  BOOST_TEST((f.at() == phase::ready));
  BOOST_TEST(!f.current(n));
  BOOST_TEST((f.failed() == next::wait)); // a shard down now: the rows are in already
  BOOST_TEST((f.release() == next::compute));
  BOOST_TEST((f.at() == phase::idle));
  BOOST_TEST(!f.holds_ahead());
  BOOST_TEST((f.begin_ahead(0) == n + 1)); // (a next batch without ids: ready at once)
  BOOST_TEST((f.release() == next::compute));
}

BOOST_AUTO_TEST_CASE(a_step_that_computes_before_its_rows_are_in_computes_at_the_last_answer) {
  actorps::row_fetch f;
  auto n = f.begin_ahead(2);
  BOOST_TEST((f.answered(n) == next::wait));
  BOOST_TEST((f.release() == next::wait));
  BOOST_TEST((f.at() == phase::pulling));
  BOOST_TEST((f.answered(n) == next::compute));
  BOOST_TEST((f.answered(n) == next::wait)); // (once)
}

BOOST_AUTO_TEST_CASE(a_failed_fetch_ahead_pulls_the_rows_anew_when_the_step_computes) {
  actorps::row_fetch f;
  auto n = f.begin_ahead(3);
  BOOST_TEST((f.answered(n) == next::wait));
  BOOST_TEST((f.failed(n) == next::wait)); // (a push carrying reads failed: no step to give up yet)
  BOOST_TEST((f.at() == phase::failed_ahead));
  BOOST_TEST(f.holds_ahead());
  BOOST_TEST((f.answered(n) == next::wait)); // its other answers are dropped
  BOOST_TEST((f.failed(n) == next::wait));
  BOOST_TEST((f.release() == next::refetch));
  auto m = f.begin(1); // the step's own pull of the same batch's rows
  BOOST_TEST((f.answered(n) == next::wait));
  BOOST_TEST((f.answered(m) == next::compute));
}

BOOST_AUTO_TEST_CASE(a_failure_after_the_release_gives_the_step_up) {
  actorps::row_fetch f;
  auto n = f.begin_ahead(2);
  BOOST_TEST((f.release() == next::wait));
  BOOST_TEST((f.failed() == next::abandon)); // (the step is computing now: as a plain fetch)
  BOOST_TEST((f.answered(n) == next::wait));
  BOOST_TEST(!f.holds_ahead());
}

BOOST_AUTO_TEST_SUITE_END()
