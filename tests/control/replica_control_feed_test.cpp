// Tests of control/replica_control's inputs that come back from commands carried out later: an
// elastic worker's data feed (the chief's leases) and reaching lost shards again, with the other
// inputs that arrive meanwhile (a stop, a leave, another lost shard, a restarted chief).
#include "tests/control/replica_control_support.hpp"

#include <numeric>

namespace {

replica_control_config leased_config(bool chief_recoverable = true) {
  auto c = config();
  c.leased = true;
  c.index = 3;
  c.batch_size = 4;
  c.chief_recoverable = chief_recoverable;
  return c;
}

data_lease lease_of(uint64_t id, int rows, int first = 0) {
  data_lease l;
  l.id = id;
  l.rows.resize(static_cast<size_t>(rows));
  std::iota(l.rows.begin(), l.rows.end(), first);
  l.workers = 2;
  return l;
}

// Started and pulled: the first step waits for data (the first lease is asked for).
void starving(controller& ctl) {
  start(ctl);
  auto cmds = answer_pull(ctl);
  BOOST_REQUIRE((kinds(cmds) == std::vector<kind>{kind::ask_lease}));
}

} // namespace

BOOST_AUTO_TEST_SUITE(replica_control_feed)

BOOST_AUTO_TEST_CASE(a_leased_step_waits_for_its_lease_then_takes_a_batch_of_its_rows) {
  controller ctl(leased_config());
  start(ctl);
  auto cmds = answer_pull(ctl);
  BOOST_TEST((kinds(cmds) == std::vector<kind>{kind::ask_lease})); // no compute without data
  BOOST_TEST(find(cmds, kind::ask_lease)->lease.worker == 3u);
  BOOST_TEST(find(cmds, kind::ask_lease)->epoch == 0u);
  cmds = ctl.lease_answered(0, lease_of(7, 6, 100));
  BOOST_TEST((kinds(cmds) == std::vector<kind>{kind::compute, kind::ask_lease})); // and the next ahead
  auto batch = find(cmds, kind::compute)->batch;
  BOOST_REQUIRE(batch.count == 4);
  BOOST_TEST(batch.rows[0] == 100);
  BOOST_TEST(ctl.lease_workers() == 2u);
  cmds = one_step(ctl, 1); // the second lease is still being asked for: the first one's rest
  BOOST_TEST((kinds(cmds) == std::vector<kind>{kind::compute}));
  BOOST_TEST(find(cmds, kind::compute)->batch.count == 2); // a batch never spans two leases
  BOOST_TEST(find(cmds, kind::compute)->batch.rows[0] == 104);
  cmds = one_step(ctl, 2);
  BOOST_TEST(cmds.empty()); // out of data, the next lease asked for already: waits
  cmds = ctl.lease_answered(0, lease_of(8, 4, 200));
  BOOST_TEST((kinds(cmds) == std::vector<kind>{kind::compute, kind::ask_lease}));
  auto ask = find(cmds, kind::ask_lease)->lease; // reports lease 7, trained whole
  BOOST_REQUIRE(ask.finished.size() == 1u);
  BOOST_TEST(ask.finished[0].id == 7u);
  BOOST_TEST(ask.finished[0].done == 6);
}

// Elastic async and ssp: a push weighs scaling_workers over the workers its lease lists, so the
// shards' rate follows the membership; sync and a worker without leases weigh 1.
BOOST_AUTO_TEST_CASE(a_leased_push_is_weighted_by_the_workers_its_lease_lists) {
  auto c = leased_config();
  c.scaling_workers = 4;
  controller ctl(c);
  BOOST_TEST(ctl.push_weight() == 1.0f); // no lease yet
  starving(ctl);
  ctl.lease_answered(0, lease_of(7, 6)); // lists 2 workers
  BOOST_TEST(ctl.push_weight() == 2.0f);
  c.mode = train_mode::sync;
  controller sync(c);
  starving(sync);
  sync.lease_answered(0, lease_of(7, 6));
  BOOST_TEST(sync.push_weight() == 1.0f);
}

BOOST_AUTO_TEST_CASE(a_paused_job_makes_the_worker_ask_again_after_the_wait) {
  controller ctl(leased_config());
  starving(ctl);
  data_lease wait;
  wait.wait_ms = 200;
  auto cmds = ctl.lease_answered(0, wait);
  BOOST_TEST((kinds(cmds) == std::vector<kind>{kind::lease_after}));
  BOOST_TEST(find(cmds, kind::lease_after)->after.count() == 200);
  BOOST_TEST((kinds(ctl.lease_wait_over()) == std::vector<kind>{kind::ask_lease}));
}

BOOST_AUTO_TEST_CASE(a_failed_lease_request_is_asked_again_or_fails_a_worker_without_a_way_back) {
  controller ctl(leased_config());
  starving(ctl);
  auto cmds = ctl.lease_failed(0, errc::peer_unreachable, "the chief went down");
  BOOST_TEST((kinds(cmds) == std::vector<kind>{kind::lease_after}));
  BOOST_TEST(find(cmds, kind::lease_after)->after.count() == 500);
  BOOST_TEST((kinds(ctl.lease_wait_over()) == std::vector<kind>{kind::ask_lease}));
  controller fatal(leased_config(false));
  starving(fatal);
  cmds = fatal.lease_failed(0, errc::timeout, "no answer");
  BOOST_TEST((kinds(cmds) == std::vector<kind>{kind::fail}));
  BOOST_TEST(find(cmds, kind::fail)->code == errc::timeout);
  BOOST_TEST(find(cmds, kind::fail)->text.find("asking the chief for data failed") != std::string::npos);
}

// (It used to wait inside a step marked as computing, which the actor had to end by hand in
// three of its handlers.)
BOOST_AUTO_TEST_CASE(a_leave_or_stop_while_waiting_for_data_ends_at_once) {
  controller leaving(leased_config());
  starving(leaving);
  auto cmds = leaving.leave();
  BOOST_TEST((kinds(cmds) == std::vector<kind>{kind::report, kind::announce_stop, kind::leave}));
  BOOST_TEST(find(cmds, kind::leave)->lease.worker == 3u);
  BOOST_TEST(leaving.lease_answered(0, lease_of(1, 4)).empty()); // too late: nothing more
  controller stopped(leased_config());
  starving(stopped);
  BOOST_TEST((kinds(stopped.stop()) == std::vector<kind>{kind::report, kind::announce_stop, kind::quit}));
}

BOOST_AUTO_TEST_CASE(a_leave_reports_how_far_each_held_lease_was_trained) {
  controller ctl(leased_config());
  starving(ctl);
  ctl.lease_answered(0, lease_of(5, 10));
  ctl.lease_answered(0, lease_of(6, 10, 10));
  one_step(ctl, 1); // 4 of lease 5 trained, the next 4 taken
  BOOST_TEST((kinds(ctl.step_status(step_state::ready, 4)) == std::vector<kind>{kind::push}));
  auto t = send(ctl); // (the round's pushes: the leave waits for them)
  BOOST_TEST(ctl.leave().empty());
  ctl.answers(0, t.e0);
  ctl.pushed(0, 2, 2, false);
  ctl.answers(1, t.e1);
  auto cmds = ctl.pushed(1, 2, 2, false);
  BOOST_REQUIRE(has(cmds, kind::leave));
  auto report = find(cmds, kind::leave)->lease.finished;
  BOOST_REQUIRE(report.size() == 2u);
  BOOST_TEST(report[0].id == 5u);
  BOOST_TEST(report[0].done == 8);
  BOOST_TEST(report[1].id == 6u);
  BOOST_TEST(report[1].done == 0);
}

BOOST_AUTO_TEST_CASE(a_restarted_chiefs_leases_replace_the_old_ones_and_late_answers_are_void) {
  controller ctl(leased_config());
  starving(ctl);
  ctl.chief_down("the chief went down");
  BOOST_TEST(has(ctl.chief_reconnected(t0), kind::register_hello));
  BOOST_TEST(ctl.lease_answered(0, lease_of(9, 4)).empty()); // the old chief's lease
  ctl.registered(-1, false, 2);
  BOOST_TEST(has(ctl.start(), kind::pull));
  auto cmds = answer_pull(ctl);
  BOOST_REQUIRE((kinds(cmds) == std::vector<kind>{kind::ask_lease}));
  BOOST_TEST(find(cmds, kind::ask_lease)->epoch == 1u);
  BOOST_TEST(find(cmds, kind::ask_lease)->lease.finished.empty());
  BOOST_TEST(has(ctl.lease_answered(1, lease_of(1, 4)), kind::compute));
}

// Reaching lost shards no longer blocks the actor: inputs arrive while it is under way.
BOOST_AUTO_TEST_CASE(a_shard_lost_while_others_are_reached_is_reached_next) {
  controller ctl(config());
  start(ctl);
  auto t = send(ctl);
  ctl.shard_down(1, "shard 1 went down");
  ctl.answers(0, t.e0);
  auto cmds = ctl.pulled(0, 0);
  BOOST_REQUIRE((kinds(cmds) == std::vector<kind>{kind::reconnect_shards}));
  BOOST_TEST(ctl.shard_down(0, "shard 0 went down").empty()); // one reconnect at a time
  cmds = ctl.shards_reconnected();
  BOOST_REQUIRE((kinds(cmds) == std::vector<kind>{kind::reconnect_shards}));
  BOOST_TEST((find(cmds, kind::reconnect_shards)->shards == std::vector<uint32_t>{0}));
  BOOST_TEST((kinds(ctl.shards_reconnected()) == std::vector<kind>{kind::retry_after}));
  BOOST_TEST(ctl.shards_reconnected().empty()); // (no reconnect out: a stray result is ignored)
}

BOOST_AUTO_TEST_CASE(a_stop_while_reconnecting_ends_at_once_and_the_late_result_is_void) {
  controller ctl(config());
  start(ctl);
  send(ctl);
  auto cmds = ctl.shard_down(0, "shard 0 went down");
  cmds = ctl.shard_down(1, "shard 1 went down");
  BOOST_REQUIRE(has(cmds, kind::reconnect_shards));
  BOOST_TEST((kinds(ctl.stop()) == std::vector<kind>{kind::report, kind::announce_stop, kind::quit}));
  BOOST_TEST(ctl.shards_reconnected().empty());
  BOOST_TEST(ctl.phase() == phase::done);
}

BOOST_AUTO_TEST_CASE(a_start_while_reconnecting_pulls_once_the_shards_are_back) {
  controller ctl(config());
  ctl.begin(t0);
  ctl.registered(-1, false, 2);
  BOOST_REQUIRE(has(ctl.shard_down(0, "gone"), kind::reconnect_shards));
  BOOST_TEST(!has(ctl.start(), kind::pull)); // shard 0's old handle would fail the pull
  BOOST_TEST((kinds(ctl.shards_reconnected()) == std::vector<kind>{kind::retry_after}));
  BOOST_TEST((kinds(ctl.retry()) == std::vector<kind>{kind::pull}));
}

BOOST_AUTO_TEST_SUITE_END()
