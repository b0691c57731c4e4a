// Tests of control/run_control: the chief's state machine's phases, start-up, progress, stop and
// in-graph steps, input by input, with no actors and no clock but the one the test passes in.
// (Its members: run_control_members_test.cpp; the work in flight and shard loss:
// run_control_ops_test.cpp; helpers: run_control_cases.hpp.)
#include "tests/control/run_control_cases.hpp"

#include <algorithm>

using namespace run_control_cases;

BOOST_AUTO_TEST_SUITE(run_control)

BOOST_AUTO_TEST_CASE(starts_once_every_shard_is_set_up_and_every_worker_registered) {
  controller ctl{config()};
  auto cmds = ctl.begin(t0);
  BOOST_TEST(find(cmds, kind::tick)->after.count() == 5000); // the first reminder
  BOOST_TEST((ctl.phase() == run_phase::init_shards));
  BOOST_TEST((ctl.worker_registered(1, t0).code == errc::none)); // registering before the shards are ready is fine
  BOOST_TEST(ctl.missing() == "2 shard(s) to answer their setup");
  ctl.shard_ready(0, t0);
  BOOST_TEST(!has(ctl.shard_ready(1, t0), kind::start_workers));
  BOOST_TEST((ctl.phase() == run_phase::waiting));
  BOOST_TEST(ctl.missing() == "worker 0");
  auto admitted = ctl.worker_registered(0, t0);
  BOOST_TEST((admitted.code == errc::none));
  BOOST_TEST(admitted.steps_left == -1); // two workers: nobody's steps are the global steps
  BOOST_TEST(has(admitted.then, kind::start_workers));
  BOOST_TEST(logs(admitted.then, "all 2 workers registered; training (async)"));
  BOOST_TEST((ctl.phase() == run_phase::training));
}

BOOST_AUTO_TEST_CASE(the_only_worker_is_told_how_many_steps_are_left) {
  for (auto mode : {train_mode::async, train_mode::ssp, train_mode::sync}) {
    auto c = config(mode);
    c.workers = 1;
    c.replicas_to_aggregate = 1;
    controller ctl{c};
    ctl.resume(4, 200);
    ctl.begin(t0);
    BOOST_TEST(ctl.worker_registered(0, t0).steps_left == (mode == train_mode::sync ? -1 : 6));
  }
}

// Issue 11, item 8: after a chief restart the run's seconds covered only the new chief.
BOOST_AUTO_TEST_CASE(a_resumed_run_counts_the_seconds_of_the_runs_before_it) {
  controller ctl{config()};
  ctl.resume(4, 200, 30.0);
  BOOST_TEST(ctl.seconds(t0) == 30.0);
  start(ctl);
  BOOST_TEST(ctl.seconds(t0 + 5s) == 35.0);
}

// Issue 15 (resource containers): a session attaching to a scope's kept variables continues at
// the global step they are at -- the highest shard version, per slice -- and the steps left
// count from there; a checkpoint resume decides instead when there is one.
BOOST_AUTO_TEST_CASE(a_session_on_kept_variables_continues_their_global_step) {
  for (auto mode : {train_mode::async, train_mode::sync}) {
    auto c = config(mode);
    c.workers = 1;
    c.replicas_to_aggregate = 1;
    c.max_steps = 10;
    controller ctl{c};
    ctl.begin(t0);
    BOOST_TEST(ctl.shard_ready(0, t0, 4).empty()); // shards may be a few updates apart (async)
    auto out = ctl.shard_ready(1, t0, 6);
    BOOST_TEST(logs(out, "the shards kept this scope's variables: continuing at global step 6"));
    BOOST_TEST(ctl.attached_step() == 6);
    BOOST_TEST(ctl.steps() == 6);
    BOOST_TEST(ctl.worker_registered(0, t0).steps_left == (mode == train_mode::sync ? -1 : 4));
  }
  auto mp = config(train_mode::model_parallel);
  mp.slices = 2;
  controller sliced{mp};
  sliced.begin(t0);
  sliced.shard_ready(0, t0, 14);
  sliced.shard_ready(1, t0, 14);
  BOOST_TEST(sliced.steps() == 7); // every slice pushes each step
  controller fresh{config()};
  fresh.begin(t0);
  fresh.shard_ready(0, t0);
  BOOST_TEST(!logs(fresh.shard_ready(1, t0), "continuing"));
  BOOST_TEST(fresh.attached_step() == -1);
  controller restored{config()};
  restored.resume(3, 150);
  restored.begin(t0);
  restored.shard_ready(0, t0);
  restored.shard_ready(1, t0);
  BOOST_TEST(restored.steps() == 3); // the checkpoint's step: the shards were set up from it
  BOOST_TEST(restored.attached_step() == -1);
}

// Issue 32, item 3: a chief killed and restarted with checkpoints ended with steps 6022 but
// global_step 6322: it resumed the checkpoint's global step while the shards, never restarted,
// kept their variables at a later one. The shards' state is the model: their step wins.
BOOST_AUTO_TEST_CASE(a_restarted_chief_continues_at_the_shards_step_when_they_are_ahead) {
  controller restarted{config()};
  restarted.resume(3, 150);
  restarted.begin(t0);
  restarted.shard_ready(0, t0, 9);
  auto out = restarted.shard_ready(1, t0, 8); // (async shards may be a few updates apart)
  BOOST_TEST(restarted.steps() == 9);
  BOOST_TEST(logs(out, "the shards' variables are at global step 9, past the checkpoint's 3: continuing there"));
  controller behind{config()}; // kept versions at or below the checkpoint's: the checkpoint's
  behind.resume(12, 600);
  behind.begin(t0);
  behind.shard_ready(0, t0, 12);
  behind.shard_ready(1, t0, 12);
  BOOST_TEST(behind.steps() == 12);
}

// Found by the simulator (async 1171, shard crashes): a checkpoint's shard snapshots hold the
// updates applied when it was taken, more than the steps reported by then (114 counted, the
// snapshot at 124). A restarted chief that set a lost shard up from that snapshot resumed the
// count at 114 and its workers took 10 steps more than max-steps. The snapshot's version is
// the shard's step, as a kept one is.
BOOST_AUTO_TEST_CASE(a_restarted_chief_counts_the_updates_its_checkpoints_snapshot_holds) {
  controller restarted{config()};
  restarted.resume(3, 150);
  restarted.begin(t0);
  restarted.shard_ready(0, t0, 5); // set up from the checkpoint's snapshot, at version 5
  auto out = restarted.shard_ready(1, t0, 4);
  BOOST_TEST(restarted.steps() == 5);
  BOOST_TEST(logs(out, "the shards' variables are at global step 5, past the checkpoint's 3: continuing there"));
}

BOOST_AUTO_TEST_CASE(counts_global_steps_per_mode) {
  for (auto [mode, expected] : {std::pair{train_mode::async, 7}, std::pair{train_mode::ssp, 7},
                                std::pair{train_mode::sync, 3}}) {
    auto c = config(mode);
    c.max_steps = 0;
    controller ctl{c};
    start(ctl);
    ctl.progress(0, 4, 40, 1.0, false, t0, 3); // sync: the global step the worker is at
    ctl.progress(1, 3, 30, 1.0, false, t0, 3);
    BOOST_TEST(ctl.steps() == expected);
    BOOST_TEST(ctl.worker_steps() == 7);
    BOOST_TEST(ctl.examples() == 70);
  }
}

// Issue 32, item 1: sync with a backup worker on two shards: a push one shard takes and the other
// drops as stale is no fresh step of its worker, but the shards' step advanced. The global step
// is the one the workers report, not their fresh steps divided by replicas_to_aggregate.
BOOST_AUTO_TEST_CASE(sync_global_step_is_the_shards_step) {
  auto c = config(train_mode::sync);
  c.max_steps = 0;
  c.replicas_to_aggregate = 1;
  controller ctl{c};
  start(ctl);
  ctl.progress(0, 2, 20, 1.0, false, t0, 5);
  ctl.progress(1, 1, 10, 1.0, false, t0, 4); // (a report from behind does not move it back)
  BOOST_TEST(ctl.steps() == 5);
  BOOST_TEST(ctl.worker_steps() == 3);
}

BOOST_AUTO_TEST_CASE(stops_at_the_limit_and_finishes_after_every_final_report) {
  controller ctl{config(train_mode::async, false)};
  start(ctl);
  auto cmds = ctl.progress(0, 10, 10, 1.0, false, t0);
  BOOST_TEST(has(cmds, kind::stop_workers));
  BOOST_TEST(find(cmds, kind::tick)->after.count() == 60000); // the final reports' deadline
  BOOST_TEST(ctl.stop_reason() == "max steps 10 reached");
  BOOST_TEST(!has(ctl.progress(0, 1, 1, 0.0, true, t0), kind::finish));
  cmds = ctl.progress(1, 1, 1, 0.0, true, t0);
  auto* fin = find(cmds, kind::finish);
  BOOST_REQUIRE(fin);
  BOOST_TEST(ctl.steps() == 12);
  cmds = ctl.finished(fin->op);
  BOOST_TEST(has(cmds, kind::quit)); // no checkpoint.dir: no final save
  BOOST_TEST((ctl.phase() == run_phase::done));
}

// Found by the simulator (ssp seed 5683 with shard crashes and damaged checkpoints): a chief
// killed after the workers' final reports, while it evaluated and wrote the summary, came back
// on the last periodic checkpoint, below max-steps, and waited for workers that had ended with
// the run until cluster.startup-timeout failed it. With checkpoint.dir the run's last step is
// saved first, so such a chief resumes a run that had reached its end and finishes it.
BOOST_AUTO_TEST_CASE(the_runs_end_is_saved_before_the_final_evaluation) {
  controller ctl{config(train_mode::async, true)};
  start(ctl);
  ctl.progress(0, 10, 10, 1.0, false, t0); // the limit: stopping
  ctl.progress(0, 1, 1, 0.0, true, t0);
  auto cmds = ctl.progress(1, 1, 1, 0.0, true, t0);
  auto* save = find(cmds, kind::save);
  BOOST_REQUIRE_MESSAGE(save, describe_logs(cmds));
  BOOST_TEST(!has(cmds, kind::finish));
  BOOST_TEST(save->step == 12);
  BOOST_TEST(!save->best);
  BOOST_TEST((ctl.phase() == run_phase::final_save));
  cmds = ctl.saved(save->op);
  auto* fin = find(cmds, kind::finish);
  BOOST_REQUIRE(fin);
  BOOST_TEST((ctl.phase() == run_phase::finishing));
  cmds = ctl.finished(fin->op);
  BOOST_TEST(has(cmds, kind::quit));
  BOOST_TEST(!has(cmds, kind::save)); // (saved already)
  BOOST_TEST((ctl.phase() == run_phase::done));
}

// A final save that fails does not keep the run from its summary (the checkpoints before it
// stay as they were).
BOOST_AUTO_TEST_CASE(a_failed_final_save_still_finishes_the_run) {
  controller ctl{config(train_mode::async, true)};
  start(ctl);
  ctl.progress(0, 10, 10, 1.0, false, t0);
  ctl.progress(0, 1, 1, 0.0, true, t0);
  auto save = *find(ctl.progress(1, 1, 1, 0.0, true, t0), kind::save);
  auto cmds = ctl.failed(save.op, errc::file_error, "disk full");
  BOOST_TEST(logs(cmds, "checkpoint at step 12 failed: disk full; the run finishes without it"), describe_logs(cmds));
  BOOST_TEST(has(cmds, kind::finish));
  BOOST_TEST(!has(cmds, kind::fail));
}

// The training clock stops at the last step's report: the final save, the final evaluation and
// the summary that follow are not training time (the single process does not count its
// evaluations either, and the cluster's examples/s is compared with it).
BOOST_AUTO_TEST_CASE(the_training_seconds_end_with_the_last_report) {
  controller ctl{config(train_mode::async, true)};
  start(ctl);
  ctl.progress(0, 10, 10, 1.0, false, t0 + 8s); // the limit: stopping
  ctl.progress(0, 1, 1, 0.0, true, t0 + 9s);
  BOOST_TEST(ctl.seconds(t0 + 9500ms) == 9.5); // still waiting for a final report: training
  auto cmds = ctl.progress(1, 1, 1, 0.0, true, t0 + 10s);
  BOOST_REQUIRE((ctl.phase() == run_phase::final_save));
  BOOST_TEST(ctl.seconds(t0 + 12s) == 10.0); // the final save runs
  cmds = ctl.saved(find(cmds, kind::save)->op);
  BOOST_REQUIRE(has(cmds, kind::finish));
  BOOST_TEST(ctl.seconds(t0 + 20s) == 10.0); // the final evaluation runs
}

BOOST_AUTO_TEST_CASE(sync_workers_that_stop_by_themselves_end_the_run) {
  controller ctl{config(train_mode::sync, false)};
  start(ctl);
  ctl.progress(0, 10, 10, 1.0, true, t0);
  auto cmds = ctl.progress(1, 10, 10, 1.0, true, t0);
  BOOST_TEST(logs(cmds, "every worker stopped at the step limit"));
  BOOST_TEST(has(cmds, kind::finish));
  BOOST_TEST(!has(cmds, kind::stop_workers));
}

BOOST_AUTO_TEST_CASE(deadlines_fire_only_when_due) {
  controller ctl{config()};
  ctl.begin(t0);
  auto cmds = ctl.tick(t0 + 5s);
  BOOST_TEST(logs(cmds, "waiting for 2 shard(s) to answer their setup"));
  BOOST_TEST(find(cmds, kind::tick)->after.count() == 5000);
  cmds = ctl.tick(t0 + 20s);
  BOOST_REQUIRE(has(cmds, kind::fail));
  BOOST_TEST((find(cmds, kind::fail)->code == errc::timeout));
  BOOST_TEST(find(cmds, kind::fail)->text
             == "start-up failed: no answer from 2 shard(s) to answer their setup within cluster.startup-timeout");

  controller stopping{config(train_mode::async, false)};
  drive_to(stopping, run_phase::stopping);
  BOOST_TEST(stopping.tick(t0 + 30s).empty()); // a start-up reminder, or too early
  cmds = stopping.tick(t0 + 61s);
  BOOST_TEST(logs(cmds, "not every worker sent its final report in time"));
  BOOST_TEST(has(cmds, kind::finish));
}

BOOST_AUTO_TEST_CASE(progress_outside_training_and_from_unknown_workers_is_ignored) {
  controller ctl{config()};
  ctl.begin(t0);
  BOOST_TEST(ctl.progress(0, 100, 100, 1.0, false, t0).empty());
  start(ctl);
  BOOST_TEST(ctl.progress(7, 100, 100, 1.0, false, t0).empty());
  BOOST_TEST(ctl.steps() == 0);
}

// In-graph replication: the chief asks for its own steps, one after another, and stops at the
// step limit exactly (also with an evaluation in flight); a lost shard holds the steps until it
// is restored; workers only send their final reports.
BOOST_AUTO_TEST_CASE(in_graph_steps_are_driven_by_the_chief) {
  auto cfg = config(train_mode::sync);
  cfg.in_graph = true;
  cfg.replicas_to_aggregate = 1;
  cfg.max_steps = 3;
  cfg.eval_every = 2;
  controller ctl{cfg};
  auto started = start(ctl);
  BOOST_TEST(has(started, kind::start_workers));
  BOOST_TEST(has(started, kind::in_graph_step));
  BOOST_TEST(logs(started, "training (sync, in-graph)"));
  auto one = ctl.chief_step(100, 50.0, t0 + 1ms);
  BOOST_TEST(ctl.steps() == 1);
  BOOST_TEST(ctl.examples() == 100);
  BOOST_TEST(has(one, kind::in_graph_step));
  auto two = ctl.chief_step(100, 40.0, t0 + 2ms);
  BOOST_REQUIRE(has(two, kind::evaluate)); // due at step 2; the steps go on meanwhile
  BOOST_TEST(has(two, kind::in_graph_step));
  auto three = ctl.chief_step(100, 30.0, t0 + 3ms);
  BOOST_TEST(ctl.steps() == 3);
  BOOST_TEST(!has(three, kind::in_graph_step)); // the limit: no fourth step
  BOOST_TEST(has(three, kind::stop_workers));
  BOOST_TEST((ctl.phase() == run_phase::stopping));
  BOOST_TEST(ctl.progress(0, 0, 0, 0.0, true, t0 + 4ms).empty());
  auto last = ctl.progress(1, 0, 0, 0.0, true, t0 + 4ms);
  BOOST_TEST(ends(ctl, last));
  BOOST_TEST(ctl.steps() == 3); // the workers' final reports count no steps
}

BOOST_AUTO_TEST_CASE(between_graph_runs_get_no_chief_steps) {
  controller ctl{config(train_mode::sync)};
  BOOST_TEST(!has(start(ctl), kind::in_graph_step));
  BOOST_TEST(ctl.chief_step(100, 1.0, t0).empty());
  BOOST_TEST(ctl.steps() == 0);
}

// Issue 32, item 7: SIGTERM to the chief ended the process with no log line and no summary.
// Now it ends the run as its limit would: the workers are told to stop, their final reports
// come in, then the final evaluation, the final checkpoint and the summary; the reason names it.
BOOST_AUTO_TEST_CASE(sigterm_in_training_ends_the_run_cleanly) {
  for (auto mode : {train_mode::async, train_mode::sync, train_mode::ssp}) {
    auto c = config(mode);
    c.max_steps = 0;
    controller ctl{c};
    start(ctl);
    ctl.progress(0, 3, 30, 1.0, false, t0, 3);
    auto cmds = ctl.terminate(t0 + 1s);
    BOOST_TEST(has(cmds, kind::stop_workers));
    BOOST_TEST((ctl.phase() == run_phase::stopping));
    BOOST_TEST(ctl.stop_reason() == "stopped by SIGTERM");
    int summaries = 0;
    auto seen = run_to_end(ctl, cmds, &summaries);
    BOOST_TEST(summaries == 1);
    BOOST_TEST(std::any_of(seen.begin(), seen.end(), [](const run_command& x) { return x.what == kind::save; }));
    BOOST_TEST((ctl.phase() == run_phase::done));
    BOOST_TEST(ctl.terminate(t0 + 2s).empty()); // a second SIGTERM changes nothing
  }
}

BOOST_AUTO_TEST_CASE(sigterm_before_training_fails_the_start_by_name) {
  controller ctl{config()};
  ctl.begin(t0);
  ctl.shard_ready(0, t0);
  ctl.shard_ready(1, t0);
  ctl.worker_registered(1, t0);
  auto cmds = ctl.terminate(t0 + 1s);
  BOOST_REQUIRE(has(cmds, kind::fail));
  BOOST_TEST((find(cmds, kind::fail)->code == errc::terminated));
  BOOST_TEST(find(cmds, kind::fail)->text == "stopped by SIGTERM before training began (waiting for worker 0)");
}

// Issue 32, item 6: sync, one worker frozen (SIGSTOP) while the others stopped at max-steps: the
// chief waited for its final report with no deadline and never finished. Once a worker reports
// its stop at the step limit the run is stopping: the rest get the stop and request_timeout.
BOOST_AUTO_TEST_CASE(sync_a_worker_at_the_step_limit_starts_the_stop_and_its_deadline) {
  controller ctl{config(train_mode::sync)}; // max-steps 10
  start(ctl);
  auto cmds = ctl.progress(0, 10, 100, 1.0, true, t0 + 1s, 10);
  BOOST_TEST((ctl.phase() == run_phase::stopping));
  BOOST_TEST(has(cmds, kind::stop_workers));
  BOOST_REQUIRE(has(cmds, kind::tick));
  BOOST_TEST(ctl.stop_reason() == "max steps 10 reached");
  auto late = ctl.tick(t0 + 62s); // worker 1 (frozen) never reported
  BOOST_TEST(logs(late, "not every worker sent its final report in time"));
  BOOST_TEST(ends(ctl, late));
}

// Found by the simulator (ssp, seed 1016): a chief killed after its run reached max-steps (while
// finishing) resumed at that step on restart and waited for workers that had all quit. It
// finishes the run instead: final evaluation, summary, save.
// The same for an elastic job (the simulator, elastic seed 1401: its shards had kept the last step,
// past the checkpoint's).
BOOST_AUTO_TEST_CASE(a_chief_restarted_after_the_step_limit_finishes_the_run) {
  auto el = elastic(train_mode::async);
  el.max_steps = 10;
  for (auto c : {config(), el}) { // max-steps 10
    BOOST_TEST_CONTEXT("elastic " << c.elastic) {
      controller ctl{c};
      ctl.resume(6, 60, 1.0, c.elastic ? std::vector<uint32_t>{0, 1} : std::vector<uint32_t>{});
      ctl.begin(t0);
      ctl.shard_ready(0, t0, 10);
      auto cmds = ctl.shard_ready(1, t0, 10);
      BOOST_TEST(logs(cmds, "the run had reached max-steps 10 (global step 10): finishing it once its workers are back"));
      BOOST_TEST(!has(cmds, kind::finish));
      // the workers come back and are stopped without a step (they were started neither)
      ctl.worker_registered(0, t0);
      cmds = ctl.worker_registered(1, t0).then;
      BOOST_TEST(has(cmds, kind::stop_workers));
      BOOST_TEST(!has(cmds, kind::start_workers));
      BOOST_TEST(logs(cmds, "stopping: max steps 10 reached"));
      int summaries = 0;
      run_to_end(ctl, cmds, &summaries);
      BOOST_TEST(summaries == 1);
      BOOST_TEST((ctl.phase() == run_phase::done));
      BOOST_TEST(ctl.steps() == 10);
      BOOST_TEST(ctl.stop_reason() == "max steps 10 reached");
    }
  }
}

// Found by integration.residual: a cluster started again on the checkpoints of a run that had
// reached max-steps finished at once, before its workers had connected, and they waited for a
// chief that was gone (and the chief crashed, its monitor never opened). When no worker comes
// back within cluster.startup-timeout it finishes without them.
BOOST_AUTO_TEST_CASE(a_finished_run_started_again_without_its_workers_finishes_after_the_startup_timeout) {
  controller ctl{config()};
  ctl.resume(6, 60, 1.0, {});
  ctl.begin(t0);
  ctl.shard_ready(0, t0, 10);
  ctl.shard_ready(1, t0, 10);
  auto cmds = ctl.tick(t0 + 5s);
  BOOST_TEST(!has(cmds, kind::finish));
  cmds = ctl.tick(t0 + 21s); // cluster.startup-timeout is 20 s
  BOOST_TEST(logs(cmds, "finishing without worker 0, worker 1: no registration within cluster.startup-timeout"), describe_logs(cmds));
  BOOST_REQUIRE(has(cmds, kind::finish));
  BOOST_TEST(!has(cmds, kind::fail));
  int summaries = 0;
  run_to_end(ctl, cmds, &summaries);
  BOOST_TEST(summaries == 1);
  BOOST_TEST((ctl.phase() == run_phase::done));
}

// Issue 32, item 3: train.max-epochs was not exact in async with several workers (1.10, 1.55 and
// 1.41 epochs with 1, 2 and 3 workers for --epochs 1): the chief learns of the examples a report
// interval late per worker. The epochs become a step budget, which grants (async, ssp) and the
// workers' own stop (sync) keep exactly.
BOOST_AUTO_TEST_CASE(max_epochs_become_a_step_budget) {
  BOOST_TEST(step_budget(train_mode::async, 0, 1, 8000, 50, 1, 1) == 160);
  BOOST_TEST(step_budget(train_mode::ssp, 0, 2, 8000, 64, 1, 1) == 250);  // 2 x ceil(8,000 / 64)
  BOOST_TEST(step_budget(train_mode::sync, 0, 1, 8000, 50, 2, 2) == 80);  // two batches a global step
  BOOST_TEST(step_budget(train_mode::async, 0, 1, 8001, 50, 1, 1) == 161); // the last batch is whole
  BOOST_TEST(step_budget(train_mode::async, 100, 1, 8000, 50, 1, 1) == 100); // max-steps comes first
  BOOST_TEST(step_budget(train_mode::async, 300, 0, 8000, 50, 1, 1) == 300); // no epoch limit
  BOOST_TEST(step_budget(train_mode::model_parallel, 0, 1, 8000, 50, 1, 1) == 0);
}

// With partial last batches the epochs' step budget falls a little short of the epoch (3
// workers on 55,000 examples ran out of grants at 1,100 steps with 54,9xx examples, and waited):
// the grants go on until the stop rule says the epochs are done.
BOOST_AUTO_TEST_CASE(an_epochs_budget_is_extended_until_the_epochs_are_done) {
  auto c = config(); // async, 2 workers
  c.max_steps = 10;
  c.budget_from_epochs = true;
  c.grant_steps = 4;
  c.should_stop = [](int64_t, int64_t examples) -> std::optional<std::string> {
    if (examples >= 1000)
      return std::string{"max epochs 1 reached"};
    return std::nullopt;
  };
  controller ctl{c};
  ctl.begin(t0);
  ctl.shard_ready(0, t0);
  ctl.shard_ready(1, t0);
  BOOST_TEST(ctl.worker_registered(0, t0).steps_left == 4);
  BOOST_TEST(ctl.worker_registered(1, t0).steps_left == 4);
  ctl.progress(0, 4, 400, 1.0, false, t0);
  ctl.progress(1, 4, 380, 1.0, false, t0); // a partial batch
  auto cmds = ctl.progress(0, 2, 190, 1.0, false, t0); // 10 steps, 970 examples: short
  BOOST_TEST((ctl.phase() == run_phase::training));
  BOOST_REQUIRE(has(cmds, kind::grant));
  cmds = ctl.progress(0, 1, 100, 1.0, false, t0);
  BOOST_TEST((ctl.phase() == run_phase::stopping));
  BOOST_TEST(ctl.stop_reason() == "max epochs 1 reached");
}

BOOST_AUTO_TEST_CASE(progress_lines_carry_their_figures) {
  auto c = open_ended();
  c.progress_every = 100;
  controller ctl{c};
  start(ctl);
  ctl.progress(0, 50, 2500, 50.0, false, t0 + 1s);
  auto cmds = ctl.progress(1, 50, 2500, 100.0, false, t0 + 2s);
  auto line = std::find_if(cmds.begin(), cmds.end(), [](const run_command& x) { return x.what == kind::log && x.figures; });
  BOOST_REQUIRE(line != cmds.end());
  BOOST_TEST(line->figures->step == 100);
  BOOST_TEST(line->figures->examples_per_sec == 2500.0); // 5,000 examples in the 2 s since training began
  BOOST_TEST(line->figures->steps_per_sec == 50.0);
  BOOST_TEST(line->figures->loss == 0.03, boost::test_tools::tolerance(1e-12)); // (50 + 100) / 5,000
}

BOOST_AUTO_TEST_SUITE_END()
