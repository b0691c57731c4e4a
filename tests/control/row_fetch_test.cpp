// Tests of control/row_fetch: a step computes once every row pull is answered; a failure gives
// it up once, and the answers still coming for it (or for an older fetch) change nothing.
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

BOOST_AUTO_TEST_SUITE_END()
