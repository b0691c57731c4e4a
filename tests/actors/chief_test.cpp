// Tests of actors/chief: a whole run with a shard and a worker, initialising exactly once, and
// refusing bad registrations -- deterministically on the test coordinator.
#include "actors/chief.hpp"

#include "control/placement.hpp"
#include "control/slicing.hpp"
#include "actors/worker_replica.hpp"
#include "model/init.hpp"
#include "tests/support/actor_fixture.hpp"
#include "tests/support/synthetic_data.hpp"
#include "train/run_log.hpp"

#include <filesystem>

using namespace actorps;
using namespace actorps::test;

namespace {

struct chief_fixture : actor_fixture {
  temp_dir dir;
  train_settings train;
  cluster_settings cluster;
  std::shared_ptr<const data_splits> data = std::make_shared<const data_splits>(quadrant_data(300, 50, 50));
  std::shared_ptr<chief_outcome> outcome = std::make_shared<chief_outcome>();
  parameter_shard_actor shard = keep(make_parameter_shard(*sys, {0}));

  chief_fixture() {
    option_values v;
    v.hidden = {8};
    v.classes = 4;
    v.batch_size = 10;
    v.max_steps = 60;
    v.learning_rate = 0.1;
    v.momentum = 0.5;
    v.device = "cpu";
    v.run_dir = dir.path();
    v.name = "run";
    train = *validate(v);
    cluster_values c;
    c.workers = {"127.0.0.1:1"};
    c.report_every = 5;
    cluster = *validate(c);
  }

  chief_actor spawn_chief() {
    auto cfg = chief_config_for(train, cluster);
    cfg.data = data;
    cfg.shards = {shard};
    cfg.outcome = outcome;
    return keep(make_chief(*sys, std::move(cfg), false));
  }

  std::vector<float> first_weights() {
    auto r = ask<pull_reply>(shard, pull_atom_v, pull_request{chief_worker_id, {{0, 0, 16 * 8}}});
    BOOST_REQUIRE_MESSAGE(r, error_text(r));
    return r->slices[0].data.to_vector();
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(chief, chief_fixture)

BOOST_AUTO_TEST_CASE(runs_a_worker_to_the_step_limit_and_writes_the_summary) {
  auto chief = spawn_chief();
  worker_replica_config wc{0, train, cluster, data, chief, {shard}, "test"};
  auto worker = keep(make_worker_replica(*sys, wc, false));
  (*self)->monitor(chief);
  sched->run();
  caf::error reason = caf::make_error(errc::timeout);
  (*self)->receive([&](caf::down_msg& msg) { reason = msg.reason; });
  BOOST_TEST(!reason);
  std::lock_guard<std::mutex> guard{outcome->mtx};
  BOOST_REQUIRE_MESSAGE(outcome->ok, outcome->message);
  BOOST_TEST(outcome->summary->steps >= 60);
  BOOST_TEST(outcome->summary->stop_reason == "max steps 60 reached");
  BOOST_TEST(outcome->summary->test_accuracy > 0.6); // chance is 0.25
  auto summary = read_text(dir.file("run/summary.json"));
  BOOST_TEST(summary.find("\"mode\": \"async\"") != std::string::npos, summary);
  BOOST_TEST(summary.find("\"workers\": 1") != std::string::npos, summary);
  BOOST_TEST(!read_text(dir.file("run/metrics.jsonl")).empty());
}

BOOST_AUTO_TEST_CASE(initialises_the_shard_once_and_keeps_existing_values) {
  // A previous chief initialised the shard with other values (seed 99).
  model_spec spec = with_input(train.model, {4, 4, 1});
  auto plan = make_placement(spec.variables(), 1, placement_strategy::round_robin);
  auto values = initial_values(spec, {init_scheme::truncated_normal, 0.0, 0.0, ""}, 99);
  shard_setup setup{0, plan, {"sgd", 0.1f}, 1, {}};
  for (uint32_t k = 0; k < values.size(); ++k)
    setup.initial.push_back({k, 0, {values[k]}});
  BOOST_REQUIRE(ask<setup_reply>(shard, init_atom_v, setup));
  auto chief = spawn_chief();
  sched->run();
  BOOST_TEST(first_weights() == values[0]);
  BOOST_TEST(first_weights() != initial_values(spec, train.init, train.seed)[0]);
}

BOOST_AUTO_TEST_CASE(a_fresh_shard_gets_the_seeded_initial_values) {
  auto chief = spawn_chief();
  sched->run();
  model_spec spec = with_input(train.model, {4, 4, 1});
  BOOST_TEST(first_weights() == initial_values(spec, train.init, train.seed)[0]);
}

BOOST_AUTO_TEST_CASE(refuses_unknown_workers_and_foreign_byte_order) {
  auto chief = spawn_chief();
  sched->run();
  auto r = ask<worker_welcome>(chief, register_atom_v, worker_hello{5, "h", {{byte_order_probe_value}}});
  BOOST_REQUIRE(!r);
  BOOST_TEST(describe(r.error()) == "unknown_worker: worker 5 registered but cluster.workers lists 1 workers");
  r = ask<worker_welcome>(chief, register_atom_v, worker_hello{0, "h", {{2.0f}}});
  BOOST_REQUIRE(!r);
  BOOST_TEST(describe(r.error()) == "protocol_error: worker 0 at 127.0.0.1:1 stores floats in another byte order; raw tensor copies need one");
}

BOOST_AUTO_TEST_CASE(the_start_up_deadline_fires_on_the_actors_clock) {
  cluster.startup_timeout = std::chrono::seconds(20);
  auto chief = spawn_chief();
  (*self)->monitor(chief);
  sched->run();
  sched->advance_time(std::chrono::seconds(15)); // reminders only
  sched->run();
  {
    std::lock_guard<std::mutex> guard{outcome->mtx};
    BOOST_TEST(outcome->message.empty());
  }
  sched->advance_time(std::chrono::seconds(5));
  sched->run();
  caf::error reason;
  (*self)->receive([&](caf::down_msg& msg) { reason = msg.reason; });
  BOOST_TEST(describe(reason)
             == "timeout: start-up failed: no answer from worker 0 at 127.0.0.1:1 within cluster.startup-timeout");
  BOOST_TEST(!std::filesystem::exists(dir.file("run/summary.json")));
}

// Issue 11, item 5 (found by tests/integration/probe_test.sh): a second chief for a running run
// was refused at the run folder's lock, and then stopped the running run's shards on its way out.
// Issue 37: it printed the model and "restoring ckpt-..." before the lock refused it. It refuses
// first (a checkpoint directory it cannot use would be named otherwise) and leaves the shards alone.
BOOST_AUTO_TEST_CASE(a_chief_refuses_a_run_folder_in_use_first_and_leaves_the_shards_alone) {
  auto running = run_log::open(dir.path(), "run"); // the run another chief is running
  BOOST_REQUIRE(running);
  std::ofstream{dir.file("not-a-dir")} << "x";
  cluster.checkpoint_dir = dir.file("not-a-dir"); // (would fail the start-up with a file_error)
  auto chief = spawn_chief();
  (*self)->monitor(chief);
  sched->run();
  caf::error reason;
  (*self)->receive([&](caf::down_msg& msg) { reason = msg.reason; });
  BOOST_TEST(describe(reason).find("is in use by another running process") != std::string::npos, describe(reason));
  BOOST_TEST(static_cast<bool>(ask<shard_stats>(shard, stats_atom_v))); // the shard still serves
}

BOOST_AUTO_TEST_CASE(a_progress_report_from_another_sender_is_ignored) {
  auto chief = spawn_chief();
  worker_replica_config wc{0, train, cluster, data, chief, {shard}, "test"};
  auto worker = keep(make_worker_replica(*sys, wc, false));
  sched->run_once(); // the chief starts
  // Someone else claims worker 0 trained the whole run: the chief must not stop on it.
  (*self)->send(chief, progress_atom_v, progress_report{0, 1000000, 1000000, 0.0, true});
  (*self)->monitor(chief);
  sched->run();
  (*self)->receive([&](caf::down_msg&) {});
  std::lock_guard<std::mutex> guard{outcome->mtx};
  BOOST_REQUIRE_MESSAGE(outcome->ok, outcome->message);
  BOOST_TEST(outcome->summary->steps < 1000);
}

// What a node prints when its chief ends: its own failure's message; where it failed nothing
// itself (an exception, an exit message from a peer), its exit reason -- a node had said only
// "stopped without a result"; nothing after a summary.
BOOST_AUTO_TEST_CASE(a_failed_outcome_names_the_chiefs_message_or_else_its_exit_reason) {
  chief_outcome failed;
  failed.message = "timeout: start-up failed: no answer from worker 0 within cluster.startup-timeout";
  BOOST_TEST(outcome_failure(failed, caf::make_error(errc::internal_error, "x")) == failed.message);
  chief_outcome silent;
  BOOST_TEST(outcome_failure(silent, caf::make_error(errc::internal_error, "chief: an exception ended it: bad_alloc"))
             == "stopped without a result (its exit reason: internal_error: chief: an exception ended it: bad_alloc)");
  BOOST_TEST(outcome_failure(silent, caf::error{}) == "stopped without a result");
  chief_outcome done;
  done.ok = true;
  done.summary.emplace();
  BOOST_TEST(outcome_failure(done, caf::error{}).empty());
}

BOOST_AUTO_TEST_SUITE_END()
