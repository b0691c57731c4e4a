// Tests of control/replica_control with cluster.overlap-steps = 1 (async): the next step computes
// while this step's pushes and their replies (the next values) travel; its gradients go out once
// those replies are in, and any break, stop or pause drops the step computed ahead.
#include "tests/control/replica_control_support.hpp"

namespace {

replica_control_config overlapping(train_mode mode = train_mode::async) {
  auto c = config(mode);
  c.overlap_steps = 1;
  return c;
}

// Both pushes just sent (epochs t) answered at version v; returns the commands of the last reply.
replica_commands answer_pushes(controller& ctl, round_tokens t, uint64_t v) {
  BOOST_REQUIRE(ctl.answers(0, t.e0));
  ctl.pushed(0, v, v, false);
  BOOST_REQUIRE(ctl.answers(1, t.e1));
  return ctl.pushed(1, v, v, false);
}

} // namespace

BOOST_AUTO_TEST_SUITE(replica_control_overlap)

BOOST_AUTO_TEST_CASE(the_next_step_computes_while_the_pushes_travel_and_pushes_once_they_are_answered) {
  controller ctl(overlapping());
  start(ctl);
  answer_pull(ctl, 4);
  BOOST_TEST(ctl.pushes_early()); // the first step: no exchange in flight, wait-free parts may go
  auto ready = ctl.step_status(step_state::ready, 10);
  BOOST_TEST((kinds(ready) == std::vector<kind>{kind::push, kind::compute}));
  auto t = send(ctl);              // step 0's pushes, based on version 4
  BOOST_TEST(ctl.base_version(0) == 4u);
  BOOST_TEST(!ctl.pushes_early()); // step 1 computes ahead: its parts wait for step 0's replies
  BOOST_TEST(ctl.step_status(step_state::ready, 10).empty()); // step 1 is ready before the replies
  BOOST_TEST(ctl.pending() == 2u);
  auto cmds = answer_pushes(ctl, t, 5);
  BOOST_TEST((kinds(cmds) == std::vector<kind>{kind::push, kind::compute})); // step 1's push, step 2 ahead
  BOOST_TEST(ctl.step() == 5);
  BOOST_TEST(ctl.base_version(0) == 4u); // step 1 was computed on version 4, before step 0's reply
  BOOST_TEST(ctl.version(0) == 5u);
}

BOOST_AUTO_TEST_CASE(replies_that_come_before_the_step_ahead_is_ready_push_it_when_it_is) {
  controller ctl(overlapping());
  auto t = first_pushes(ctl); // step 0's pushes sent, step 1 computing ahead
  BOOST_TEST(answer_pushes(ctl, t, 1).empty()); // step 1 is still computing
  auto ready = ctl.step_status(step_state::ready, 10);
  BOOST_TEST((kinds(ready) == std::vector<kind>{kind::push, kind::compute}));
  BOOST_TEST(ctl.base_version(1) == 0u);
}

BOOST_AUTO_TEST_CASE(every_step_is_counted_once_and_examples_with_it) {
  controller ctl(overlapping());
  start(ctl);
  answer_pull(ctl);
  ctl.step_status(step_state::ready, 10);
  replica_commands last;
  for (uint64_t v = 1; v <= 3; ++v) {
    auto t = send(ctl);
    ctl.step_status(step_state::ready, 10); // the step ahead
    last = answer_pushes(ctl, t, v);
  }
  BOOST_TEST((kinds(last) == std::vector<kind>{kind::report, kind::push, kind::compute}));
  BOOST_TEST(find(last, kind::report)->steps == 3);
  BOOST_TEST(find(last, kind::report)->examples == 30); // (the step pushed with it counts in the next)
}

BOOST_AUTO_TEST_CASE(no_step_is_computed_ahead_past_the_steps_left) {
  controller ctl(overlapping());
  start(ctl, 2);
  answer_pull(ctl);
  BOOST_TEST((kinds(ctl.step_status(step_state::ready, 10)) == std::vector<kind>{kind::push, kind::compute}));
  auto t = send(ctl);
  ctl.step_status(step_state::ready, 10);
  BOOST_TEST((kinds(answer_pushes(ctl, t, 1)) == std::vector<kind>{kind::push})); // the last step: none ahead
  auto end = answer_pushes(ctl, send(ctl), 2);
  BOOST_TEST(has(end, kind::quit));
  BOOST_TEST(find(end, kind::report)->steps == 2);
}

// ssp too: the shard holds a reply while the worker is too far ahead, and the step computed
// ahead waits for it like any reply (the values are then staleness + 1 steps old at most).
BOOST_AUTO_TEST_CASE(async_and_ssp_overlap_sync_and_slices_do_not) {
  for (auto mode : {train_mode::sync, train_mode::model_parallel}) {
    controller ctl(overlapping(mode));
    start(ctl);
    answer_pull(ctl);
    BOOST_TEST((kinds(ctl.step_status(step_state::ready, 10)) == std::vector<kind>{kind::push}));
  }
  controller ssp(overlapping(train_mode::ssp));
  start(ssp);
  answer_pull(ssp);
  BOOST_TEST((kinds(ssp.step_status(step_state::ready, 10)) == std::vector<kind>{kind::push, kind::compute}));
  auto leased = overlapping();
  leased.leased = true;
  controller ctl(leased);
  BOOST_TEST(!ctl.overlaps());
}

BOOST_AUTO_TEST_CASE(a_lost_shard_drops_the_step_computed_ahead_and_waits_for_it_before_the_next) {
  controller ctl(overlapping());
  auto t = first_pushes(ctl); // step 0's pushes sent, step 1 computing ahead
  BOOST_TEST(ctl.shard_down(1, "shard 1 went down").empty()); // shard 0 still owes its reply
  ctl.answers(0, t.e0);
  BOOST_TEST((kinds(ctl.pushed(0, 1, 1, false)) == std::vector<kind>{kind::reconnect_shards}));
  BOOST_TEST((kinds(ctl.shards_reconnected()) == std::vector<kind>{kind::retry_after}));
  BOOST_TEST((kinds(ctl.retry()) == std::vector<kind>{kind::pull}));
  BOOST_TEST(answer_pull(ctl, 1).empty()); // the dropped step is still computing: no second compute
  auto after = ctl.step_status(step_state::ready, 10); // it ends, and is dropped
  BOOST_TEST((kinds(after) == std::vector<kind>{kind::compute}));
  BOOST_TEST(ctl.pushes_early());
  BOOST_TEST((kinds(ctl.step_status(step_state::ready, 10)) == std::vector<kind>{kind::push, kind::compute}));
}

BOOST_AUTO_TEST_CASE(a_stop_drops_the_step_computed_ahead_and_quits_once_the_replies_are_in) {
  controller ctl(overlapping());
  auto t = first_pushes(ctl); // step 0's pushes sent, step 1 computing ahead
  BOOST_TEST(ctl.stop().empty()); // step 0's pushes and step 1's compute are in flight
  BOOST_TEST(answer_pushes(ctl, t, 1).empty());
  auto end = ctl.step_status(step_state::ready, 10);
  BOOST_TEST((kinds(end) == std::vector<kind>{kind::report, kind::announce_stop, kind::quit}));
  BOOST_TEST(find(end, kind::report)->steps == 1); // step 0 only: step 1 was never pushed
  BOOST_TEST(find(end, kind::report)->examples == 10);
}

BOOST_AUTO_TEST_CASE(a_pause_for_the_chief_drops_a_step_ready_ahead) {
  controller ctl(overlapping());
  auto t = first_pushes(ctl); // step 0's pushes sent, step 1 computing ahead
  ctl.step_status(step_state::ready, 10);
  ctl.chief_down("chief went down");
  BOOST_TEST(answer_pushes(ctl, t, 1).empty()); // paused: no push of the step ahead, no compute
  ctl.chief_reconnected(t0);
  ctl.registered(-1, false, 2);
  BOOST_TEST((kinds(ctl.start()) == std::vector<kind>{kind::pull}));
  BOOST_TEST((kinds(answer_pull(ctl, 1)) == std::vector<kind>{kind::compute}));
}

// An embedding table's step computed ahead computes once its rows are in (asked back with an
// earlier push); when the push or pull carrying them fails, the step ahead is given up, not the
// round's: it is dropped, and the worker goes on once the round settles.
BOOST_AUTO_TEST_CASE(a_step_ahead_whose_rows_are_given_up_is_dropped) {
  controller ctl(overlapping());
  auto t = first_pushes(ctl); // step 0's pushes sent, step 1 ahead, waiting for its rows
  BOOST_TEST(ctl.step_abandoned().empty()); // its rows' push timed out: the step ahead is dropped
  BOOST_TEST(ctl.step_status(step_state::ready, 10).empty()); // (a late end of it changes nothing)
  auto cmds = answer_pushes(ctl, t, 1);
  BOOST_TEST((kinds(cmds) == std::vector<kind>{kind::compute})); // the next step, not the dropped one's push
  BOOST_TEST(ctl.pending() == 0u);
}

BOOST_AUTO_TEST_CASE(a_step_ahead_given_up_after_the_replies_lets_the_worker_go_on) {
  controller ctl(overlapping());
  auto t = first_pushes(ctl);
  BOOST_TEST(answer_pushes(ctl, t, 1).empty()); // step 1 still waits for its rows
  auto cmds = ctl.step_abandoned();             // (a pull of them failed)
  BOOST_TEST((kinds(cmds) == std::vector<kind>{kind::compute}));
}

BOOST_AUTO_TEST_SUITE_END()
