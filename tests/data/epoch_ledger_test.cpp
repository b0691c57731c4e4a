// Tests of data/epoch_ledger: leases cover every epoch exactly once through leaves, partial
// reports and crashes; returned pieces go out first; bad reports are refused.
#include "data/epoch_ledger.hpp"

#include "data/batcher.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <set>

using actorps::epoch_order;
using actorps::lease_grant;
using ledger_type = actorps::epoch_ledger;

namespace {

// Trains a whole lease (reports every example of it).
void finish(ledger_type& ledger, uint32_t w, const lease_grant& l) {
  BOOST_REQUIRE(!ledger.report(w, l.id, l.size()));
}

} // namespace

BOOST_AUTO_TEST_SUITE(epoch_ledger)

BOOST_AUTO_TEST_CASE(leases_cut_each_epoch_in_its_seeded_order_and_roll_into_the_next) {
  ledger_type ledger{10, 4, 7};
  auto a = ledger.take(0);
  auto b = ledger.take(1);
  auto c = ledger.take(0);
  BOOST_TEST(a.epoch == 0);
  BOOST_TEST(a.begin == 0);
  BOOST_TEST(a.end == 4);
  BOOST_TEST(b.begin == 4);
  BOOST_TEST(c.begin == 8);
  BOOST_TEST(c.end == 10); // the last lease of an epoch is shorter
  auto order = epoch_order({0, 10}, 7, 0);
  auto rows = ledger.indices(b);
  BOOST_TEST(rows == std::vector<int32_t>(order.begin() + 4, order.begin() + 8), boost::test_tools::per_element());
  auto d = ledger.take(1); // epoch 0 is handed out: epoch 1 opens
  BOOST_TEST(d.epoch == 1);
  BOOST_TEST(d.begin == 0);
  for (auto* l : {&a, &b, &c})
    finish(ledger, l == &b ? 1 : 0, *l);
  auto done = ledger.take_completed();
  BOOST_REQUIRE(done.size() == 1u);
  BOOST_TEST(done[0].epoch == 0);
  BOOST_TEST(done[0].examples == 10);
  BOOST_TEST(done[0].duplicates == 0);
  BOOST_TEST(done[0].reissued == 0);
  BOOST_TEST(ledger.take_completed().empty());
}

BOOST_AUTO_TEST_CASE(a_leaving_workers_unfinished_part_goes_out_first_and_every_example_counts_once) {
  ledger_type ledger{12, 4, 3};
  auto a = ledger.take(0);                  // [0, 4)
  auto b = ledger.take(1);                  // [4, 8)
  BOOST_TEST(!ledger.report(1, b.id, 1));   // worker 1 leaves after one example: [5, 8) goes back
  auto c = ledger.take(0);                  // the returned piece before fresh positions
  BOOST_TEST(c.epoch == 0);
  BOOST_TEST(c.begin == 5);
  BOOST_TEST(c.end == 8);
  auto d = ledger.take(2);                  // then the fresh [8, 12)
  BOOST_TEST(d.begin == 8);
  finish(ledger, 0, a);
  finish(ledger, 0, c);
  finish(ledger, 2, d);
  auto done = ledger.take_completed();
  BOOST_REQUIRE(done.size() == 1u);
  BOOST_TEST(done[0].examples == 12);
  BOOST_TEST(done[0].duplicates == 0);
  BOOST_TEST(done[0].reissued == 3);
}

BOOST_AUTO_TEST_CASE(a_crashed_workers_open_leases_go_back_whole_and_are_cut_to_lease_size) {
  ledger_type ledger{20, 5, 1};
  auto a = ledger.take(0);                 // [0, 5)
  auto b = ledger.take(0);                 // [5, 10)
  auto c = ledger.take(1);                 // [10, 15)
  BOOST_TEST(ledger.open_leases(0) == 2u);
  BOOST_TEST(ledger.release(0) == 10);     // it crashed: both leases go back
  BOOST_TEST(ledger.open_leases(0) == 0u);
  BOOST_TEST(static_cast<bool>(ledger.report(0, a.id, 5)));   // a report after the crash is refused
  std::set<int> seen;
  for (int k = 0; k < 3; ++k) {            // [0,5), [5,10) again, then fresh [15, 20)
    auto l = ledger.take(1);
    for (int p = l.begin; p < l.end; ++p)
      BOOST_TEST(seen.insert(p).second);
    finish(ledger, 1, l);
  }
  finish(ledger, 1, c);
  (void)b;
  auto done = ledger.take_completed();
  BOOST_REQUIRE(done.size() == 1u);
  BOOST_TEST(done[0].examples == 20);
  BOOST_TEST(done[0].duplicates == 0);
  BOOST_TEST(done[0].reissued == 10);
  BOOST_TEST(ledger.reported() == 20);
}

BOOST_AUTO_TEST_CASE(an_epoch_closes_only_when_its_last_lease_is_reported) {
  ledger_type ledger{8, 4, 5};
  auto a = ledger.take(0);
  auto b = ledger.take(1);
  auto next = ledger.take(0); // epoch 1
  finish(ledger, 0, a);
  BOOST_TEST(ledger.take_completed().empty());
  finish(ledger, 1, b);
  auto done = ledger.take_completed();
  BOOST_REQUIRE(done.size() == 1u);
  BOOST_TEST(done[0].epoch == 0);
  BOOST_TEST(next.epoch == 1);
  finish(ledger, 0, next);
  auto last = ledger.take(1);
  BOOST_TEST(last.epoch == 1);
  BOOST_TEST(last.begin == 4);
  finish(ledger, 1, last);
  done = ledger.take_completed();
  BOOST_REQUIRE(done.size() == 1u);
  BOOST_TEST(done[0].epoch == 1);
  BOOST_TEST(ledger.take(0).epoch == 2); // the closed epochs are not handed out again
}

BOOST_AUTO_TEST_CASE(reports_of_another_workers_lease_or_out_of_range_counts_are_refused) {
  ledger_type ledger{8, 4, 5};
  auto a = ledger.take(0);
  BOOST_TEST(static_cast<bool>(ledger.report(1, a.id, 4)));  // not worker 1's
  BOOST_TEST(static_cast<bool>(ledger.report(0, a.id, 5)));  // more than the lease
  BOOST_TEST(static_cast<bool>(ledger.report(0, a.id, -1)));
  BOOST_TEST(static_cast<bool>(ledger.report(0, 999, 1)));   // no such lease
  BOOST_TEST(!ledger.report(0, a.id, 4)); // the lease is still open after the refusals
  BOOST_TEST(ledger.reported() == 4);
}

BOOST_AUTO_TEST_CASE(a_saved_ledger_continues_its_epochs_exactly_and_a_bad_list_is_refused) {
  ledger_type before{12, 4, 3};
  auto a = before.take(0);                 // [0, 4): reported
  auto b = before.take(1);                 // [4, 8): half reported, the rest returned
  auto c = before.take(0);                 // [8, 12): open at the save
  finish(before, 0, a);
  BOOST_REQUIRE(!before.report(1, b.id, 2));
  auto saved = before.save();
  ledger_type after{12, 4, 3};
  BOOST_REQUIRE(!after.load(saved));
  BOOST_TEST(after.reported() == 6);
  std::set<int> got;
  for (int k = 0; k < 2; ++k) {            // [6, 8) and [8, 12) again, nothing fresh
    auto l = after.take(0);
    BOOST_TEST(l.epoch == 0);
    for (int p = l.begin; p < l.end; ++p)
      BOOST_TEST(got.insert(p).second);
    finish(after, 0, l);
  }
  BOOST_TEST(got == std::set<int>({6, 7, 8, 9, 10, 11}));
  auto done = after.take_completed();
  BOOST_REQUIRE(done.size() == 1u);
  BOOST_TEST(done[0].examples == 12);
  BOOST_TEST(done[0].duplicates == 0);
  BOOST_TEST(after.take(0).epoch == 1);
  (void)c;
  ledger_type other{10, 4, 3};             // another training-set size
  BOOST_TEST(static_cast<bool>(other.load(saved)));
  auto cut = saved;
  cut.pop_back();
  BOOST_TEST(static_cast<bool>(after.load(cut)));
  auto longer = saved;
  longer.push_back(0);
  BOOST_TEST(static_cast<bool>(after.load(longer)));
}

BOOST_AUTO_TEST_SUITE_END()
