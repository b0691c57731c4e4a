// Tests of control/run_control: the chief's state machine, input by input, in every phase and
// mode, with no actors and no clock but the one the test passes in (milliseconds per case).
#include "control/run_control.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>

using namespace actorps;
using kind = run_command::kind;
using namespace std::chrono_literals;

namespace {

using controller = actorps::run_control; // (the suite is named run_control too)

const run_time t0{};

const run_command* find(const run_commands& cmds, kind k) {
  auto i = std::find_if(cmds.begin(), cmds.end(), [k](const run_command& c) { return c.what == k; });
  return i == cmds.end() ? nullptr : &*i;
}

bool has(const run_commands& cmds, kind k) {
  return find(cmds, k) != nullptr;
}

bool logs(const run_commands& cmds, const std::string& part) {
  return std::any_of(cmds.begin(), cmds.end(),
                     [&](const run_command& c) { return c.what == kind::log && c.text.find(part) != std::string::npos; });
}

std::string describe_logs(const run_commands& cmds) {
  std::string out;
  for (auto& c : cmds)
    if (c.what == kind::log)
      out += c.text + "; ";
  return out;
}

run_control_config config(train_mode mode = train_mode::async, bool checkpoints = true) {
  run_control_config c;
  c.workers = 2;
  c.shards = 2;
  c.mode = mode;
  c.replicas_to_aggregate = 2;
  c.max_steps = 10;
  c.train_rows = 1000000; // no evaluation by epoch unless a case wants one
  c.checkpoints = checkpoints;
  c.shards_recoverable = checkpoints;
  c.startup_timeout = 20s;
  c.request_timeout = 60s;
  return c;
}

// A run with no step limit (the cases drive it by hand), epochs of `train_rows` examples.
run_control_config open_ended(int64_t train_rows = 1000000, int64_t checkpoint_every_steps = 0) {
  auto c = config();
  c.max_steps = 0;
  c.train_rows = train_rows;
  c.checkpoint_every_steps = checkpoint_every_steps;
  return c;
}

// begin, every shard ready, every worker registered: returns the last commands (training).
run_commands start(controller& ctl, uint32_t workers = 2, uint32_t shards = 2) {
  ctl.begin(t0);
  for (uint32_t s = 0; s < shards; ++s)
    ctl.shard_ready(s, t0);
  run_commands last;
  for (uint32_t j = 0; j < workers; ++j)
    last = ctl.worker_registered(j, t0).then;
  return last;
}

// Answers whatever the controller asked for, like an actor whose peers all answer, until the
// run quits or fails; returns the commands seen. Counts the summaries written.
run_commands run_to_end(controller& ctl, run_commands cmds, int* summaries = nullptr) {
  run_commands seen;
  for (int round = 0; round < 50 && !has(cmds, kind::quit) && !has(cmds, kind::fail); ++round) {
    seen.insert(seen.end(), cmds.begin(), cmds.end());
    run_commands next;
    auto add = [&](run_commands more) { next.insert(next.end(), more.begin(), more.end()); };
    for (auto& c : cmds) {
      if (c.what == kind::finish) {
        if (summaries)
          ++*summaries;
        add(ctl.finished(c.op));
      } else if (c.what == kind::save) {
        add(ctl.saved(c.op));
      } else if (c.what == kind::evaluate) {
        add(ctl.evaluated(c.op, false, t0));
      }
    }
    if (next.empty() && ctl.phase() == run_phase::training)
      add(ctl.progress(0, 100, 100, 1.0, false, t0 + 1s, ctl.steps() + 100));
    if (next.empty() && ctl.phase() == run_phase::stopping)
      for (uint32_t j = 0; j < 2; ++j)
        if (ctl.status(j) == member::training)
          add(ctl.progress(j, 0, 0, 0.0, true, t0 + 1s));
    cmds = std::move(next);
  }
  seen.insert(seen.end(), cmds.begin(), cmds.end());
  return seen;
}

// Drives a fresh run to `phase`; returns the commands of the last input.
run_commands drive_to(controller& ctl, run_phase phase) {
  auto cmds = start(ctl);
  if (phase == run_phase::training)
    return cmds;
  cmds = ctl.progress(0, 20, 20, 1.0, false, t0 + 1s, 20); // 20 pushes: over max-steps in every mode
  BOOST_REQUIRE(ctl.phase() == run_phase::stopping);
  if (phase == run_phase::stopping)
    return cmds;
  ctl.progress(0, 0, 0, 0.0, true, t0 + 1s);
  cmds = ctl.progress(1, 0, 0, 0.0, true, t0 + 1s);
  BOOST_REQUIRE(ctl.phase() == run_phase::finishing);
  BOOST_REQUIRE(has(cmds, kind::finish));
  if (phase == run_phase::finishing)
    return cmds;
  cmds = ctl.finished(find(cmds, kind::finish)->op);
  BOOST_REQUIRE(ctl.phase() == run_phase::final_save);
  return cmds;
}

// An elastic run: 2 configured workers, 1 to 4 members, no step limit.
run_control_config elastic(train_mode mode, uint32_t min_workers = 1) {
  auto c = open_ended();
  c.mode = mode;
  c.elastic = true;
  c.min_workers = min_workers;
  c.max_workers = 4;
  return c;
}

const run_command* membership(const run_commands& cmds) {
  return find(cmds, kind::membership);
}

} // namespace

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

BOOST_AUTO_TEST_CASE(registrations_are_refused_by_name) {
  auto c = config();
  c.worker_names = {"worker 0 at h:1", "worker 1 at h:2"};
  controller ctl{c};
  start(ctl);
  auto r = ctl.worker_registered(5, t0);
  BOOST_TEST((r.code == errc::unknown_worker));
  BOOST_TEST(r.text == "worker 5 registered but cluster.workers lists 2 workers");
  r = ctl.worker_registered(1, t0);
  BOOST_TEST((r.code == errc::protocol_error));
  BOOST_TEST(r.text == "worker 1 at h:2 registered after training started, while worker 1 is still a member");
  BOOST_TEST(ctl.workers_lost() == 0); // a refused join is no loss
}

BOOST_AUTO_TEST_CASE(a_worker_lost_before_the_start_may_register_again) {
  controller ctl{config()};
  ctl.begin(t0);
  ctl.worker_registered(0, t0);
  auto cmds = ctl.worker_down(0, "killed");
  BOOST_TEST(!has(cmds, kind::fail));
  BOOST_TEST((ctl.status(0) == member::absent));
  ctl.shard_ready(0, t0);
  ctl.shard_ready(1, t0);
  BOOST_TEST(ctl.missing() == "worker 0, worker 1");
  ctl.worker_registered(1, t0);
  BOOST_TEST(has(ctl.worker_registered(0, t0).then, kind::start_workers));
}

BOOST_AUTO_TEST_CASE(a_lost_worker_rejoins_in_every_data_parallel_mode) {
  for (auto mode : {train_mode::async, train_mode::sync, train_mode::ssp}) {
    auto c = config(mode);
    c.worker_names = {"worker 0 at h:1", "worker 1 at h:2"};
    controller ctl{c};
    start(ctl);
    auto cmds = ctl.worker_down(1, "killed");
    BOOST_TEST(logs(cmds, "worker 1 at h:2 went down (killed); training goes on with 1 worker(s)"));
    BOOST_TEST(ctl.workers_lost() == 1);
    BOOST_TEST(ctl.worker_down(1, "again").empty()); // a second notice changes nothing
    auto back = ctl.worker_registered(1, t0);
    BOOST_TEST((back.code == errc::none));
    BOOST_TEST(find(back.then, kind::start_worker)->index == 1u);
    BOOST_TEST(logs(back.then, "worker 1 at h:2 rejoined"));
  }
}

BOOST_AUTO_TEST_CASE(losing_every_worker_or_a_slice_fails_the_run) {
  controller ctl{config()};
  start(ctl);
  ctl.worker_down(0, "killed");
  auto cmds = ctl.worker_down(1, "killed");
  BOOST_TEST(find(cmds, kind::fail)->text == "lost every worker: worker 1 went down (killed)");
  BOOST_TEST((ctl.phase() == run_phase::done));
  auto c = config(train_mode::model_parallel);
  c.slices = 2;
  controller mp{c};
  start(mp);
  cmds = mp.worker_down(1, "killed");
  BOOST_REQUIRE(has(cmds, kind::fail));
  BOOST_TEST(find(cmds, kind::fail)->text.find("its group cannot go on without its slice") != std::string::npos);
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

BOOST_AUTO_TEST_CASE(periodic_saves_follow_the_actors_clock) {
  auto c = config();
  c.max_steps = 0;
  c.checkpoint_every_seconds = 30.0;
  controller ctl{c};
  start(ctl);
  BOOST_TEST(!has(ctl.progress(0, 1, 1, 1.0, false, t0 + 29s), kind::save));
  BOOST_TEST(has(ctl.progress(0, 1, 1, 1.0, false, t0 + 30s), kind::save));
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

// The training clock stops at the last step's report: the final evaluation, the summary and the
// final save that follow are not training time (the single process does not count its
// evaluations either, and the cluster's examples/s is compared with it).
BOOST_AUTO_TEST_CASE(the_training_seconds_end_with_the_last_report) {
  controller ctl{config(train_mode::async, true)};
  start(ctl);
  ctl.progress(0, 10, 10, 1.0, false, t0 + 8s); // the limit: stopping
  ctl.progress(0, 1, 1, 0.0, true, t0 + 9s);
  BOOST_TEST(ctl.seconds(t0 + 9500ms) == 9.5); // still waiting for a final report: training
  auto cmds = ctl.progress(1, 1, 1, 0.0, true, t0 + 10s);
  BOOST_REQUIRE(has(cmds, kind::finish));
  BOOST_TEST(ctl.seconds(t0 + 14s) == 10.0); // the final evaluation runs
  cmds = ctl.finished(find(cmds, kind::finish)->op);
  BOOST_REQUIRE((ctl.phase() == run_phase::final_save));
  BOOST_TEST(ctl.seconds(t0 + 20s) == 10.0);
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

// Issue 11, item 3 (and item 8's stop during a restore): a shard lost in any phase of a running
// run is restored, and the run still ends with one summary and a quit -- in every mode.
BOOST_AUTO_TEST_CASE(a_shard_lost_in_any_running_phase_is_restored_and_the_run_finishes) {
  for (auto mode : {train_mode::async, train_mode::sync, train_mode::ssp})
    for (auto phase : {run_phase::training, run_phase::stopping, run_phase::finishing, run_phase::final_save}) {
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
        BOOST_TEST(summaries == (phase == run_phase::final_save ? 0 : 1));
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

BOOST_AUTO_TEST_CASE(a_failed_request_fails_the_run_unless_a_shard_is_restored) {
  controller ctl{open_ended(10)};
  start(ctl);
  auto eval = *find(ctl.progress(0, 1, 10, 1.0, false, t0), kind::evaluate);
  auto cmds = ctl.failed(eval.op, errc::timeout, "pulling the model from shard 0 failed: timeout");
  BOOST_TEST(find(cmds, kind::fail)->text == "pulling the model from shard 0 failed: timeout");
  BOOST_TEST(ctl.failed(eval.op, errc::timeout, "again").empty()); // done: nothing more
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

// Item 7 of issue 11: async workers get their steps as grants, so max_steps=10 with two workers
// ends at exactly 10 global steps, and a worker that stops hearing from the chief stops training.
BOOST_AUTO_TEST_CASE(async_workers_train_granted_steps_and_the_run_ends_at_exactly_max_steps) {
  auto c = config(); // two workers, max_steps 10
  c.grant_steps = 4;
  controller ctl{c};
  ctl.begin(t0);
  ctl.shard_ready(0, t0);
  ctl.shard_ready(1, t0);
  auto first = ctl.worker_registered(0, t0);
  auto second = ctl.worker_registered(1, t0);
  BOOST_TEST(first.steps_left == 4);
  BOOST_TEST(first.more);
  BOOST_TEST(second.steps_left == 4);
  // worker 0 reports 2 steps: topped up by 2 (10 - 2 done - 2 + 4 held leaves 2 to give)
  auto cmds = ctl.progress(0, 2, 20, 2.0, false, t0);
  BOOST_REQUIRE(has(cmds, kind::grant));
  BOOST_TEST(find(cmds, kind::grant)->index == 0u);
  BOOST_TEST(find(cmds, kind::grant)->step == 2);
  // worker 0 uses all 4 it holds: the pool has nothing left (10 = 2 + 4 + 4)
  BOOST_TEST(!has(ctl.progress(0, 4, 40, 4.0, false, t0), kind::grant));
  cmds = ctl.progress(1, 4, 40, 4.0, false, t0);
  BOOST_TEST(ctl.steps() == 10);
  BOOST_TEST(has(cmds, kind::stop_workers));
  BOOST_TEST(!has(cmds, kind::grant));
}

// Found by the simulator (elastic ssp, seed 2247): a joiner welcomed with its last steps stopped
// after them while the chief, counting a leaver's steps back into the pool, granted it two more;
// its final report left the grant held, nobody could take those steps, and the run stopped two
// short of max-steps. A final report returns the worker's unused grant to the others.
BOOST_AUTO_TEST_CASE(a_final_report_returns_the_unused_grant_to_the_others) {
  auto c = config(); // two workers, max_steps 10
  c.grant_steps = 4;
  controller ctl{c};
  start(ctl); // each holds 4
  ctl.progress(0, 4, 40, 4.0, false, t0);  // topped up: 2 more (10 - 4 done - 4 held)
  BOOST_REQUIRE(ctl.granted(0) == 2);
  ctl.progress(0, 2, 20, 2.0, false, t0);  // worker 0 waits with none
  BOOST_REQUIRE(ctl.granted(0) == 0);
  auto cmds = ctl.progress(1, 0, 0, 0.0, true, t0); // worker 1 quits holding its 4
  BOOST_TEST(ctl.granted(1) == 0);
  BOOST_REQUIRE(has(cmds, kind::grant));
  BOOST_TEST(find(cmds, kind::grant)->index == 0u);
  BOOST_TEST(find(cmds, kind::grant)->step == 4);
  cmds = ctl.progress(0, 4, 40, 4.0, false, t0);
  BOOST_TEST(ctl.steps() == 10);
}

// Found by the simulator (elastic ssp, seed 1023): the other workers had stopped out of steps
// while a cut-off one held the rest; when it left, every member had stopped but nothing ended
// the run, which waited for good. A leave that leaves every member stopped ends the run.
BOOST_AUTO_TEST_CASE(a_leave_that_leaves_every_member_stopped_ends_the_run) {
  auto c = elastic(train_mode::ssp);
  c.max_steps = 10;
  c.grant_steps = 4;
  controller ctl{c};
  start(ctl);
  ctl.progress(0, 4, 40, 4.0, true, t0); // worker 0 stopped out of steps
  BOOST_TEST((ctl.phase() == run_phase::training));
  auto cmds = ctl.worker_left(1, t0);     // worker 1 leaves holding the rest
  BOOST_TEST((ctl.phase() != run_phase::training));
  BOOST_TEST(has(cmds, kind::finish));
  // the same when it dies (elastic ssp seed 4116)
  controller crashed{c};
  start(crashed);
  crashed.progress(0, 4, 40, 4.0, true, t0);
  cmds = crashed.worker_down(1, "killed", t0);
  BOOST_TEST((crashed.phase() != run_phase::training));
  BOOST_TEST(has(cmds, kind::finish));
}

BOOST_AUTO_TEST_CASE(a_lost_workers_grant_goes_to_the_others) {
  auto c = config();
  c.grant_steps = 4;
  c.max_steps = 8;
  controller ctl{c};
  ctl.begin(t0);
  ctl.shard_ready(0, t0);
  ctl.shard_ready(1, t0);
  ctl.worker_registered(0, t0);
  ctl.worker_registered(1, t0);
  ctl.progress(0, 4, 40, 4.0, false, t0); // worker 0 used its grant; nothing left to give
  auto cmds = ctl.worker_down(1, "killed");
  BOOST_REQUIRE(has(cmds, kind::grant));
  BOOST_TEST(find(cmds, kind::grant)->index == 0u);
  BOOST_TEST(find(cmds, kind::grant)->step == 4);
  auto back = ctl.worker_registered(1, t0); // a restarted worker 1 finds nothing left
  BOOST_TEST(back.steps_left == 0);
  BOOST_TEST(back.more);
}

BOOST_AUTO_TEST_CASE(progress_outside_training_and_from_unknown_workers_is_ignored) {
  controller ctl{config()};
  ctl.begin(t0);
  BOOST_TEST(ctl.progress(0, 100, 100, 1.0, false, t0).empty());
  start(ctl);
  BOOST_TEST(ctl.progress(7, 100, 100, 1.0, false, t0).empty());
  BOOST_TEST(ctl.steps() == 0);
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
  BOOST_TEST(has(last, kind::finish));
  BOOST_TEST(ctl.steps() == 3); // the workers' final reports count no steps
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

BOOST_AUTO_TEST_CASE(between_graph_runs_get_no_chief_steps) {
  controller ctl{config(train_mode::sync)};
  BOOST_TEST(!has(start(ctl), kind::in_graph_step));
  BOOST_TEST(ctl.chief_step(100, 1.0, t0).empty());
  BOOST_TEST(ctl.steps() == 0);
}

BOOST_AUTO_TEST_CASE(elastic_joins_leaves_and_crashes_in_every_mode) {
  for (auto mode : {train_mode::async, train_mode::sync, train_mode::ssp}) {
    BOOST_TEST_CONTEXT("mode " << to_string(mode)) {
      controller ctl{elastic(mode)};
      start(ctl);
      auto join = ctl.worker_joining(t0);
      BOOST_TEST((join.code == errc::none));
      BOOST_TEST(join.index == 2u);
      BOOST_TEST((ctl.status(2) == member::admitted));
      BOOST_TEST(ctl.live() == 2u); // admitted is not live until it registers
      auto reg = ctl.worker_registered(2, t0);
      BOOST_TEST((reg.code == errc::none));
      BOOST_REQUIRE(membership(reg.then));
      BOOST_TEST(membership(reg.then)->text == "join");
      BOOST_TEST(membership(reg.then)->workers == 3u);
      BOOST_REQUIRE(find(reg.then, kind::start_worker));
      BOOST_TEST(find(reg.then, kind::start_worker)->index == 2u);
      auto left = ctl.worker_left(0, t0);
      BOOST_TEST((ctl.status(0) == member::left));
      BOOST_REQUIRE(membership(left));
      BOOST_TEST(membership(left)->text == "leave");
      BOOST_TEST(membership(left)->workers == 2u);
      auto crash = ctl.worker_down(2, "killed", t0);
      BOOST_REQUIRE(membership(crash));
      BOOST_TEST(membership(crash)->text == "crash");
      BOOST_TEST(membership(crash)->workers == 1u);
      BOOST_TEST(!has(crash, kind::fail));
      BOOST_TEST(ctl.worker_joining(t0).index == 2u); // the crashed joiner's id is free again
      BOOST_TEST((ctl.worker_down(0, "late", t0).empty())); // a worker that left is not lost again
      BOOST_TEST((ctl.phase() == run_phase::training));
    }
  }
}

BOOST_AUTO_TEST_CASE(elastic_joins_are_refused_by_name) {
  controller fixed{config()};
  start(fixed);
  BOOST_TEST((fixed.worker_joining(t0).code == errc::unknown_worker));
  controller early{elastic(train_mode::async)};
  early.begin(t0);
  BOOST_TEST((early.worker_joining(t0).code == errc::protocol_error)); // not training yet
  controller ctl{elastic(train_mode::async)};
  start(ctl);
  ctl.worker_registered(ctl.worker_joining(t0).index, t0);
  auto late = ctl.worker_joining(t0); // admitted, registers only after the job is full
  ctl.worker_registered(ctl.worker_joining(t0).index, t0);
  auto full = ctl.worker_joining(t0); // 4 members: full
  BOOST_TEST((full.code == errc::cluster_full));
  BOOST_TEST(full.text.find("cluster.max-workers is 4") != std::string::npos);
  auto refused = ctl.worker_registered(late.index, t0); // the capacity is checked again at registration
  BOOST_TEST((refused.code == errc::cluster_full));
  ctl.worker_left(1, t0);
  BOOST_TEST((ctl.worker_joining(t0).code == errc::none)); // room again
  BOOST_TEST((ctl.worker_registered(9, t0).code == errc::unknown_worker)); // an id nobody was given
}

// Issue 32, item 8: two admitted joiners that never registered kept real joiners out for the
// request timeout. Admissions do not hold places; an id never registered is free again after it.
BOOST_AUTO_TEST_CASE(joiners_that_never_register_keep_nobody_out_and_free_their_ids) {
  controller ctl{elastic(train_mode::async)};
  start(ctl);
  auto first = ctl.worker_joining(t0);
  ctl.worker_joining(t0);
  auto real = ctl.worker_joining(t0 + 1s); // 2 live + 2 admitted that never register: still room
  BOOST_REQUIRE((real.code == errc::none));
  BOOST_TEST((ctl.worker_registered(real.index, t0 + 1s).code == errc::none));
  auto later = ctl.worker_joining(t0 + 11s); // join_register_deadline is 10 s
  BOOST_TEST((later.code == errc::none));
  BOOST_TEST(later.index == first.index);
  BOOST_TEST(logs(later.then, "never registered after its join"));
}

// Issue 50, item 15: four forged joiners that never register (cluster.max-workers 4) kept real
// joiners out for the 60 s request timeout. Each gives its place back 10 s after its admission.
BOOST_AUTO_TEST_CASE(forged_joiners_filling_the_table_keep_real_ones_out_for_10_s_at_most) {
  controller ctl{elastic(train_mode::async)};
  start(ctl);
  for (int i = 0; i < 4; ++i)
    BOOST_TEST_REQUIRE((ctl.worker_joining(t0).code == errc::none));
  auto refused = ctl.worker_joining(t0 + 5s);
  BOOST_TEST((refused.code == errc::cluster_full));
  BOOST_TEST(refused.text.find("4 joiners have not registered yet") != std::string::npos, refused.text);
  auto real = ctl.worker_joining(t0 + 11s);
  BOOST_REQUIRE((real.code == errc::none));
  BOOST_TEST((ctl.worker_registered(real.index, t0 + 11s).code == errc::none));
  BOOST_TEST(logs(real.then, "never registered after its join"));
}

BOOST_AUTO_TEST_CASE(below_min_workers_training_pauses_and_resumes_or_fails_after_the_startup_timeout) {
  controller ctl{elastic(train_mode::sync, 2)};
  start(ctl);
  BOOST_TEST(!ctl.paused());
  auto left = ctl.worker_left(1, t0);
  BOOST_TEST(ctl.paused());
  BOOST_TEST(logs(left, "training paused: 1 live worker(s), cluster.min-workers is 2: waiting for 1 more"));
  BOOST_TEST(has(left, kind::tick));
  auto reminder = ctl.tick(t0 + 5s);
  BOOST_TEST(logs(reminder, "waiting for 1 more worker(s) to join"));
  auto reg = ctl.worker_registered(ctl.worker_joining(t0 + 6s).index, t0 + 6s);
  BOOST_TEST(!ctl.paused());
  BOOST_TEST(logs(reg.then, "training resumes with 2 workers"));
  BOOST_TEST(ctl.tick(t0 + 10s).empty()); // no reminder once resumed
  ctl.worker_down(0, "killed", t0 + 11s);  // paused again, from 11 s
  BOOST_TEST(ctl.paused());
  BOOST_TEST(!has(ctl.tick(t0 + 30s), kind::fail));
  auto failed = ctl.tick(t0 + 31s); // startup_timeout (20 s) after the pause began
  BOOST_REQUIRE(find(failed, kind::fail));
  BOOST_TEST((find(failed, kind::fail)->code == errc::timeout));
  BOOST_TEST(find(failed, kind::fail)->text.find("paused for cluster.startup-timeout") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_elastic_run_that_loses_every_worker_pauses_where_a_fixed_one_fails) {
  controller ctl{elastic(train_mode::async)};
  start(ctl);
  ctl.worker_down(0, "killed", t0);
  auto last = ctl.worker_down(1, "killed", t0);
  BOOST_TEST(!has(last, kind::fail));
  BOOST_TEST(ctl.paused());
  controller fixed{open_ended()};
  start(fixed);
  fixed.worker_down(0, "killed", t0);
  BOOST_TEST(has(fixed.worker_down(1, "killed", t0), kind::fail));
}

BOOST_AUTO_TEST_CASE(elastic_sync_counts_steps_by_the_workers_reported_global_step) {
  controller ctl{elastic(train_mode::sync)};
  start(ctl);
  ctl.progress(0, 20, 1000, 1.0, false, t0, 20);
  ctl.progress(1, 20, 1000, 1.0, false, t0, 20);
  BOOST_TEST(ctl.steps() == 20); // not (20 + 20) / replicas
  ctl.worker_registered(ctl.worker_joining(t0).index, t0);
  ctl.progress(2, 5, 250, 1.0, false, t0, 31);
  BOOST_TEST(ctl.steps() == 31);
  ctl.progress(0, 11, 550, 1.0, false, t0, 31);
  BOOST_TEST(ctl.steps() == 31);
}

BOOST_AUTO_TEST_CASE(a_leave_while_stopping_lets_the_run_finish) {
  auto cfg = elastic(train_mode::async);
  cfg.max_steps = 10;
  cfg.grant_steps = 4;
  controller ctl{cfg};
  start(ctl);
  auto join = ctl.worker_joining(t0);
  auto reg = ctl.worker_registered(join.index, t0);
  BOOST_TEST(reg.steps_left == 2); // the grants: 4 + 4 to the others, 2 left for the joiner
  BOOST_TEST(reg.more);
  ctl.progress(0, 4, 200, 1.0, true, t0);
  ctl.progress(1, 4, 200, 1.0, true, t0);
  ctl.progress(2, 2, 100, 1.0, false, t0);
  BOOST_TEST((ctl.phase() == run_phase::stopping));
  auto out = ctl.worker_left(2, t0);
  BOOST_TEST(has(out, kind::finish));
}

BOOST_AUTO_TEST_CASE(a_restarted_elastic_chief_waits_for_the_recorded_members) {
  controller ctl{elastic(train_mode::sync)};
  ctl.resume(300, 15000, 4.0, {1, 3}); // worker 0 had left, joiner 3 was a member
  ctl.begin(t0);
  ctl.shard_ready(0, t0);
  ctl.shard_ready(1, t0);
  BOOST_TEST(ctl.missing() == "worker 1, worker 3");
  BOOST_TEST(!has(ctl.worker_registered(1, t0).then, kind::start_workers));
  auto last = ctl.worker_registered(3, t0).then; // a joiner's id, from the checkpoint
  BOOST_TEST(has(last, kind::start_workers));
  BOOST_TEST((ctl.status(0) == member::left));
  BOOST_TEST((ctl.status(3) == member::training));
  BOOST_TEST(ctl.members() == std::vector<uint32_t>({1, 3}));
}

// Found by the simulator (elastic, seed 20): an elastic chief restarted after a worker had left
// (or died for good, which elastic jobs allow) waited for it as for every recorded member and
// failed the run at cluster.startup-timeout. With cluster.min-workers back it goes on without the
// missing ones, who rejoin if they come later; with fewer it still fails.
BOOST_AUTO_TEST_CASE(a_restarted_elastic_chief_goes_on_with_the_members_that_came_back) {
  controller ctl{elastic(train_mode::async, 1)}; // startup-timeout 20 s
  ctl.resume(300, 15000, 4.0, {0, 1, 3});
  ctl.begin(t0);
  ctl.shard_ready(0, t0, 300);
  ctl.shard_ready(1, t0, 300);
  ctl.worker_registered(0, t0);
  ctl.worker_registered(3, t0);
  auto cmds = ctl.tick(t0 + 21s);
  BOOST_TEST(logs(cmds, "resuming without worker 1: no registration within cluster.startup-timeout"));
  BOOST_TEST(has(cmds, kind::start_workers));
  BOOST_TEST((ctl.phase() == run_phase::training));
  BOOST_TEST((ctl.status(1) == member::gone));
  auto late = ctl.worker_registered(1, t0 + 22s); // it comes after all: it rejoins
  BOOST_TEST((late.code == errc::none));
  BOOST_TEST((ctl.status(1) == member::training));
  controller short_of{elastic(train_mode::async, 2)};
  short_of.resume(300, 15000, 4.0, {0, 1});
  short_of.begin(t0);
  short_of.shard_ready(0, t0, 300);
  short_of.shard_ready(1, t0, 300);
  short_of.worker_registered(0, t0);
  BOOST_TEST(has(short_of.tick(t0 + 21s), kind::fail)); // below cluster.min-workers
}

// Found by the simulator (elastic sync, large, seed 49): a chief restarted before its first step
// (nothing to resume) waited for a configured worker that had left the job and failed at
// cluster.startup-timeout. An elastic job starts with the workers that came once the timeout
// passes, if they are at least cluster.min-workers; the others may join later.
BOOST_AUTO_TEST_CASE(an_elastic_job_starts_with_the_workers_that_came_after_the_startup_timeout) {
  controller ctl{elastic(train_mode::async, 1)}; // startup-timeout 20 s
  ctl.begin(t0);
  ctl.shard_ready(0, t0);
  ctl.shard_ready(1, t0);
  ctl.worker_registered(0, t0);
  auto cmds = ctl.tick(t0 + 21s);
  BOOST_TEST(logs(cmds, "starting without worker 1: no registration within cluster.startup-timeout"));
  BOOST_TEST(has(cmds, kind::start_workers));
  controller short_of{elastic(train_mode::async, 2)};
  short_of.begin(t0);
  short_of.shard_ready(0, t0);
  short_of.shard_ready(1, t0);
  short_of.worker_registered(0, t0);
  BOOST_TEST(has(short_of.tick(t0 + 21s), kind::fail));
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

// Issue 32, item 8: a worker that went down because training diverged (non_finite) failed the
// run only once every worker had ("lost every worker"). The first such loss fails it, by name.
BOOST_AUTO_TEST_CASE(a_worker_lost_to_divergence_fails_the_run_at_once) {
  controller ctl{config()};
  start(ctl);
  auto cmds = ctl.worker_down(1, "non_finite: training diverged at step 12: ...; lower train.learning-rate", t0,
                              errc::non_finite);
  BOOST_REQUIRE(has(cmds, kind::fail));
  BOOST_TEST((find(cmds, kind::fail)->code == errc::non_finite));
  BOOST_TEST(find(cmds, kind::fail)->text
             == "training diverged: worker 1 went down (non_finite: training diverged at step 12: ...; lower "
                "train.learning-rate)");
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
  BOOST_TEST((ctl.phase() == run_phase::finishing));
}

// Found by the simulator (async, seed 66 with a chief crash): workers that registered with a
// restarted chief before the shards answered its setup were granted steps from the checkpoint's
// step; the shards' kept step then moved it up and the run applied 48 of 37 steps. Grants wait
// for the global step: they go out at the start.
BOOST_AUTO_TEST_CASE(grants_wait_until_the_shards_set_the_global_step) {
  auto c = config(); // async, 2 workers, 2 shards, max-steps 10
  c.grant_steps = 8;
  controller ctl{c};
  ctl.begin(t0);
  auto early = ctl.worker_registered(0, t0);
  BOOST_TEST(early.steps_left == 0);
  BOOST_TEST(early.more);
  ctl.shard_ready(0, t0, 6);
  ctl.shard_ready(1, t0, 6); // the shards kept their variables at step 6
  auto welcome = ctl.worker_registered(1, t0);
  int64_t granted = welcome.steps_left;
  for (auto& cmd : welcome.then)
    if (cmd.what == kind::grant)
      granted += cmd.step;
  BOOST_TEST(granted == 4); // 10 - 6, not 8 + 2
}

// Found by the simulator (async, seed 1238, a chief restart): a worker registered with the
// restarted chief finished its round in flight and reported it before the start; the report was
// dropped (not training yet), its grant stayed counted as held and the run waited forever.
BOOST_AUTO_TEST_CASE(a_registered_worker_reports_before_the_start_and_it_counts) {
  auto c = config(); // max-steps 10, 2 workers
  c.grant_steps = 4;
  controller ctl{c};
  ctl.begin(t0);
  ctl.shard_ready(0, t0, 2);
  ctl.shard_ready(1, t0, 2);
  auto welcome = ctl.worker_registered(0, t0);
  BOOST_REQUIRE(welcome.steps_left == 4);
  ctl.progress(0, 1, 10, 1.0, false, t0);
  BOOST_TEST(ctl.steps() == 3);
  BOOST_TEST(ctl.granted(0) == 3);
  ctl.progress(1, 1, 10, 1.0, false, t0); // not registered: ignored
  BOOST_TEST(ctl.steps() == 3);
}

// Found by the simulator (ssp, seed 252): a chief restarted after an ssp worker had finished
// (out of steps) waited for it to register again, which it never does. A resumed run goes on
// with the workers that came back once cluster.startup-timeout passes; a fresh one still fails.
BOOST_AUTO_TEST_CASE(a_restarted_chief_goes_on_with_the_workers_that_came_back) {
  controller ctl{config()}; // startup-timeout 20 s
  ctl.resume(6, 60);
  ctl.begin(t0);
  ctl.shard_ready(0, t0, 6);
  ctl.shard_ready(1, t0, 6);
  ctl.worker_registered(0, t0);
  auto cmds = ctl.tick(t0 + 21s);
  BOOST_TEST(logs(cmds, "resuming without worker 1: no registration within cluster.startup-timeout"));
  BOOST_TEST(has(cmds, kind::start_workers));
  BOOST_TEST((ctl.phase() == run_phase::training));
  controller fresh{config()};
  fresh.begin(t0);
  fresh.shard_ready(0, t0);
  fresh.shard_ready(1, t0);
  fresh.worker_registered(0, t0);
  BOOST_TEST(has(fresh.tick(t0 + 21s), kind::fail));
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

// Issue 50, item 6: exercise10's "1 epoch with 3 workers" trained 55,033 examples in 1,101 steps,
// 401/350/350 by worker: the faster worker took grants past its partition (18,333 examples, 367
// batches) while the others never finished theirs. Each worker's partition takes its own
// batches, the last partial, exactly max-epochs times: 3 x 367 steps and 55,000 examples.
BOOST_AUTO_TEST_CASE(each_worker_reads_its_own_partition_exactly_its_epochs) {
  BOOST_TEST(step_budget(train_mode::async, 0, 1, 55000, 50, 1, 3) == 1101);
  BOOST_TEST(worker_step_budgets(train_mode::async, 1, 55000, 50, 1, 3) == std::vector<int64_t>({367, 367, 367}));
  BOOST_TEST(worker_step_budgets(train_mode::ssp, 2, 101, 10, 1, 2) == std::vector<int64_t>({10, 12})); // 50 and 51 rows
  BOOST_TEST(step_budget(train_mode::sync, 0, 2, 101, 10, 2, 2) == 12); // every worker's batch in each step: the most
  BOOST_TEST(step_budget(train_mode::sync, 0, 1, 55000, 50, 2, 3) == 550); // backup workers: aggregated examples
  BOOST_TEST(worker_step_budgets(train_mode::sync, 1, 55000, 50, 2, 3).empty());
  BOOST_TEST(worker_step_budgets(train_mode::async, 0, 55000, 50, 1, 3).empty());

  auto c = config(); // async
  c.workers = 3;
  c.max_steps = 11;
  c.budget_from_epochs = true;
  c.grant_steps = 4;
  c.worker_budgets = {4, 4, 3}; // partitions of 200, 200 and 130 examples in batches of 50
  c.should_stop = [](int64_t, int64_t examples) -> std::optional<std::string> {
    if (examples >= 530) // (the chief's stop rule: the epoch's examples)
      return std::string{"max epochs 1 reached"};
    return std::nullopt;
  };
  controller ctl{c};
  start(ctl, 3);
  BOOST_TEST(ctl.granted(0) == 4);
  BOOST_TEST(ctl.granted(2) == 3); // its partition's batches, no more
  // worker 0 is fast: it reports its 4 steps first and asks for more; none are its own
  auto cmds = ctl.progress(0, 4, 200, 1.0, false, t0);
  BOOST_TEST(!has(cmds, kind::grant));
  BOOST_TEST(ctl.granted(0) == 0);
  BOOST_TEST((ctl.phase() == run_phase::training));
  ctl.progress(1, 4, 200, 1.0, false, t0);
  ctl.progress(2, 3, 130, 1.0, false, t0);
  BOOST_TEST((ctl.phase() == run_phase::stopping));
  BOOST_TEST(ctl.stop_reason() == "max epochs 1 reached");
  BOOST_TEST(ctl.worker_steps() == 11);
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


namespace {

// The grants of `cmds` as (worker, steps).
std::vector<std::pair<uint32_t, int64_t>> grants(const run_commands& cmds) {
  std::vector<std::pair<uint32_t, int64_t>> out;
  for (auto& c : cmds)
    if (c.what == kind::grant)
      out.emplace_back(c.index, c.step);
  return out;
}

} // namespace


// Found by the simulator (model-parallel, 1,968 of 3,000 seeds): with several groups of slices
// nothing held a run to max-steps (no grants: 65 of 55 steps), and one group's restarted chief
// welcomed its slices with the checkpoint's steps left before its shards named a later step
// (101 of 92). A group's first slice takes its grants; the others take no limit and follow it
// through their exchange (seed 1293: grants to every slice alike came apart across a restart).
BOOST_AUTO_TEST_CASE(a_groups_first_slice_takes_its_grants_and_the_run_ends_at_max_steps) {
  auto c = config(train_mode::model_parallel);
  c.workers = 4;
  c.slices = 2;
  c.grant_steps = grant_steps_for(train_mode::model_parallel, c.max_steps, c.workers, 2);
  BOOST_REQUIRE(c.grant_steps == 4);
  controller ctl{c};
  ctl.begin(t0);
  ctl.shard_ready(0, t0);
  ctl.shard_ready(1, t0);
  run_commands start;
  for (uint32_t j = 0; j < 4; ++j) {
    auto r = ctl.worker_registered(j, t0);
    BOOST_TEST(r.steps_left == (j % 2 == 0 ? 0 : -1)); // (first slices wait for their grant)
    BOOST_TEST(r.more == (j % 2 == 0));
    start = r.then;
  }
  using grant = std::pair<uint32_t, int64_t>;
  BOOST_TEST((grants(start) == std::vector<grant>{{0, 4}, {2, 4}}));
  BOOST_TEST((grants(ctl.progress(1, 0, 0, 0.0, false, t0)) == std::vector<grant>{})); // a slice's report counts nothing
  BOOST_TEST((grants(ctl.progress(0, 4, 200, 4.0, false, t0)) == std::vector<grant>{{0, 2}}));
  BOOST_TEST(ctl.steps() == 4);
  BOOST_TEST((grants(ctl.progress(2, 4, 200, 4.0, false, t0)) == std::vector<grant>{}));
  auto out = ctl.progress(0, 2, 100, 2.0, false, t0);
  BOOST_TEST(ctl.steps() == 10);
  BOOST_TEST(has(out, kind::stop_workers));
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
