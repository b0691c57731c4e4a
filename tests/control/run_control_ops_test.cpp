// Tests of control/run_control's work in flight and shard loss (control/run_control_ops.cpp):
// evaluations, saves, a shard lost and restored, failed requests.
#include "tests/control/run_control_cases.hpp"

#include <algorithm>
#include <vector>

using namespace run_control_cases;

BOOST_AUTO_TEST_SUITE(run_control_ops)

BOOST_AUTO_TEST_CASE(evaluates_each_epoch_one_at_a_time_and_saves_a_new_best) {
  controller ctl{open_ended(100)};
  start(ctl);
  BOOST_TEST(!has(ctl.progress(0, 5, 50, 1.0, false, t0), kind::evaluate));
  auto cmds = ctl.progress(1, 5, 50, 1.0, false, t0);
  auto* eval = find(cmds, kind::evaluate);
  BOOST_REQUIRE(eval);
  BOOST_TEST(eval->step == 10);
  BOOST_TEST(eval->examples == 100);
  BOOST_TEST(!has(ctl.progress(0, 10, 100, 1.0, false, t0), kind::evaluate)); // one in flight
  cmds = ctl.evaluated(eval->op, true, t0);
  BOOST_TEST(find(cmds, kind::save)->best);
  BOOST_TEST(ctl.evaluated(eval->op, true, t0).empty()); // answered once
  BOOST_TEST(has(ctl.progress(0, 1, 10, 1.0, false, t0), kind::evaluate)); // epoch 2 is due
}

BOOST_AUTO_TEST_CASE(a_save_that_comes_due_during_another_is_queued_and_said) {
  controller ctl{open_ended(1000000, 10)};
  start(ctl);
  auto first = ctl.progress(0, 10, 10, 1.0, false, t0);
  auto* save = find(first, kind::save);
  BOOST_REQUIRE(save);
  auto cmds = ctl.progress(0, 10, 10, 1.0, false, t0);
  BOOST_TEST(!has(cmds, kind::save));
  BOOST_TEST(logs(cmds, "checkpoint at step 20 queued: the previous save is still running"));
  cmds = ctl.saved(save->op);
  BOOST_TEST(has(cmds, kind::save)); // the queued one runs now
}

// A run that keeps finding better models still takes its periodic checkpoints (the ones a lost
// node is restored from): a best-model save and a periodic one both queued run one after the
// other, the kind that did not run last first (a queued best model had taken the periodic
// save's place: a text run's drill found no checkpoint until its end).
BOOST_AUTO_TEST_CASE(best_model_saves_do_not_starve_the_periodic_ones) {
  controller ctl{open_ended(100, 10)};
  start(ctl);
  auto cmds = ctl.progress(0, 10, 100, 1.0, false, t0); // step 10: epoch 1's evaluation and a periodic save
  auto save = *find(cmds, kind::save);
  BOOST_TEST(!save.best);
  auto eval = *find(cmds, kind::evaluate);
  BOOST_TEST(logs(ctl.evaluated(eval.op, true, t0), "best-model save at step 10 queued"));
  BOOST_TEST(logs(ctl.progress(0, 10, 10, 1.0, false, t0), "checkpoint at step 20 queued")); // the next periodic save
  cmds = ctl.saved(save.op);
  auto next = *find(cmds, kind::save);
  BOOST_TEST(next.best); // (a periodic save ran last)
  cmds = ctl.saved(next.op);
  auto* periodic = find(cmds, kind::save);
  BOOST_REQUIRE(periodic);
  BOOST_TEST(!periodic->best);
  BOOST_TEST(!has(ctl.saved(periodic->op), kind::save)); // nothing left queued
}

// The run's last step is saved once: a periodic checkpoint due at that step gives way to the
// final save (a 2^26 x 16 table's checkpoint takes 50 s), and a run whose last periodic one is
// older saves its last step at the end.
BOOST_AUTO_TEST_CASE(a_last_step_already_saved_is_not_saved_again) {
  for (int64_t every : {10, 7}) {
    auto c = config();
    c.max_steps = 20;
    c.checkpoint_every_steps = every;
    controller ctl{c};
    start(ctl);
    std::vector<int64_t> saved_steps;
    auto note_saves = [&](const run_commands& cmds) {
      for (auto& cmd : cmds)
        if (cmd.what == kind::save)
          saved_steps.push_back(cmd.step);
    };
    run_commands cmds;
    for (int step = 0; step < 20; ++step) {
      cmds = ctl.progress(0, 1, 50, 1.0, false, t0);
      note_saves(cmds);
      if (auto* save = find(cmds, kind::save); save && ctl.phase() == run_phase::training)
        cmds = ctl.saved(save->op);
    }
    BOOST_REQUIRE(ctl.phase() == run_phase::stopping);
    auto seen = run_to_end(ctl, cmds);
    note_saves(seen);
    BOOST_TEST(has(seen, kind::quit), describe_logs(seen));
    const std::vector<int64_t> want = every == 10 ? std::vector<int64_t>{10, 20} : std::vector<int64_t>{7, 14, 20};
    BOOST_TEST(saved_steps == want, boost::test_tools::per_element());
  }
}

BOOST_AUTO_TEST_CASE(periodic_saves_follow_the_actors_clock) {
  auto c = config();
  c.max_steps = 0;
  c.checkpoint_every_seconds = 30.0;
  controller ctl{c};
  start(ctl);
  BOOST_TEST(!has(ctl.progress(0, 1, 1, 1.0, false, t0 + 29s), kind::save));
  BOOST_TEST(has(ctl.progress(0, 1, 1, 1.0, false, t0 + 30s), kind::save));
}

// Issue 11, item 3 (and item 8's stop during a restore): a shard lost in any phase of a running
// run is restored, and the run still ends with one summary and a quit -- in every mode.
BOOST_AUTO_TEST_CASE(a_shard_lost_in_any_running_phase_is_restored_and_the_run_finishes) {
  for (auto mode : {train_mode::async, train_mode::sync, train_mode::ssp})
    for (auto phase : {run_phase::training, run_phase::stopping, run_phase::final_save, run_phase::finishing}) {
      BOOST_TEST_CONTEXT(to_string(mode) << " in " << to_string(phase)) {
        controller ctl{config(mode)};
        auto before = drive_to(ctl, phase);
        auto cmds = ctl.shard_down(1, "killed");
        BOOST_TEST(!has(cmds, kind::fail));
        BOOST_TEST(find(cmds, kind::restore_shard)->index == 1u);
        BOOST_TEST(ctl.shard_down(1, "killed").empty()); // the same loss again: one restore
        for (auto& c : before) // whatever was in flight can no longer complete
          if (c.what == kind::finish || c.what == kind::save || c.what == kind::evaluate)
            BOOST_TEST(!ctl.wanted(c.op));
        int summaries = 0;
        auto rest = run_to_end(ctl, ctl.shard_restored(1), &summaries);
        BOOST_TEST(has(rest, kind::quit));
        BOOST_TEST(!has(rest, kind::fail));
        BOOST_TEST(summaries == 1);
        if (phase == run_phase::final_save) // the final checkpoint is taken after the restore
          BOOST_TEST(has(rest, kind::save));
      }
    }
}

// Issue 11, item 4: a save in flight when a shard dies ends at once (not at request-timeout),
// says so, and is taken again once the shard is back.
BOOST_AUTO_TEST_CASE(a_save_in_flight_when_a_shard_dies_is_abandoned_and_taken_again) {
  controller ctl{open_ended(1000000, 10)};
  start(ctl);
  auto save = *find(ctl.progress(0, 10, 10, 1.0, false, t0), kind::save);
  auto cmds = ctl.shard_down(0, "killed");
  BOOST_TEST(!ctl.wanted(save.op));
  BOOST_TEST(logs(cmds, "the checkpoint save in flight is abandoned"));
  BOOST_TEST(ctl.saved(save.op).empty()); // its late answer changes nothing
  cmds = ctl.progress(0, 10, 10, 1.0, false, t0); // due again while the shard is restored
  BOOST_TEST(!has(cmds, kind::save)); // (queued already: the abandoned one)
  cmds = ctl.shard_restored(0);
  BOOST_TEST(std::count_if(cmds.begin(), cmds.end(), [](auto& x) { return x.what == kind::save; }) == 1);
}

BOOST_AUTO_TEST_CASE(answers_lost_while_a_shard_is_restored_skip_the_evaluation) {
  controller ctl{open_ended(10)};
  start(ctl);
  auto eval = *find(ctl.progress(0, 1, 10, 1.0, false, t0), kind::evaluate);
  ctl.shard_down(0, "killed");
  BOOST_TEST(ctl.failed(eval.op, errc::timeout, "pulling").empty()); // abandoned already
  BOOST_TEST(!has(ctl.progress(0, 1, 10, 1.0, false, t0), kind::evaluate)); // waits for the shard
  ctl.shard_restored(0);
  BOOST_TEST(has(ctl.progress(0, 1, 10, 1.0, false, t0), kind::evaluate));
}

// Found by integration.text's fault drill (a shard killed as the run reached max-steps): the
// report that reached the limit began an evaluation, whose answer was to take the stop; the
// shard's loss dropped it, and after the restore nothing stopped the run: the workers, out of
// steps, waited for good. The restore takes the stop.
namespace {

// A run (max-steps 10, an epoch per report) whose report reaching the limit began an evaluation,
// whose answer is to take the stop: returns the evaluation's op.
uint64_t evaluation_at_the_limit(controller& ctl) {
  start(ctl);
  auto cmds = ctl.progress(0, 10, 10, 1.0, false, t0 + 1s);
  auto eval = find(cmds, kind::evaluate);
  BOOST_REQUIRE(eval);
  BOOST_REQUIRE(ctl.phase() == run_phase::training); // (the stop waits for the evaluation's answer)
  return eval->op;
}

run_control_config epoch_per_report() {
  auto cfg = config(); // max-steps 10
  cfg.train_rows = 10;
  return cfg;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_stop_that_waited_for_a_dropped_evaluation_is_taken_when_the_shard_is_back) {
  controller ctl{epoch_per_report()};
  evaluation_at_the_limit(ctl);
  ctl.shard_down(0, "killed");
  auto cmds = ctl.shard_restored(0);
  BOOST_TEST((ctl.phase() == run_phase::stopping), describe_logs(cmds));
  BOOST_TEST(has(cmds, kind::stop_workers));
}

// Found by the simulator (shard crashes: async 1814, sync 1893): a chief restarted from its
// checkpoint lost a shard while it waited for the workers to register again, and failed the run
// ("lost a shard ... during waiting") though the checkpoint could restore it. A resumed run
// restores it; a fresh one, with no checkpoint to restore from, still fails.
BOOST_AUTO_TEST_CASE(a_resumed_chief_restores_a_shard_lost_while_it_waits_for_the_workers) {
  controller ctl{config()};
  ctl.resume(6, 60);
  ctl.begin(t0);
  ctl.shard_ready(0, t0, 6);
  ctl.shard_ready(1, t0, 6);
  BOOST_REQUIRE((ctl.phase() == run_phase::waiting));
  auto cmds = ctl.shard_down(1, "killed");
  BOOST_TEST(!has(cmds, kind::fail));
  BOOST_REQUIRE(has(cmds, kind::restore_shard));
  ctl.worker_registered(0, t0);
  ctl.worker_registered(1, t0); // the start: the workers' requests wait for the restore
  BOOST_TEST((ctl.phase() == run_phase::training));
  ctl.shard_restored(1);
  BOOST_TEST(!ctl.restoring());
  controller fresh{config()};
  fresh.begin(t0);
  fresh.shard_ready(0, t0);
  fresh.shard_ready(1, t0);
  BOOST_TEST(has(fresh.shard_down(1, "killed"), kind::fail));
}

// Found by the simulator (async 7762, shard crashes): a shard killed while a restarted chief
// set its shards up failed the run ("went down during init_shards") though the checkpoint the
// chief resumed could restore it. The restore is that shard's setup: its version counts as a
// setup's, and the setup request that fails with the shard is no failure of the run.
BOOST_AUTO_TEST_CASE(a_resumed_chief_restores_a_shard_lost_while_setting_it_up) {
  controller ctl{config()};
  ctl.resume(6, 60);
  ctl.begin(t0);
  ctl.shard_ready(0, t0, 7);
  auto cmds = ctl.shard_down(1, "killed");
  BOOST_TEST(!has(cmds, kind::fail));
  BOOST_REQUIRE(has(cmds, kind::restore_shard));
  BOOST_TEST(ctl.setup_failed(1, errc::peer_unreachable, "initialising shard 1 failed: request timed out").empty());
  BOOST_TEST((ctl.phase() == run_phase::init_shards));
  ctl.shard_restored(1, 8, t0); // set up from the checkpoint's snapshot at version 8
  BOOST_TEST(!ctl.restoring());
  BOOST_TEST((ctl.phase() == run_phase::waiting));
  BOOST_TEST(ctl.steps() == 8);
  // a setup that fails while its shard is up fails the run, naming the shard
  controller other{config()};
  other.resume(6, 60);
  other.begin(t0);
  cmds = other.setup_failed(0, errc::timeout, "initialising shard 0 failed: request timed out");
  BOOST_REQUIRE(has(cmds, kind::fail));
  BOOST_TEST(find(cmds, kind::fail)->text == "initialising shard 0 failed: request timed out");
  // a shard that answered its setup and went down before the start is restored as well
  controller answered{config()};
  answered.resume(6, 60);
  answered.begin(t0);
  answered.shard_ready(1, t0, 6);
  BOOST_REQUIRE(has(answered.shard_down(1, "killed"), kind::restore_shard));
  answered.shard_ready(0, t0, 6);
  BOOST_TEST((answered.phase() == run_phase::waiting));
  answered.shard_restored(1, 6, t0);
  BOOST_TEST(!answered.restoring());
  BOOST_TEST(answered.steps() == 6);
}

BOOST_AUTO_TEST_CASE(a_lost_shard_fails_the_run_when_nothing_can_restore_it) {
  auto c = config(train_mode::async, false);
  c.shard_names = {"shard 0 at h:5", "shard 1 at h:6"};
  controller ctl{c};
  start(ctl);
  auto cmds = ctl.shard_down(1, "killed");
  BOOST_REQUIRE(has(cmds, kind::fail));
  BOOST_TEST(find(cmds, kind::fail)->text
             == "lost a shard: shard 1 at h:6 went down (killed); without checkpoint.dir there is nothing to restore it from");
  controller early{config()};
  early.begin(t0);
  cmds = early.shard_down(0, "killed");
  BOOST_TEST(find(cmds, kind::fail)->text == "lost a shard: shard 0 went down (killed) during init_shards");
}

// A periodic evaluation whose reads fail (a shard frozen past cluster.request-timeout: the ps node
// woken again answers the next one) is skipped and training goes on; three in a row fail the run
// with the last one's error. (Every failed evaluation used to fail the run: a ps node suspended
// for a minute ended it even though the workers went on with it once it woke.)
BOOST_AUTO_TEST_CASE(a_failed_evaluation_is_skipped_three_in_a_row_fail_the_run) {
  controller ctl{open_ended(10)};
  start(ctl);
  auto eval = *find(ctl.progress(0, 1, 10, 1.0, false, t0), kind::evaluate);
  auto cmds = ctl.failed(eval.op, errc::timeout, "pulling the model from shard 0 failed: timeout", t0);
  BOOST_TEST(!has(cmds, kind::fail));
  BOOST_TEST(logs(cmds, "evaluation at step 1 failed: pulling the model from shard 0 failed: timeout; skipped, "
                        "training goes on (1 in a row; 3 fail the run)"));
  BOOST_TEST((ctl.phase() == run_phase::training));
  BOOST_TEST(ctl.failed(eval.op, errc::timeout, "again", t0).empty()); // (answered: nothing more)
  eval = *find(ctl.progress(0, 1, 10, 1.0, false, t0), kind::evaluate); // the next one runs
  BOOST_TEST(!has(ctl.evaluated(eval.op, false, t0), kind::fail)); // (one that goes through resets the count)
  for (int k = 1; k <= 3; ++k) {
    eval = *find(ctl.progress(0, 1, 10, 1.0, false, t0), kind::evaluate);
    cmds = ctl.failed(eval.op, errc::timeout, "timeout " + std::to_string(k), t0);
    BOOST_TEST(has(cmds, kind::fail) == (k == 3), "failure " << k);
  }
  BOOST_TEST(find(cmds, kind::fail)->text == "timeout 3");
}

// A failed evaluation that was to take the stop (the report that reached the limit began it)
// takes it.
BOOST_AUTO_TEST_CASE(a_failed_evaluation_at_the_step_limit_still_stops_the_run) {
  controller ctl{epoch_per_report()};
  const auto op = evaluation_at_the_limit(ctl);
  auto cmds = ctl.failed(op, errc::timeout, "reading the counters failed: timeout", t0 + 2s);
  BOOST_TEST(has(cmds, kind::stop_workers));
  BOOST_TEST((ctl.phase() == run_phase::stopping));
}

BOOST_AUTO_TEST_CASE(a_failed_save_is_logged_and_training_goes_on) {
  controller ctl{open_ended(1000000, 10)};
  start(ctl);
  auto save = *find(ctl.progress(0, 10, 10, 1.0, false, t0), kind::save);
  auto cmds = ctl.failed(save.op, errc::file_error, "disk full");
  BOOST_TEST(!has(cmds, kind::fail));
  BOOST_TEST(logs(cmds, "checkpoint at step 10 failed: disk full; training goes on"));
  BOOST_TEST((ctl.phase() == run_phase::training));
}

BOOST_AUTO_TEST_CASE(evaluates_every_k_epochs_with_the_training_loss_since_the_last_evaluation) {
  auto cfg = open_ended(100);
  cfg.eval_every_epochs = 2;
  controller ctl{cfg};
  start(ctl);
  BOOST_TEST(!has(ctl.progress(0, 10, 100, 30.0, false, t0), kind::evaluate)); // epoch 1: not due
  auto cmds = ctl.progress(1, 10, 100, 10.0, false, t0);                       // epoch 2
  auto* eval = find(cmds, kind::evaluate);
  BOOST_REQUIRE(eval);
  BOOST_TEST(eval->examples == 200);
  BOOST_REQUIRE(eval->train_loss);
  BOOST_TEST(*eval->train_loss == 0.2); // (30 + 10) / 200 examples
  ctl.evaluated(eval->op, false, t0);
  BOOST_TEST(!has(ctl.progress(0, 10, 100, 5.0, false, t0), kind::evaluate)); // epoch 3
  cmds = ctl.progress(0, 10, 100, 5.0, false, t0);                             // epoch 4
  eval = find(cmds, kind::evaluate);
  BOOST_REQUIRE(eval);
  BOOST_TEST(*eval->train_loss == 0.05); // only the losses since the previous evaluation
  BOOST_TEST(next_epoch_evaluation(4.0, 2) == 6.0);
  BOOST_TEST(next_epoch_evaluation(5.5, 5) == 10.0);
}

BOOST_AUTO_TEST_CASE(no_evaluation_by_epoch_when_eval_every_epochs_is_zero) {
  auto cfg = open_ended(100);
  cfg.eval_every_epochs = 0;
  cfg.eval_every = 25;
  controller ctl{cfg};
  start(ctl);
  BOOST_TEST(!has(ctl.progress(0, 20, 100, 1.0, false, t0), kind::evaluate)); // epoch 1, step 20
  BOOST_TEST(has(ctl.progress(1, 5, 10, 1.0, false, t0), kind::evaluate));    // step 25
}

BOOST_AUTO_TEST_CASE(in_graph_steps_wait_for_a_lost_shard) {
  auto cfg = open_ended();
  cfg.mode = train_mode::sync;
  cfg.in_graph = true;
  cfg.replicas_to_aggregate = 1;
  controller ctl{cfg};
  start(ctl);
  auto down = ctl.shard_down(1, "killed");
  BOOST_TEST(has(down, kind::restore_shard));
  BOOST_TEST(ctl.restoring());
  auto during = ctl.chief_step(100, 10.0, t0 + 1ms); // a step whose pushes were in flight
  BOOST_TEST(!has(during, kind::in_graph_step));
  auto back = ctl.shard_restored(1);
  BOOST_TEST(has(back, kind::in_graph_step));
  BOOST_TEST(!ctl.restoring());
  // a worker lost: the steps go on with the others (the chief moves its parts)
  auto lost = ctl.worker_down(1, "killed");
  BOOST_TEST(!has(lost, kind::fail));
  BOOST_TEST(logs(lost, "training goes on with 1 worker(s)"));
}

// SIGTERM on a shard's node: the shard asks the chief to end the run while it still serves.
BOOST_AUTO_TEST_CASE(sigterm_on_a_shard_ends_the_run_cleanly_and_names_it) {
  controller ctl{config(train_mode::sync)};
  start(ctl);
  auto cmds = ctl.terminate(t0 + 1s, "shard 1");
  BOOST_TEST(has(cmds, kind::stop_workers));
  BOOST_TEST(logs(cmds, "shard 1 stopped by SIGTERM: ending the run as at its limit"));
  BOOST_TEST(ctl.stop_reason() == "shard 1 stopped by SIGTERM");
  int summaries = 0;
  run_to_end(ctl, cmds, &summaries);
  BOOST_TEST(summaries == 1);
}

BOOST_AUTO_TEST_SUITE_END()
