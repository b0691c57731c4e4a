// Tests of control/lease_desk: the chief's answer to a lease request -- a lease in the epoch's
// seeded order, or a wait while the worker may not train -- and reports settled into the ledger.
#include "control/lease_desk.hpp"

#include "common/errc.hpp"
#include "data/batcher.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>

using namespace actorps;

namespace {

using desk_t = actorps::lease_desk; // (the suite is named lease_desk too)

lease_request report(uint32_t worker, uint64_t id, int32_t done) {
  return lease_request{worker, {lease_report{id, done}}};
}

} // namespace

BOOST_AUTO_TEST_SUITE(lease_desk)

BOOST_AUTO_TEST_CASE(a_worker_that_may_not_train_is_told_to_wait_and_gets_no_rows) {
  desk_t desk(10, 4, 7);
  auto wait = desk.answer(0, false, 3);
  BOOST_TEST(wait.rows.empty());
  BOOST_TEST(wait.wait_ms == desk_t::pause_wait_ms);
  BOOST_TEST(wait.workers == 3u);
  BOOST_TEST(desk.ledger().open_leases(0) == 0u); // nothing handed out
}

BOOST_AUTO_TEST_CASE(leases_follow_the_epochs_seeded_order_and_close_it_exactly) {
  desk_t desk(10, 4, 7);
  std::vector<int32_t> seen;
  std::vector<uint64_t> ids;
  for (int k = 0; k < 3; ++k) { // 4 + 4 + 2 rows
    auto l = desk.answer(static_cast<uint32_t>(k % 2), true, 2);
    BOOST_TEST(l.wait_ms == 0);
    BOOST_TEST(l.epoch == 0);
    BOOST_TEST(l.workers == 2u);
    BOOST_TEST(l.augment_seed == augment_seed_at(7, 0, static_cast<int>(seen.size())));
    seen.insert(seen.end(), l.rows.begin(), l.rows.end());
    ids.push_back(l.id);
  }
  BOOST_TEST(seen.size() == 10u);
  std::sort(seen.begin(), seen.end());
  BOOST_TEST((std::adjacent_find(seen.begin(), seen.end()) == seen.end())); // each example once
  BOOST_TEST(!desk.settle(report(0, ids[0], 4)));
  BOOST_TEST(!desk.settle(report(1, ids[1], 4)));
  BOOST_TEST(desk.take_completed().empty());
  BOOST_TEST(!desk.settle(report(0, ids[2], 2)));
  auto done = desk.take_completed();
  BOOST_REQUIRE(done.size() == 1u);
  BOOST_TEST(done[0].examples == 10);
  BOOST_TEST(done[0].duplicates == 0);
}

BOOST_AUTO_TEST_CASE(a_report_of_another_workers_lease_is_refused_and_changes_nothing) {
  desk_t desk(10, 4, 7);
  auto l = desk.answer(0, true, 2);
  auto err = desk.settle(report(1, l.id, 4));
  BOOST_TEST((err == errc::protocol_error));
  BOOST_TEST(desk.ledger().reported() == 0);
  BOOST_TEST(!desk.settle(report(0, l.id, 4)));
  BOOST_TEST(desk.ledger().reported() == 4);
}

BOOST_AUTO_TEST_CASE(a_released_workers_rest_is_handed_out_again_first) {
  desk_t desk(10, 4, 7);
  auto l = desk.answer(0, true, 2);
  BOOST_TEST(!desk.settle(report(0, l.id, 1))); // one row trained, three back to the pool
  BOOST_TEST(desk.release(0) == 0);             // (nothing open any more)
  auto again = desk.answer(1, true, 1);
  BOOST_TEST((again.rows == std::vector<int32_t>(l.rows.begin() + 1, l.rows.end())));
  BOOST_TEST(desk.release(1) == 3);
}

BOOST_AUTO_TEST_SUITE_END()
