// Tests of control/lease_queue: batches never span leases, a lease is reported finished only once
// every row of it was trained, a leave reports how far each held lease got, pauses wait.
#include "control/lease_queue.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;

namespace {

data_lease lease(uint64_t id, std::vector<int32_t> rows, uint64_t seed = 100) {
  data_lease l;
  l.id = id;
  l.rows = std::move(rows);
  l.augment_seed = seed;
  return l;
}

using queue = actorps::lease_queue; // (the suite is named lease_queue too)

} // namespace

BOOST_AUTO_TEST_SUITE(lease_queue)

BOOST_AUTO_TEST_CASE(batches_come_in_lease_order_and_never_span_two_leases) {
  queue q{2};
  BOOST_TEST(!q.ready());
  BOOST_TEST(q.wants_more());
  auto req = q.request(3);
  BOOST_TEST(req.worker == 3u);
  BOOST_TEST(req.finished.empty());
  BOOST_TEST(!q.wants_more()); // a request is out
  q.answered(lease(7, {10, 11, 12}));
  BOOST_TEST(q.wants_more()); // one of two held
  q.request(3);
  q.answered(lease(8, {20, 21}));
  BOOST_TEST(!q.wants_more());
  auto a = q.take(2);
  BOOST_TEST(a.count == 2);
  BOOST_TEST(a.rows[0] == 10);
  BOOST_TEST(a.augment_seed == 100u);
  auto b = q.take(2);
  BOOST_TEST(b.count == 1); // the rest of lease 7, not a row of lease 8
  BOOST_TEST(b.rows[0] == 12);
  BOOST_TEST(b.augment_seed == 102u);
  BOOST_TEST(q.request(3).finished.empty()); // lease 7's last batch is not trained yet
  q.answered(lease(9, {30}));
  auto c = q.take(2); // lease 7 is trained now
  BOOST_TEST(c.rows[0] == 20);
  auto next = q.request(3);
  BOOST_REQUIRE(next.finished.size() == 1u);
  BOOST_TEST(next.finished[0].id == 7u);
  BOOST_TEST(next.finished[0].done == 3);
}

BOOST_AUTO_TEST_CASE(a_leave_reports_the_trained_part_of_every_held_lease) {
  queue q{2};
  q.request(0);
  q.answered(lease(1, {1, 2, 3, 4}));
  q.request(0);
  q.answered(lease(2, {5, 6}));
  q.take(2);
  q.take(2); // lease 1 taken whole; its last batch's step completed before the leave
  auto out = q.leave(0);
  BOOST_REQUIRE(out.finished.size() == 2u);
  BOOST_TEST(out.finished[0].id == 1u);
  BOOST_TEST(out.finished[0].done == 4);
  BOOST_TEST(out.finished[1].id == 2u);
  BOOST_TEST(out.finished[1].done == 0);
  BOOST_TEST(!q.ready());
}

BOOST_AUTO_TEST_CASE(a_pause_answer_waits_before_asking_again) {
  queue q;
  q.request(0);
  data_lease pause;
  pause.wait_ms = 200;
  q.answered(pause);
  BOOST_TEST((q.state() == queue::asking::waiting));
  BOOST_TEST(!q.wants_more());
  BOOST_TEST(!q.ready());
  q.wait_over();
  BOOST_TEST(q.wants_more());
  q.request(0);
  q.request_failed();
  BOOST_TEST(q.wants_more());
}

BOOST_AUTO_TEST_CASE(the_live_worker_count_follows_the_chiefs_latest_answer) {
  queue q;
  BOOST_TEST(q.workers() == 0u);
  auto l = lease(1, {1, 2});
  l.workers = 4;
  q.request(0);
  q.answered(l);
  BOOST_TEST(q.workers() == 4u);
  data_lease pause;
  pause.wait_ms = 200;
  pause.workers = 1;
  q.request(0);
  q.answered(pause);
  BOOST_TEST(q.workers() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()
