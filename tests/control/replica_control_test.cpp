// Tests of control/replica_control: the worker's state machine, input by input, in every phase and
// mode, with no actors and no clock but the one the test passes in (milliseconds per case).
#include "tests/control/replica_control_support.hpp"

BOOST_AUTO_TEST_SUITE(replica_control)

BOOST_AUTO_TEST_CASE(registers_starts_and_runs_pull_compute_push_rounds) {
  controller ctl(config());
  auto cmds = ctl.begin(t0);
  BOOST_TEST(ctl.phase() == phase::registering);
  BOOST_TEST((kinds(cmds) == std::vector<kind>{kind::register_hello, kind::tick_after}));
  BOOST_TEST(find(cmds, kind::tick_after)->after.count() == 20000);
  ctl.registered(-1, false, 2);
  BOOST_TEST(ctl.phase() == phase::waiting_start);
  BOOST_TEST((kinds(ctl.start()) == std::vector<kind>{kind::pull}));
  BOOST_TEST(ctl.phase() == phase::in_round);
  BOOST_TEST((kinds(answer_pull(ctl, 7)) == std::vector<kind>{kind::compute}));
  BOOST_TEST(ctl.version(0) == 7u);
  BOOST_TEST((kinds(one_step(ctl, 1)) == std::vector<kind>{kind::compute}));
  BOOST_TEST(ctl.step() == 1);
  BOOST_TEST(ctl.pending() == 0u);
}

// In-graph, the start begins no loop: the worker serves the chief's requests until the stop,
// then reports (no steps: the chief counted them) and quits; a lost shard is reached again.
BOOST_AUTO_TEST_CASE(in_graph_a_worker_serves_until_the_stop) {
  auto cfg = config(train_mode::sync);
  cfg.in_graph = true;
  controller ctl(cfg);
  BOOST_TEST(kinds(start(ctl)).empty());
  BOOST_TEST(ctl.phase() == phase::serving);
  BOOST_TEST(ctl.tick(t0 + 1h).empty()); // no start deadline while serving
  auto lost = ctl.shard_down(1, "shard 1 went down");
  BOOST_TEST((kinds(lost) == std::vector<kind>{kind::reconnect_shards}));
  BOOST_TEST(kinds(ctl.shards_reconnected()).empty());
  BOOST_TEST(ctl.phase() == phase::serving);
  ctl.part_computed();
  ctl.part_computed();
  auto stop = ctl.stop();
  BOOST_TEST((kinds(stop) == std::vector<kind>{kind::report, kind::announce_stop, kind::quit}));
  BOOST_TEST(find(stop, kind::report)->steps == 0);
  BOOST_TEST(find(stop, kind::report)->final);
  BOOST_TEST(std::any_of(stop.begin(), stop.end(), [](const replica_command& c) {
    return c.text == "stopped after computing 2 in-graph parts";
  }));
}

BOOST_AUTO_TEST_CASE(a_start_that_overtakes_the_welcome_begins_training_on_the_welcome) {
  controller ctl(config());
  ctl.begin(t0);
  BOOST_TEST(ctl.start().empty());
  BOOST_TEST(has(ctl.registered(-1, false, 2), kind::pull));
  BOOST_TEST(ctl.phase() == phase::in_round);
}

BOOST_AUTO_TEST_CASE(reports_every_report_every_steps_and_the_push_names_the_next_step) {
  controller ctl(config());
  start(ctl);
  answer_pull(ctl);
  BOOST_TEST(!has(one_step(ctl, 1), kind::report));
  BOOST_TEST(!has(one_step(ctl, 2), kind::report));
  auto cmds = one_step(ctl, 3);
  BOOST_TEST((kinds(cmds) == std::vector<kind>{kind::report, kind::compute}));
  BOOST_TEST(find(cmds, kind::report)->steps == 3);
  BOOST_TEST(find(cmds, kind::report)->examples == 30);
  BOOST_TEST(!find(cmds, kind::report)->final);
}

BOOST_AUTO_TEST_CASE(the_smallest_next_step_of_the_replies_sets_the_pace) {
  controller ctl(config(train_mode::sync));
  auto t = first_pushes(ctl);
  ctl.answers(0, t.e0);
  ctl.pushed(0, 5, 5, false);
  ctl.answers(1, t.e1);
  ctl.pushed(1, 4, 4, false);
  BOOST_TEST(ctl.step() == 4);
}

BOOST_AUTO_TEST_CASE(stale_gradients_count_as_dropped_not_as_steps) {
  controller ctl(config(train_mode::sync));
  start(ctl);
  answer_pull(ctl);
  one_step(ctl, 1, true);
  one_step(ctl, 2, true);
  BOOST_TEST(ctl.stale_steps() == 2);
  BOOST_TEST(ctl.stop().empty()); // the step begun is finished first
  auto cmds = one_step(ctl, 3);
  BOOST_REQUIRE(has(cmds, kind::quit));
  BOOST_TEST(find(cmds, kind::report)->steps == 1); // the stale steps count nothing
}

// Issue 32, item 1: with backups on two shards a push one shard took and the other dropped was
// counted nowhere. A step is fresh (every shard took it), stale (every shard dropped it) or split
// (some took it); the reports carry the stale and split steps.
BOOST_AUTO_TEST_CASE(a_step_some_shards_dropped_is_counted_as_split) {
  controller ctl(config(train_mode::sync));
  start(ctl);
  answer_pull(ctl);
  one_step(ctl, 1, true); // stale on both shards
  BOOST_REQUIRE(has(ctl.step_status(step_state::ready, 10), kind::push));
  auto t = send(ctl);
  ctl.answers(0, t.e0);
  ctl.pushed(0, 2, 2, false); // shard 0 took it
  ctl.answers(1, t.e1);
  ctl.pushed(1, 2, 2, true); // shard 1 dropped it
  BOOST_TEST(ctl.stale_steps() == 1);
  BOOST_TEST(ctl.split_steps() == 1);
  ctl.stop();
  auto cmds = one_step(ctl, 3);
  BOOST_REQUIRE(has(cmds, kind::report));
  auto& rep = *find(cmds, kind::report);
  BOOST_TEST(rep.steps == 1);
  BOOST_TEST(rep.stale_steps == 1);
  BOOST_TEST(rep.split_steps == 1);
  BOOST_TEST(logs(cmds, "(1 steps dropped as stale, 1 taken by some shards only)"));
}

BOOST_AUTO_TEST_CASE(a_stop_waits_for_the_requests_in_flight_then_reports_and_quits) {
  controller ctl(config());
  start(ctl);
  auto t = send(ctl);
  BOOST_TEST(ctl.stop().empty());
  BOOST_TEST(ctl.phase() == phase::stopping);
  ctl.answers(0, t.e0);
  BOOST_TEST(ctl.pulled(0, 0).empty());
  ctl.answers(1, t.e1);
  auto cmds = ctl.pulled(1, 0);
  BOOST_TEST((kinds(cmds) == std::vector<kind>{kind::report, kind::announce_stop, kind::quit}));
  BOOST_TEST(find(cmds, kind::report)->final);
  BOOST_TEST(ctl.phase() == phase::done);
  BOOST_TEST(ctl.stop().empty());
}

BOOST_AUTO_TEST_CASE(a_stop_before_the_start_quits_at_once) {
  for (bool registered : {false, true}) {
    controller ctl(config());
    ctl.begin(t0);
    if (registered)
      ctl.registered(-1, false, 2);
    BOOST_TEST(has(ctl.stop(), kind::quit));
  }
}

BOOST_AUTO_TEST_CASE(the_only_replica_stops_by_itself_after_its_steps_left) {
  controller ctl(config());
  start(ctl, 2);
  answer_pull(ctl);
  one_step(ctl, 1);
  auto cmds = one_step(ctl, 2);
  BOOST_TEST(has(cmds, kind::quit));
  BOOST_TEST(find(cmds, kind::report)->steps == 2);
  BOOST_TEST(ctl.steps_left() == 0);
}

BOOST_AUTO_TEST_CASE(restored_at_the_step_limit_it_stops_on_the_start) {
  controller ctl(config());
  auto cmds = start(ctl, 0);
  BOOST_TEST(has(cmds, kind::quit));
  BOOST_TEST(!has(cmds, kind::pull));
}

BOOST_AUTO_TEST_CASE(a_used_up_grant_reports_and_waits_for_the_next_grant_or_the_stop) {
  controller ctl(config());
  start(ctl, 2, true);
  answer_pull(ctl);
  one_step(ctl, 1);
  auto cmds = one_step(ctl, 2);
  BOOST_TEST((kinds(cmds) == std::vector<kind>{kind::report}));
  BOOST_TEST(find(cmds, kind::report)->steps == 2);
  BOOST_TEST(ctl.phase() == phase::awaiting_grant);
  BOOST_TEST((kinds(ctl.granted(1)) == std::vector<kind>{kind::compute}));
  BOOST_TEST(ctl.phase() == phase::in_round);
  one_step(ctl, 3);
  BOOST_TEST(ctl.phase() == phase::awaiting_grant);
  cmds = ctl.stop();
  BOOST_TEST(has(cmds, kind::quit));
  BOOST_TEST(find(cmds, kind::report)->steps == 0);
}

BOOST_AUTO_TEST_CASE(a_grant_during_a_round_adds_to_the_steps_left) {
  controller ctl(config());
  start(ctl, 1, true);
  BOOST_TEST(ctl.granted(2).empty());
  BOOST_TEST(ctl.steps_left() == 3);
  answer_pull(ctl);
  one_step(ctl, 1);
  BOOST_TEST(ctl.phase() == phase::in_round);
}

// A worker started with no steps yet pulls the parameters while it waits: its grant begins a
// step on them. (It used to compute its first step on the values it had when the grant came
// after the start: a model-parallel group's first slice trained from its own initial values,
// not the shards', in about half the runs of integration.model_parallel; a worker of a
// restarted chief on the values from before the pause.)
BOOST_AUTO_TEST_CASE(a_welcome_with_no_steps_but_more_to_come_pulls_and_waits_for_a_grant) {
  controller ctl(config());
  auto cmds = start(ctl, 0, true);
  BOOST_TEST(has(cmds, kind::pull));
  BOOST_TEST(ctl.phase() == phase::awaiting_grant);
  BOOST_TEST(!has(answer_pull(ctl), kind::compute));
  BOOST_TEST(has(ctl.granted(1), kind::compute));
  BOOST_TEST(ctl.phase() == phase::in_round);
}

BOOST_AUTO_TEST_CASE(sync_workers_stop_at_the_global_step_limit) {
  auto cfg = config(train_mode::sync);
  cfg.max_steps = 5;
  controller ctl(cfg);
  start(ctl);
  answer_pull(ctl);
  BOOST_TEST(!has(one_step(ctl, 4), kind::quit));
  BOOST_TEST(has(one_step(ctl, 5), kind::quit));
}

BOOST_AUTO_TEST_CASE(a_lost_shard_drops_the_round_reconnects_and_pulls_afresh) {
  controller ctl(config());
  start(ctl);
  auto t = send(ctl);
  BOOST_TEST(ctl.shard_down(1, "shard 1 went down (killed)").empty()); // shard 0 still owes a reply
  BOOST_TEST(!ctl.answers(1, t.e1));                                   // shard 1's late reply is void
  ctl.answers(0, t.e0);
  auto cmds = ctl.pulled(0, 0);
  BOOST_TEST((kinds(cmds) == std::vector<kind>{kind::reconnect_shards}));
  BOOST_TEST((find(cmds, kind::reconnect_shards)->shards == std::vector<uint32_t>{1}));
  cmds = ctl.shards_reconnected();
  BOOST_TEST((kinds(cmds) == std::vector<kind>{kind::retry_after}));
  BOOST_TEST(ctl.phase() == phase::recovering);
  BOOST_TEST((kinds(ctl.retry()) == std::vector<kind>{kind::pull}));
  BOOST_TEST(ctl.phase() == phase::in_round);
  BOOST_TEST(has(answer_pull(ctl), kind::compute));
}

// A step that pulls its table's rows before it computes: a row pull that times out abandons the
// step; the round recovers once the other shard's rows are in (pulls afresh), never pushing.
BOOST_AUTO_TEST_CASE(a_step_whose_rows_could_not_be_pulled_is_abandoned_and_the_round_recovers) {
  controller ctl(config());
  start(ctl);
  BOOST_REQUIRE(has(answer_pull(ctl), kind::compute));
  auto t = send(ctl); // the step's row pulls
  ctl.answers(0, t.e0);
  BOOST_TEST(ctl.request_failed(0, request_failure::timed_out, errc::timeout, "pulling the table's rows").empty());
  BOOST_TEST(ctl.step_abandoned().empty()); // shard 1's rows are still on their way
  BOOST_TEST(ctl.step_status(step_state::ready, 10).empty()); // (no longer computing: nothing to push)
  ctl.answers(1, t.e1);
  BOOST_TEST((kinds(ctl.pulled(1, 3)) == std::vector<kind>{kind::retry_after}));
  BOOST_TEST((kinds(ctl.retry()) == std::vector<kind>{kind::pull}));
  BOOST_TEST(ctl.step_abandoned().empty()); // (outside a step: nothing to give up)
}

BOOST_AUTO_TEST_CASE(a_shard_lost_while_waiting_for_the_start_is_reconnected_at_once) {
  controller ctl(config());
  ctl.begin(t0);
  ctl.registered(-1, false, 2);
  BOOST_TEST(has(ctl.shard_down(0, "gone"), kind::reconnect_shards));
  BOOST_TEST(ctl.shards_reconnected().empty()); // the start pulls
  BOOST_TEST(has(ctl.start(), kind::pull));
}

BOOST_AUTO_TEST_CASE(a_shard_not_restored_yet_repeats_the_pull_without_reconnecting) {
  controller ctl(config());
  start(ctl);
  auto t = send(ctl);
  ctl.answers(0, t.e0);
  ctl.request_failed(0, request_failure::not_ready, errc::not_initialized, "not yet");
  ctl.answers(1, t.e1);
  BOOST_TEST((kinds(ctl.pulled(1, 0)) == std::vector<kind>{kind::retry_after}));
}

BOOST_AUTO_TEST_CASE(failures_the_worker_cannot_survive_fail_it_with_their_code) {
  struct row {
    bool recoverable;
    request_failure how;
    errc code;
  };
  for (auto r : {row{true, request_failure::refused, errc::unknown_variable},
                 row{false, request_failure::not_ready, errc::not_initialized}}) {
    auto cfg = config();
    cfg.shards_recoverable = r.recoverable;
    controller ctl(cfg);
    start(ctl);
    auto t = send(ctl);
    ctl.answers(0, t.e0);
    auto cmds = ctl.request_failed(0, r.how, r.code, "pull from shard 0 failed");
    BOOST_REQUIRE(has(cmds, kind::fail));
    BOOST_TEST(find(cmds, kind::fail)->code == r.code);
    BOOST_TEST(ctl.phase() == phase::done);
    BOOST_TEST(!ctl.answers(1, t.e1)); // nothing counts after the failure
  }
  auto cfg = config();
  cfg.shards_recoverable = false; // model-parallel, or no way to reconnect
  controller ctl(cfg);
  start(ctl);
  auto cmds = ctl.shard_down(0, "shard 0 went down (killed)");
  BOOST_TEST(find(cmds, kind::fail)->code == errc::peer_unreachable);
  BOOST_TEST(find(cmds, kind::fail)->text == "lost a shard: shard 0 went down (killed)");
  controller broken(cfg); // a broken connection: the shard's down message decides
  start(broken);
  auto t = send(broken);
  broken.answers(0, t.e0);
  BOOST_TEST(broken.request_failed(0, request_failure::lost, errc::peer_unreachable, "pull from shard 0 failed").empty());
  BOOST_TEST(broken.phase() != phase::done);
  cmds = broken.shard_down(0, "shard 0 went down (remote_link_unreachable)");
  BOOST_TEST(find(cmds, kind::fail)->text == "lost a shard: shard 0 went down (remote_link_unreachable)");
}

// CI (integration.freeze): a worker frozen through the run's end woke to its pushes failing as
// the shards closed their connections, before it read their normal exits, and set out to reach
// them again ("shard 0 is gone"). A broken connection waits for the shard's down message: a
// normal exit stops the worker quietly; any other reaches the shard again.
BOOST_AUTO_TEST_CASE(a_broken_connection_waits_for_the_shards_down_message) {
  for (bool ended : {true, false}) {
    controller ctl(config(train_mode::sync));
    auto t = first_pushes(ctl);
    ctl.answers(0, t.e0);
    BOOST_TEST(ctl.request_failed(0, request_failure::lost, errc::peer_unreachable, "push to shard 0 failed").empty());
    ctl.answers(1, t.e1);
    BOOST_TEST(ctl.request_failed(1, request_failure::lost, errc::peer_unreachable, "push to shard 1 failed").empty());
    auto cmds = ctl.shard_down(1, ended ? "shard 1 quit" : "shard 1 went down (remote_link_unreachable)", ended);
    BOOST_TEST(cmds.size() == (ended ? 1u : 0u)); // (ended: the log line; shard 0's exit is still due)
    cmds = ctl.shard_down(0, ended ? "shard 0 quit" : "shard 0 went down (remote_link_unreachable)", ended);
    BOOST_TEST(!has(cmds, ended ? kind::reconnect_shards : kind::quit));
    BOOST_TEST(has(cmds, ended ? kind::quit : kind::reconnect_shards));
    if (!ended)
      BOOST_TEST((find(cmds, kind::reconnect_shards)->shards == std::vector<uint32_t>{0, 1}));
  }
  controller early(config(train_mode::sync)); // a down before the plan: the first pull's failure is the loss
  early.begin(t0);
  BOOST_TEST(early.shard_down(0, "shard 0 went down (remote_link_unreachable)").empty());
  early.registered(-1, false, 2);
  BOOST_REQUIRE(has(early.start(), kind::pull));
  auto t = send(early);
  early.answers(0, t.e0);
  BOOST_TEST(early.request_failed(0, request_failure::lost, errc::peer_unreachable, "pull from shard 0 failed").empty());
  early.answers(1, t.e1);
  auto cmds = early.pulled(1, 0);
  BOOST_TEST(has(cmds, kind::reconnect_shards));
}

namespace {

// Sync: shard 0 goes down during the first pushes; the worker reaches it again and is about to
// pull afresh.
void recover(controller& ctl) {
  auto t = first_pushes(ctl);
  ctl.shard_down(0, "gone");
  ctl.answers(1, t.e1);
  ctl.pushed(1, 1, 1, false);
  ctl.shards_reconnected();
  ctl.retry();
}

} // namespace

BOOST_AUTO_TEST_CASE(sync_takes_the_shards_version_as_its_step_after_a_recovery) {
  controller ctl(config(train_mode::sync));
  recover(ctl);
  answer_pull(ctl, 42);
  BOOST_TEST(ctl.step() == 42);
}

// Found by the simulator (sync, shard crashes, seed 2539): after a recovery the worker took the
// highest of the shards' versions as its step; a restored shard that had run ahead (its step
// clock let go of the workers still recovering) made every worker push a step the other shards
// had not reached, which they refuse (and the worker fails). It takes the lowest: a shard ahead
// drops the push as stale and names its step, the others apply it and catch up.
BOOST_AUTO_TEST_CASE(sync_takes_the_lowest_of_the_shards_versions_after_a_recovery) {
  controller ctl(config(train_mode::sync));
  recover(ctl);
  answer_pull(ctl, 37, 36);
  BOOST_TEST(ctl.step() == 36);
}

// Found by the simulator (sync 2373, shard crashes): two workers away while a third trained the
// run to max-steps 79 pulled afresh after their recovery, took the shards' version 79 as their
// step and pushed it: the shards applied an 80th step. The step taken from the shards is
// checked against the limit as the one a push names.
BOOST_AUTO_TEST_CASE(sync_stops_when_the_shards_version_it_resumes_at_is_the_limit) {
  auto c = config(train_mode::sync);
  c.max_steps = 40;
  controller ctl(c);
  recover(ctl);
  auto cmds = answer_pull(ctl, 40);
  BOOST_TEST(!has(cmds, kind::compute));
  BOOST_TEST(has(cmds, kind::report));
  BOOST_TEST(ctl.phase() == phase::done);
}

// Found by the simulator (model-parallel seed 2158, a partition): a slice whose push timed out
// dropped the round as no step, while the other slice of its group, whose push went through,
// counted it. The group's exchange had taken the step: the first slice then needed one step
// more than the other had granted, and both waited for good. A model-parallel step is spent
// once the group computed it, wherever its push went.
BOOST_AUTO_TEST_CASE(a_model_parallel_slice_spends_a_step_whose_push_timed_out) {
  auto c = config(train_mode::model_parallel);
  c.shards_recoverable = false;
  controller ctl(c);
  start(ctl, 2, true);
  answer_pull(ctl);
  BOOST_REQUIRE(has(ctl.step_status(step_state::ready, 10), kind::push));
  auto t = send(ctl);
  BOOST_REQUIRE(ctl.answers(0, t.e0));
  ctl.pushed(0, 1, 1, false);
  BOOST_REQUIRE(ctl.answers(1, t.e1));
  auto cmds = ctl.request_failed(1, request_failure::timed_out, errc::timeout, "push to shard 1 failed: timeout");
  BOOST_TEST(!has(cmds, kind::fail));
  BOOST_TEST(ctl.steps_left() == 1);
  BOOST_TEST(ctl.step() == 1);
}

BOOST_AUTO_TEST_CASE(a_lost_chief_pauses_the_worker_and_the_restarted_one_starts_it_again) {
  controller ctl(config());
  auto t = first_pushes(ctl); // a push in flight when the chief goes
  auto cmds = ctl.chief_down("the chief went down (killed)");
  BOOST_TEST((kinds(cmds) == std::vector<kind>{kind::reconnect_chief}));
  BOOST_TEST(ctl.phase() == phase::paused);
  ctl.answers(0, t.e0);
  ctl.pushed(0, 1, 1, false);
  ctl.answers(1, t.e1);
  BOOST_TEST(!has(ctl.pushed(1, 1, 1, false), kind::compute)); // no new step while paused
  BOOST_TEST(ctl.step() == 1);
  cmds = ctl.chief_reconnected(t0 + 5s);
  BOOST_TEST((kinds(cmds) == std::vector<kind>{kind::register_hello, kind::tick_after}));
  ctl.registered(-1, false, 2);
  BOOST_TEST((kinds(ctl.start()) == std::vector<kind>{kind::pull}));
}

// Found by the simulator (async, seed 106, with overlap and a table, two chief kills): a push in
// flight when the chief went down was answered during the pause and its step reported to the
// restarted chief, which had counted it already from the shards' versions ("continuing at global
// step N"); it stopped at max-steps one step early, and killed again before finishing, its next
// restart waited for workers that had all quit. A step completed while the chief is reached
// again is the restart's to count.
BOOST_AUTO_TEST_CASE(a_step_completed_while_the_chief_is_down_is_not_reported_to_its_restart) {
  controller ctl(config());
  auto t = first_pushes(ctl);
  ctl.chief_down("the chief went down (killed)");
  ctl.answers(0, t.e0);
  ctl.pushed(0, 1, 1, false);
  ctl.answers(1, t.e1);
  ctl.pushed(1, 1, 1, false); // step 0 applied on both shards: in their versions
  ctl.chief_reconnected(t0 + 5s);
  ctl.registered(-1, false, 2);
  ctl.start();
  answer_pull(ctl, 1);
  std::vector<int64_t> reported; // report-every 3: the first report after three steps of the restart
  for (uint64_t v = 2; v <= 4; ++v) {
    auto cmds = one_step(ctl, v);
    reported.push_back(has(cmds, kind::report) ? find(cmds, kind::report)->steps : 0);
  }
  BOOST_TEST(reported == (std::vector<int64_t>{0, 0, 3})); // (not 3 after two: step 0 counted twice)
}

// Found by the simulator (async, seed 1069 of --shard-freezes, with a table and a chief restart):
// a worker paused for its restarting chief lost a shard (its link's deadline passed: the shard was
// frozen) and was still reaching it again when the restarted chief started it with no steps yet.
// The start pulled nothing (a round in flight goes on by itself), the shard was reached after,
// and the grant then began a step on the values from before the pause, missing the worker's own
// last update. A started worker waiting for its grant pulls afresh once its lost shards are back.
BOOST_AUTO_TEST_CASE(a_shard_reached_again_after_the_start_is_pulled_afresh_before_the_grants_step) {
  controller ctl(config());
  auto t = first_pushes(ctl); // a push in flight when the chief goes
  ctl.chief_down("the chief went down (killed)");
  BOOST_REQUIRE(ctl.answers(0, t.e0));
  ctl.pushed(0, 1, 1, false);
  BOOST_REQUIRE(ctl.answers(1, t.e1)); // shard 1's push fails at its link's deadline: the link ends
  ctl.request_failed(1, request_failure::lost, errc::peer_unreachable, "shard 1: no answer within cluster.request-timeout");
  BOOST_TEST(has(ctl.shard_down(1, "shard 1's link ended"), kind::reconnect_shards));
  ctl.chief_reconnected(t0 + 5s);
  ctl.registered(0, true, 2); // the restart has no steps for it yet
  BOOST_TEST(!has(ctl.start(), kind::pull)); // (shard 1 is being reached)
  BOOST_TEST(ctl.phase() == phase::awaiting_grant);
  BOOST_TEST(has(ctl.shards_reconnected(), kind::pull));
  BOOST_TEST(!has(ctl.granted(1), kind::compute)); // (the values first)
  BOOST_TEST(has(answer_pull(ctl, 2), kind::compute));
  BOOST_TEST(ctl.base_version(1) == 2u);
}

BOOST_AUTO_TEST_CASE(a_round_in_flight_across_a_restart_goes_on_when_started) {
  controller ctl(config());
  start(ctl);
  auto t = send(ctl);
  ctl.chief_down("gone");
  ctl.chief_reconnected(t0);
  ctl.registered(-1, false, 2);
  BOOST_TEST(!has(ctl.start(), kind::pull)); // the pull in flight is the step's
  ctl.answers(0, t.e0);
  ctl.pulled(0, 0);
  ctl.answers(1, t.e1);
  BOOST_TEST(has(ctl.pulled(1, 0), kind::compute));
}

// Found by the simulator (ssp, seed 4049): a chief killed while its workers were stopping made
// them fail ("lost the chief"), and its restart then waited for workers that were all gone. A
// worker stopping for the chief's stop reaches the restart, which decides again; one leaving the
// job (SIGTERM) or without a way back fails.
BOOST_AUTO_TEST_CASE(losing_the_chief_while_leaving_or_without_a_way_back_fails) {
  controller stopping(config());
  start(stopping);
  send(stopping);
  stopping.stop();
  BOOST_TEST(has(stopping.chief_down("gone"), kind::reconnect_chief));
  BOOST_TEST(stopping.phase() == phase::paused);
  controller leaving(config());
  start(leaving);
  send(leaving);
  leaving.leave();
  BOOST_TEST(find(leaving.chief_down("gone"), kind::fail)->code == errc::peer_unreachable);
  auto cfg = config();
  cfg.chief_recoverable = false;
  controller fatal(cfg);
  start(fatal);
  BOOST_TEST(has(fatal.chief_down("gone"), kind::fail));
}

BOOST_AUTO_TEST_CASE(the_start_deadline_fails_a_worker_that_is_never_started) {
  controller ctl(config());
  ctl.begin(t0);
  BOOST_TEST(ctl.tick(t0 + 10s).empty()); // an earlier tick
  ctl.registered(-1, false, 2);
  auto cmds = ctl.tick(t0 + 20s);
  BOOST_TEST(find(cmds, kind::fail)->code == errc::timeout);

  controller started(config());
  start(started);
  BOOST_TEST(started.tick(t0 + 20s).empty());

  controller restarted(config()); // re-registering after a chief restart arms a new deadline
  start(restarted);
  restarted.chief_down("gone");
  restarted.chief_reconnected(t0 + 15s);
  BOOST_TEST(restarted.tick(t0 + 20s).empty());
  BOOST_TEST(has(restarted.tick(t0 + 35s), kind::fail));
}

BOOST_AUTO_TEST_CASE(a_slice_inside_a_step_finishes_it_before_it_stops) {
  controller ctl(config(train_mode::model_parallel));
  start(ctl);
  answer_pull(ctl);
  BOOST_TEST(ctl.step_status(step_state::waiting, 0).empty());
  BOOST_TEST(ctl.stop().empty()); // the other slices wait for my parts
  auto cmds = one_step(ctl, 1);
  BOOST_TEST((kinds(cmds) == std::vector<kind>{kind::report, kind::announce_stop, kind::quit}));
  BOOST_TEST(find(cmds, kind::report)->steps == 1);
}

BOOST_AUTO_TEST_CASE(a_slice_whose_group_stopped_drops_the_step_and_stops) {
  controller ctl(config(train_mode::model_parallel));
  start(ctl);
  answer_pull(ctl);
  auto cmds = ctl.step_status(step_state::stopped, 0);
  BOOST_TEST(has(cmds, kind::quit));
  BOOST_TEST(find(cmds, kind::report)->examples == 0);
}

BOOST_AUTO_TEST_CASE(slices_other_than_the_first_report_nothing_for_their_group) {
  auto cfg = config(train_mode::model_parallel);
  cfg.speaks_for_group = false;
  controller ctl(cfg);
  start(ctl);
  answer_pull(ctl);
  one_step(ctl, 1);
  one_step(ctl, 2);
  auto cmds = one_step(ctl, 3);
  BOOST_TEST(find(cmds, kind::report)->steps == 0);
  BOOST_TEST(find(cmds, kind::report)->examples == 0);
}

BOOST_AUTO_TEST_CASE(a_leave_finishes_the_round_in_flight_then_reports_and_leaves) {
  for (auto mode : {train_mode::async, train_mode::sync, train_mode::ssp}) {
    BOOST_TEST_CONTEXT("mode " << to_string(mode)) {
      controller ctl(config(mode));
      start(ctl);
      auto t = send(ctl);
      BOOST_TEST(ctl.leave().empty()); // the pull round is in flight
      BOOST_TEST(ctl.phase() == phase::stopping);
      ctl.answers(0, t.e0);
      ctl.pulled(0, 0);
      ctl.answers(1, t.e1);
      auto cmds = ctl.pulled(1, 0);
      BOOST_TEST((kinds(cmds) == std::vector<kind>{kind::report, kind::announce_stop, kind::leave}));
      BOOST_TEST(!find(cmds, kind::report)->final); // the chief hears a leave, not a stop
      BOOST_TEST(ctl.phase() == phase::done);
      BOOST_TEST(ctl.leave().empty());
    }
  }
}

BOOST_AUTO_TEST_CASE(a_leave_before_registering_quits_and_after_it_tells_the_chief) {
  controller early(config());
  early.begin(t0);
  BOOST_TEST((kinds(early.leave()) == std::vector<kind>{kind::quit}));
  controller waiting(config());
  waiting.begin(t0);
  waiting.registered(-1, false, 2);
  BOOST_TEST(has(waiting.leave(), kind::leave)); // a member: the chief must know
}

// Issue 32, item 8: a learning rate of 1e9 ended in "lost every worker" with no step named. A
// push refused for non-finite gradients is a divergence: the failure names the step and the fix.
BOOST_AUTO_TEST_CASE(non_finite_gradients_fail_as_a_divergence_naming_the_step) {
  controller ctl(config());
  start(ctl);
  answer_pull(ctl);
  one_step(ctl, 1);
  one_step(ctl, 2);
  BOOST_REQUIRE(has(ctl.step_status(step_state::ready, 10), kind::push));
  auto t = send(ctl);
  ctl.answers(0, t.e0);
  auto cmds = ctl.request_failed(0, request_failure::refused, errc::non_finite,
                                 "push to shard 0 failed: non_finite: shard 0: gradient of w from worker 0 is not finite");
  BOOST_REQUIRE(has(cmds, kind::fail));
  BOOST_TEST(find(cmds, kind::fail)->code == errc::non_finite);
  BOOST_TEST(find(cmds, kind::fail)->text
             == "training diverged at step 2: push to shard 0 failed: non_finite: shard 0: gradient of w from worker 0 "
                "is not finite; lower train.learning-rate");
}

// Issue 32, item 6: a worker frozen past cluster.request-timeout (SIGSTOP) found its requests
// timed out on waking and reconnected to a shard that never went down ("shard 0 is gone"). A
// timeout is not a lost connection: the round is dropped and pulled afresh, nothing reconnects.
BOOST_AUTO_TEST_CASE(a_request_timeout_pulls_afresh_without_reconnecting) {
  controller ctl(config(train_mode::sync));
  auto t = first_pushes(ctl);
  ctl.answers(0, t.e0);
  BOOST_TEST(ctl.request_failed(0, request_failure::timed_out, errc::timeout, "push to shard 0 failed: request_timeout").empty());
  ctl.answers(1, t.e1);
  auto cmds = ctl.request_failed(1, request_failure::timed_out, errc::timeout, "push to shard 1 failed: request_timeout");
  BOOST_TEST((kinds(cmds) == std::vector<kind>{kind::retry_after}));
  BOOST_TEST((kinds(ctl.retry()) == std::vector<kind>{kind::pull}));
}

// Issue 32, item 6 (waking up late): a worker frozen through the end of the run wakes to the
// chief's stop, then its shards and its chief going down as the run ends. It reconnected to the
// stopped shard for cluster.connect-timeout and exited 1. Told to stop, it neither reconnects
// nor fails: a lost shard drops the round, and a chief that ended normally ends it too.
BOOST_AUTO_TEST_CASE(a_worker_told_to_stop_ends_quietly_when_the_run_is_over) {
  controller ctl(config(train_mode::sync));
  start(ctl);
  answer_pull(ctl);
  BOOST_REQUIRE(has(ctl.step_status(step_state::ready, 10), kind::push));
  auto t = send(ctl);
  BOOST_TEST(ctl.stop().empty()); // the pushes are in flight
  auto cmds = ctl.shard_down(0, "shard 0 went down (normal)");
  BOOST_TEST(!has(cmds, kind::reconnect_shards));
  cmds = ctl.shard_down(1, "shard 1 went down (normal)");
  BOOST_TEST(!has(cmds, kind::reconnect_shards));
  BOOST_TEST(has(cmds, kind::quit));
  BOOST_TEST(!ctl.answers(0, t.e0));
  controller early(config(train_mode::sync)); // a shard that quit before the stop arrived (another connection)
  start(early);
  answer_pull(early);
  BOOST_REQUIRE(has(early.step_status(step_state::ready, 10), kind::push));
  send(early);
  cmds = early.shard_down(0, "shard 0 quit", true);
  BOOST_TEST(!has(cmds, kind::reconnect_shards));
  BOOST_TEST(early.phase() == phase::stopping);
  cmds = early.shard_down(1, "shard 1 quit", true);
  BOOST_TEST(has(cmds, kind::quit));
  controller late(config(train_mode::sync));
  start(late);
  answer_pull(late);
  late.stop();
  auto ended = late.chief_down("the chief went down (normal)", true);
  BOOST_TEST(!has(ended, kind::fail));
  BOOST_TEST(has(ended, kind::quit));
  controller lost(config(train_mode::sync)); // a chief lost while stopping: wait for its restart
  start(lost);
  answer_pull(lost);
  lost.stop();
  BOOST_TEST(has(lost.chief_down("the chief went down (killed)"), kind::reconnect_chief));
}

// Found by the simulator (async, seed 3 with chief crashes): after a chief restart the workers'
// first reports carried the steps since their last report, which the restarted chief had counted
// already (the shards' step, or its checkpoint's): the run ended early in counted steps. A
// re-registration starts the reports afresh.
BOOST_AUTO_TEST_CASE(reports_start_afresh_after_registering_with_a_restarted_chief) {
  controller ctl(config()); // reports every 3 steps
  start(ctl);
  answer_pull(ctl);
  one_step(ctl, 1);
  one_step(ctl, 2); // 2 steps not reported yet
  BOOST_REQUIRE(has(ctl.chief_down("the chief went down (killed)"), kind::reconnect_chief));
  ctl.chief_reconnected(t0);
  ctl.registered(-1, false, 2);
  ctl.start();
  one_step(ctl, 3);
  one_step(ctl, 4);
  auto cmds = one_step(ctl, 5);
  BOOST_REQUIRE(has(cmds, kind::report));
  BOOST_TEST(find(cmds, kind::report)->steps == 3); // not 5
}

// Found by the simulator (async, seed 1238, a chief restart): a grant the chief sent while
// answering a registration overtook the welcome, whose steps_left then overwrote it; the chief
// counted the grant as held and the run waited forever. Grants that come first are kept.
BOOST_AUTO_TEST_CASE(a_grant_that_overtakes_the_welcome_is_kept) {
  controller ctl(config());
  ctl.begin(t0);
  BOOST_TEST(ctl.granted(4).empty());
  ctl.registered(0, true, 2);
  BOOST_TEST(ctl.steps_left() == 4);
}

// Found by the simulator (ssp, seed 8117, chief restarts): a worker that registered with the
// restarted chief while its push was still in flight waited for a grant; the grant began a new
// step at once and pushed the same step again. The round in flight finishes first.
BOOST_AUTO_TEST_CASE(a_grant_does_not_begin_a_step_while_a_round_is_in_flight) {
  controller ctl(config());
  auto t = first_pushes(ctl); // the pushes of step 0 are in flight
  BOOST_REQUIRE(has(ctl.chief_down("the chief went down (killed)"), kind::reconnect_chief));
  ctl.chief_reconnected(t0);
  ctl.registered(0, true, 2);
  ctl.start(); // no steps yet: waits for a grant, the pushes still in flight
  BOOST_TEST(!has(ctl.granted(3), kind::compute));
  ctl.answers(0, t.e0);
  ctl.pushed(0, 1, 1, false);
  ctl.answers(1, t.e1);
  BOOST_TEST(has(ctl.pushed(1, 1, 1, false), kind::compute)); // now the next step
  BOOST_TEST(ctl.step() == 1);
}

// Found by the simulator (ssp, seed 19846, a chief restart): a round from before the restart
// used up the new grant while the worker waited for the start; it reported nothing, the chief
// held the grant as unused, and both waited for good. That step is the restart's to count from
// the shards (above): it leaves the grant alone, and the started worker uses and reports it.
BOOST_AUTO_TEST_CASE(a_round_from_before_the_restart_leaves_the_new_grant_to_the_started_worker) {
  controller ctl(config());
  auto t = first_pushes(ctl);
  ctl.chief_down("the chief went down (killed)");
  ctl.chief_reconnected(t0);
  ctl.registered(1, true, 2); // one step granted by the restarted chief; not started yet
  ctl.answers(0, t.e0);
  ctl.pushed(0, 1, 1, false);
  ctl.answers(1, t.e1);
  auto cmds = ctl.pushed(1, 1, 1, false); // the round from before ends
  BOOST_TEST(!has(cmds, kind::report));
  BOOST_TEST(ctl.phase() == phase::waiting_start);
  BOOST_TEST(ctl.steps_left() == 1);
  BOOST_TEST(has(ctl.start(), kind::pull));
  BOOST_TEST(has(answer_pull(ctl, 1), kind::compute));
  cmds = one_step(ctl, 2);
  BOOST_REQUIRE(has(cmds, kind::report)); // the grant used up: reported, and more asked for
  BOOST_TEST(find(cmds, kind::report)->steps == 1);
  BOOST_TEST(ctl.phase() == phase::awaiting_grant);
}

BOOST_AUTO_TEST_SUITE_END()
