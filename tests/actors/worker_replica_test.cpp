// Tests of actors/worker_replica: the pull -> compute -> push loop against a real shard and a
// stub chief, deterministically on the test coordinator.
#include "actors/worker_replica.hpp"

#include "control/placement.hpp"
#include "control/slicing.hpp"
#include "control/parameter_store.hpp"
#include "model/init.hpp"
#include "compute/token_ids.hpp"
#include "model/mlp_spec.hpp"
#include "tests/support/actor_fixture.hpp"
#include "tests/support/table_shards.hpp"
#include "tests/support/synthetic_data.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

using namespace actorps;
using namespace actorps::test;

namespace {

// What the stub chief saw.
struct chief_log {
  std::vector<worker_hello> hellos;
  int64_t steps = 0;
  int64_t examples = 0;
  double loss_sum = 0.0;
  bool final_seen = false;
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
};

struct stub_state {
  static inline const char* name = "stub_chief";
};

// Registers workers with `plan` (and `steps_left`), counts their progress, and stops a worker
// after `stop_after` steps.
chief_actor::behavior_type stub_chief(chief_actor::stateful_pointer<stub_state> self, placement_plan plan,
                                      std::shared_ptr<chief_log> log, int64_t stop_after, int64_t steps_left) {
  return {
    [=](register_atom, const worker_hello& hello) -> caf::result<worker_welcome> {
      log->hellos.push_back(hello);
      return worker_welcome{plan, 1, hello.worker, steps_left};
    },
    [=](join_atom, const worker_hello&) -> caf::result<worker_welcome> { return caf::make_error(errc::unknown_worker); },
    [=](lease_atom, const lease_request&) -> caf::result<data_lease> { return caf::make_error(errc::protocol_error); },
    [=](leave_atom, const lease_request&) -> caf::result<data_lease> { return data_lease{}; },
    [=](progress_atom, const progress_report& rep) {
      log->steps += rep.steps;
      log->examples += rep.examples;
      log->loss_sum += rep.loss_sum;
      log->final_seen = log->final_seen || rep.final;
      log->bytes_sent += rep.bytes_sent;
      log->bytes_received += rep.bytes_received;
      if (log->steps >= stop_after && !rep.final)
        self->send(caf::actor_cast<worker_replica_actor>(self->current_sender()), stop_atom_v);
    },
    [=](tick_atom) {},
    [=](stall_atom) {},
    [=](step_atom) {},
    [=](stop_atom) {},
    [=](stop_atom, uint32_t) {},
  };
}

struct worker_fixture : actor_fixture {
  mlp_spec spec;
  placement_plan plan;
  std::shared_ptr<chief_log> log = std::make_shared<chief_log>();
  parameter_shard_actor shard;

  worker_fixture() {
    spec.input_size = 16;
    spec.hidden = {8};
    spec.classes = 4;
    plan = make_placement(spec.variables(), 1, placement_strategy::round_robin);
    shard = initialised_shard(1);
  }

  // A shard holding the whole model at its seeded initial values, for `workers` workers.
  parameter_shard_actor initialised_shard(uint32_t workers) {
    auto result = keep(make_parameter_shard(*sys, {0}));
    shard_setup setup;
    setup.plan = plan;
    setup.optimizer = {"sgd", 0.1f};
    setup.workers = workers;
    auto values = initial_values(spec.to_model(), {init_scheme::he, 0.0, 0.0, ""}, 1);
    for (uint32_t k = 0; k < values.size(); ++k)
      setup.initial.push_back({k, 0, {values[k]}});
    BOOST_REQUIRE(ask<setup_reply>(result, init_atom_v, setup));
    return result;
  }

  // The table's halves after a run on text_set (below): both shards applied all `steps`, and
  // rows no example names (its ids are 0-15 and 40-55) never moved from the values they made.
  void check_table_halves(const std::vector<parameter_shard_actor>& shards, int64_t steps) {
    std::vector<float> made(64 * 4);
    table_rows_initial(1, 0, 64, 4, made.data());
    for (uint32_t s = 0; s < 2; ++s) {
      auto held = ask<pull_reply>(shards[s], pull_atom_v, pull_request{chief_worker_id, {{0, s * 128, 128}}});
      BOOST_REQUIRE_MESSAGE(held, error_text(held));
      BOOST_TEST(held->version == static_cast<uint64_t>(steps)); // (every step reached both halves)
      auto values = held->slices.at(0).data.to_vector();
      for (uint32_t r = 0; r < 32; ++r) {
        const uint32_t row = s * 32 + r;
        const bool named = row < 16 || (row >= 40 && row < 56);
        const bool moved = !std::equal(values.begin() + r * 4, values.begin() + r * 4 + 4, made.begin() + row * 4);
        BOOST_TEST(moved == named, "row " << row);
      }
    }
  }

  // Two slices of one model-parallel group that register with `chief` and train against `to`;
  // `reconnect` reaches a restarted chief. Fills `group`; the test actor monitors both.
  std::vector<worker_replica_actor> two_slices(chief_actor chief, parameter_shard_actor to, slice_group& group,
                                               std::function<caf::expected<chief_actor>()> reconnect = {}) {
    std::vector<worker_replica_actor> slices;
    group = slice_group{0, {}};
    for (uint32_t k = 0; k < 2; ++k) {
      auto cfg = config(chief);
      cfg.index = k;
      cfg.shards = {to};
      cfg.cluster.mode = train_mode::model_parallel; // 2 workers: one group of 2 slices
      cfg.cluster.slices = 2;
      cfg.cluster.workers.resize(2);
      cfg.reconnect_chief = reconnect;
      slices.push_back(keep(make_worker_replica(*sys, cfg, false)));
      (*self)->monitor(slices.back());
      group.slices.push_back(caf::actor_cast<caf::strong_actor_ptr>(slices.back()));
    }
    return slices;
  }

  // Checks that n monitored actors have quit normally (without waiting: the scheduler has run).
  void expect_normal_exits(int n) {
    for (int k = 0; k < n; ++k) {
      caf::error reason = caf::make_error(errc::timeout, "an actor did not quit (a group is stuck)");
      (*self)->receive([&](caf::down_msg& msg) { reason = msg.reason; }, caf::after(std::chrono::seconds(0)) >> [] {});
      BOOST_TEST(!reason, describe(reason));
    }
  }

  // Spawns a worker with cfg, registers it, starts it and waits until it has quit.
  void train_to_end(const worker_replica_config& cfg) {
    auto worker = keep(make_worker_replica(*sys, cfg, false));
    (*self)->monitor(worker);
    sched->run();
    (*self)->send(worker, start_atom_v);
    sched->run();
    (*self)->receive([](caf::down_msg&) {});
  }

  worker_replica_config config(chief_actor chief) {
    worker_replica_config cfg;
    cfg.index = 0;
    auto s = validate(option_values{});
    cfg.train = *s;
    cfg.train.model = spec.to_model();
    cfg.train.batch_size = 10;
    cfg.train.device.mode = device_mode::cpu;
    auto cluster = *validate(cluster_values{});
    cluster.workers.resize(1);
    cluster.report_every = 5;
    cfg.cluster = cluster;
    cfg.data = std::make_shared<const data_splits>(quadrant_data(200, 20, 20));
    cfg.chief = chief;
    cfg.shards = {shard};
    cfg.host = "test";
    return cfg;
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(worker_replica, worker_fixture)

// A shard handle in the worker's own process is its ShardLink (the shards live on other nodes),
// which keeps the deadline of every exchange itself: the worker's pulls and pushes to it set no
// timer on CAF's clock (each timer woke the clock's thread twice a request). The test's shard
// stands where the link would.
BOOST_AUTO_TEST_CASE(pulls_and_pushes_to_a_link_in_its_own_process_set_no_request_timer) {
  auto chief = keep(sys->spawn(stub_chief, plan, log, int64_t{20}, int64_t{-1}));
  auto worker = keep(make_worker_replica(*sys, config(chief), false));
  (*self)->monitor(worker);
  sched->run(); // (registered: its request to the chief carried cluster.request-timeout)
  const auto me = caf::actor_cast<caf::strong_actor_ptr>(worker);
  auto timers = [&] {
    size_t n = 0;
    for (auto& [due, e] : sched->clock().schedule())
      if (e->subtype == caf::detail::simple_actor_clock::request_timeout_type
          && static_cast<caf::detail::simple_actor_clock::request_timeout&>(*e).self == me)
        ++n;
    return n;
  };
  const size_t registered = timers(); // (CAF's test clock keeps a request's timer past its answer)
  (*self)->send(worker, start_atom_v);
  size_t most = registered;
  while (log->steps < 20 && sched->try_run_once()) // (until the stub chief stops it: leaving asks the chief)
    most = std::max(most, timers());
  sched->run();
  BOOST_TEST(log->steps >= 20);
  BOOST_TEST(most == registered);
}

BOOST_AUTO_TEST_CASE(registers_trains_against_the_shard_and_stops_cleanly) {
  auto chief = keep(sys->spawn(stub_chief, plan, log, int64_t{20}, int64_t{-1}));
  auto worker = keep(make_worker_replica(*sys, config(chief), false));
  (*self)->monitor(worker);
  sched->run();
  BOOST_REQUIRE_EQUAL(log->hellos.size(), 1u);
  BOOST_TEST(log->hellos[0].byte_order_probe.values == std::vector<float>{byte_order_probe_value});
  BOOST_TEST(log->steps == 0); // nothing happens before start
  (*self)->send(worker, start_atom_v);
  sched->run();
  caf::error reason = caf::make_error(errc::timeout);
  (*self)->receive([&](caf::down_msg& msg) { reason = msg.reason; });
  BOOST_TEST(!reason); // quit normally
  BOOST_TEST(log->final_seen);
  BOOST_TEST(log->steps >= 20);
  BOOST_TEST(log->examples == log->steps * 10);
  BOOST_TEST(log->loss_sum > 0.0);
  // every step pushed once to the only shard
  auto v = ask<pull_reply>(shard, pull_atom_v, pull_request{0, {}});
  BOOST_TEST(v->version == static_cast<uint64_t>(log->steps));
}

BOOST_AUTO_TEST_CASE(reports_count_the_tensor_bytes_of_every_wire_setting) {
  // 16x8 + 8 + 8x4 + 4 = 172 floats: each step pushes the gradients and receives the values
  const uint64_t floats = 172;
  struct expectation {
    compression_settings wire;
    uint64_t sent_per_step;     // gradient payload
    uint64_t received_per_step; // values payload (the first pull is fp32, the rest as set)
  };
  // top-k 1%: ceil(0.01 n) of each variable: 2 + 1 + 1 + 1 values, 4 bytes of index each
  std::vector<expectation> cases{{{wire_precision::fp32, sparsifier::none, 0.01}, floats * 4, floats * 4},
                                 {{wire_precision::bf16, sparsifier::none, 0.01}, floats * 2, floats * 2},
                                 {{wire_precision::fp16, sparsifier::topk, 0.01}, 5 * (4 + 2), floats * 2}};
  for (auto& c : cases) {
    *log = chief_log{};
    auto store = initialised_shard(1);
    auto chief = keep(sys->spawn(stub_chief, plan, log, int64_t{20}, int64_t{-1}));
    auto cfg = config(chief);
    cfg.shards = {store};
    cfg.cluster.wire = c.wire;
    train_to_end(cfg);
    auto steps = static_cast<uint64_t>(log->steps);
    BOOST_REQUIRE(steps >= 20u);
    BOOST_TEST(log->bytes_sent == steps * c.sent_per_step, to_string(c.wire.precision));
    BOOST_TEST(log->bytes_received == floats * 4 + steps * c.received_per_step, to_string(c.wire.precision));
    // the shard keeps fp32 master copies: its values are not all 16-bit values
    auto v = ask<pull_reply>(store, pull_atom_v, pull_request{0, {{0, 0, 128}}});
    BOOST_REQUIRE(v);
    auto held = v->slices[0].data.values;
    auto rounded = held;
    round_to_precision(c.wire.precision, rounded.data(), rounded.size());
    BOOST_TEST((c.wire.exact() || held != rounded));
  }
}

BOOST_AUTO_TEST_CASE(its_telemetry_gets_the_reports_figures) {
  auto chief = keep(sys->spawn(stub_chief, plan, log, int64_t{20}, int64_t{-1}));
  auto cfg = config(chief);
  auto observed = telemetry::open({"r", "worker", 0, "", std::chrono::milliseconds(1000)});
  BOOST_REQUIRE(observed);
  cfg.observed = *observed;
  train_to_end(cfg);
  auto& m = (*observed)->metrics();
  BOOST_TEST(m.value("actorps_worker_steps_total") == static_cast<double>(log->steps));
  BOOST_TEST(m.value("actorps_step_compute_seconds") > 0.0);
  BOOST_TEST(m.value("actorps_step_compute_seconds") < 10.0); // in seconds, not milliseconds
  BOOST_TEST(m.value("actorps_worker_seen_global_step") > 0.0);
  BOOST_TEST(m.value("actorps_global_step") == 0.0); // the chief's alone
  BOOST_TEST(m.value("actorps_train_loss") > 0.0);
  auto text = m.exposition();
  BOOST_TEST(text.find("actorps_step_input_wait_seconds{") != std::string::npos, text);
  BOOST_TEST(text.find("actorps_step_wait_for_pull_seconds{") != std::string::npos, text);
}

BOOST_AUTO_TEST_CASE(the_only_replica_stops_by_itself_after_the_steps_left) {
  // the chief's stop would come later (after 1000 steps): the welcome's 17 steps end the run
  auto chief = keep(sys->spawn(stub_chief, plan, log, int64_t{1000}, int64_t{17}));
  auto worker = keep(make_worker_replica(*sys, config(chief), false));
  (*self)->monitor(worker);
  sched->run();
  (*self)->send(worker, start_atom_v);
  sched->run();
  caf::error reason = caf::make_error(errc::timeout, "the worker did not stop");
  (*self)->receive([&](caf::down_msg& msg) { reason = msg.reason; }, caf::after(std::chrono::seconds(0)) >> [] {});
  BOOST_TEST(!reason, describe(reason));
  BOOST_TEST(log->final_seen);
  BOOST_TEST(log->steps == 17);
  auto v = ask<pull_reply>(shard, pull_atom_v, pull_request{0, {}});
  BOOST_TEST(v->version == 17u);
}

BOOST_AUTO_TEST_CASE(the_start_deadline_fires_on_the_actors_clock) {
  auto chief = keep(sys->spawn(stub_chief, plan, log, int64_t{1000}, int64_t{-1}));
  auto cfg = config(chief);
  cfg.cluster.startup_timeout = std::chrono::seconds(20);
  auto worker = keep(make_worker_replica(*sys, cfg, false));
  (*self)->monitor(worker);
  sched->run();
  BOOST_REQUIRE_EQUAL(log->hellos.size(), 1u); // registered; the chief never starts it
  sched->advance_time(std::chrono::seconds(19));
  sched->run();
  caf::error reason;
  bool down = false;
  (*self)->receive([&](caf::down_msg& msg) { down = true; reason = msg.reason; },
                   caf::after(std::chrono::seconds(0)) >> [] {});
  BOOST_TEST(!down);
  sched->advance_time(std::chrono::seconds(1));
  sched->run();
  (*self)->receive([&](caf::down_msg& msg) { down = true; reason = msg.reason; },
                   caf::after(std::chrono::seconds(0)) >> [] {});
  BOOST_TEST(down);
  BOOST_TEST(describe(reason) == "timeout: waiting for the chief: no start within cluster.startup-timeout");
}

BOOST_AUTO_TEST_CASE(two_slices_train_what_one_whole_worker_trains) {
  // the whole model, one worker, against the fixture's shard, for exactly 20 steps (the only
  // replica stops by itself after the steps its welcome names)
  auto chief = keep(sys->spawn(stub_chief, plan, log, int64_t{1000}, int64_t{20}));
  auto whole_cfg = config(chief);
  auto whole = keep(make_worker_replica(*sys, whole_cfg, false));
  (*self)->monitor(whole);
  sched->run();
  (*self)->send(whole, start_atom_v);
  sched->run();
  (*self)->receive([](caf::down_msg&) {});
  auto want = ask<pull_reply>(shard, pull_atom_v, pull_request{0, held_ranges(plan, 0)});
  BOOST_REQUIRE(want);
  BOOST_TEST(log->steps == 20);
  // the same model split over two slices of one group, from the same initial values; once with
  // both slices started together, once with slice 1 started only after slice 0 has sent it the
  // first step's parts (over a network the chief's start can arrive after another slice's parts)
  for (bool slice1_late : {false, true}) {
    BOOST_TEST_CONTEXT("slice 1 started late: " << slice1_late) {
      auto split_shard = initialised_shard(2);
      auto split_log = std::make_shared<chief_log>();
      auto split_chief = keep(sys->spawn(stub_chief, plan, split_log, int64_t{1000}, int64_t{20}));
      slice_group group;
      auto slices = two_slices(split_chief, split_shard, group);
      sched->run();
      for (auto& s : slices) {
        (*self)->send(s, start_atom_v, group);
        if (slice1_late)
          sched->run(); // slice 0 pulls, computes and sends its layer-0 part to the unstarted slice 1
      }
      sched->run();
      expect_normal_exits(2);
      BOOST_TEST(split_log->steps == log->steps); // slice 0 speaks for the group
      BOOST_TEST(split_log->examples == log->examples);
      auto got = ask<pull_reply>(split_shard, pull_atom_v, pull_request{0, held_ranges(plan, 0)});
      BOOST_REQUIRE(got);
      BOOST_TEST(got->version == 2 * want->version); // each slice pushed its columns once per step
      BOOST_REQUIRE_EQUAL(got->slices.size(), want->slices.size());
      double worst = 0;
      for (size_t i = 0; i < got->slices.size(); ++i)
        for (size_t j = 0; j < got->slices[i].data.values.size(); ++j)
          worst = std::max(worst, double{std::abs(got->slices[i].data.values[j] - want->slices[i].data.values[j])});
      BOOST_TEST(worst < 1e-4, "largest difference between split and whole training: " << worst);
    }
  }
}

BOOST_AUTO_TEST_CASE(slices_outlive_a_lost_chief_and_train_what_an_uninterrupted_group_trains) {
  // reference: 12 steps without interruption
  auto want_shard = initialised_shard(2);
  auto want_chief = keep(sys->spawn(stub_chief, plan, std::make_shared<chief_log>(), int64_t{1000}, int64_t{12}));
  slice_group group;
  auto slices = two_slices(want_chief, want_shard, group);
  sched->run();
  for (auto& s : slices)
    (*self)->send(s, start_atom_v, group);
  sched->run();
  expect_normal_exits(2);
  // the chief is lost while slice 0 is inside step 0, waiting for the unstarted slice 1; both
  // pause and register with the restarted chief, which starts the group again for 12 steps
  auto shard2 = initialised_shard(2);
  auto first_chief = keep(sys->spawn(stub_chief, plan, log, int64_t{1000}, int64_t{12}));
  auto restarted_log = std::make_shared<chief_log>();
  auto restarted = keep(sys->spawn(stub_chief, plan, restarted_log, int64_t{1000}, int64_t{12}));
  slices = two_slices(first_chief, shard2, group, [restarted]() -> caf::expected<chief_actor> { return restarted; });
  sched->run();
  (*self)->send(slices[0], start_atom_v, group);
  sched->run();
  caf::anon_send_exit(first_chief, caf::exit_reason::kill);
  sched->run();
  BOOST_TEST(restarted_log->hellos.size() == 2u);
  for (auto& s : slices)
    (*self)->send(s, start_atom_v, group);
  sched->run();
  expect_normal_exits(2);
  // a second step begun inside step 0 would have loaded another batch into slice 0 only
  auto want = ask<pull_reply>(want_shard, pull_atom_v, pull_request{0, held_ranges(plan, 0)});
  auto got = ask<pull_reply>(shard2, pull_atom_v, pull_request{0, held_ranges(plan, 0)});
  BOOST_REQUIRE(want && got);
  BOOST_REQUIRE_EQUAL(want->slices.size(), plan.variables.size());
  BOOST_TEST(want->version == 24u);
  BOOST_TEST(got->version == want->version);
  BOOST_TEST((got->slices == want->slices), "the interrupted group trained other values");
}

BOOST_AUTO_TEST_CASE(a_plan_for_another_model_is_refused) {
  auto other = plan;
  other.variables[0].rows = 99;
  auto chief = keep(sys->spawn(stub_chief, other, log, int64_t{20}, int64_t{-1}));
  auto worker = keep(make_worker_replica(*sys, config(chief), false));
  (*self)->monitor(worker);
  sched->run();
  caf::error reason;
  (*self)->receive([&](caf::down_msg& msg) { reason = msg.reason; });
  BOOST_TEST(reason == errc::protocol_error);
  BOOST_TEST(describe(reason).find("does not match this worker's model") != std::string::npos, describe(reason));
}

BOOST_AUTO_TEST_CASE(a_shard_refusing_the_worker_stops_it_with_the_shards_error) {
  // The shard knows only worker 0; this worker claims to be worker 3 of 4.
  auto chief = keep(sys->spawn(stub_chief, plan, log, int64_t{20}, int64_t{-1}));
  auto cfg = config(chief);
  cfg.index = 3;
  cfg.cluster.workers.resize(4);
  auto worker = keep(make_worker_replica(*sys, cfg, false));
  (*self)->monitor(worker);
  sched->run();
  (*self)->send(worker, start_atom_v);
  sched->run();
  caf::error reason;
  (*self)->receive([&](caf::down_msg& msg) { reason = msg.reason; });
  BOOST_TEST(reason == errc::unknown_worker);
}

namespace {

// Texts of 8 id slots: class 0 names ids from [0, 16), class 1 from [40, 56) (then empty slots).
dataset text_set(int n, uint32_t seed) {
  dataset d;
  d.rows = n;
  d.shape = {1, 8, 1};
  d.cols = 8;
  d.max_label = 1;
  uint32_t state = seed;
  auto next = [&] { return state = state * 1664525u + 1013904223u; };
  for (int r = 0; r < n; ++r) {
    const int label = r % 2;
    const int ids = 3 + static_cast<int>(next() % 5);
    for (int t = 0; t < 8; ++t)
      d.images.push_back(t < ids ? encode_token((label == 0 ? 0u : 40u) + next() % 16u) : 0.0f);
    d.labels.push_back(static_cast<float>(label));
  }
  return d;
}

// The text model of these cases: 8 id slots, a 2^6 x 4 embedding bag, 2 classes.
model_spec text_model() {
  model_spec text;
  text.input = {1, 8, 1};
  text.layers = *parse_layers({"embedding 6 4 mean", "dense 2"});
  return text;
}

// A worker of `text` on text_set's data, against `shards`.
worker_replica_config text_config(worker_replica_config cfg, const model_spec& text,
                                  std::vector<parameter_shard_actor> shards) {
  cfg.train.model = text;
  auto data = std::make_shared<data_splits>();
  data->train = text_set(200, 1);
  data->validation = text_set(20, 2);
  data->test = text_set(20, 3);
  data->token_ids = true;
  cfg.data = data;
  cfg.shards = std::move(shards);
  return cfg;
}

} // namespace

// An embedding model's worker against 2 ps nodes holding the table's halves (rows [0, 32) and
// [32, 64)): every step pulls its batch's rows from both and pushes their gradients back, so both
// shards count every step; rows no example names never move from the values the shards made.
BOOST_AUTO_TEST_CASE(a_table_model_pulls_and_pushes_only_its_batches_rows) {
  const auto text = text_model();
  auto table_plan = make_placement(text.variables(), 2, placement_strategy::round_robin);
  BOOST_REQUIRE_EQUAL(table_plan.parts.size(), 4u); // the table's halves, the weights, the bias
  auto shards = table_shards(*this, text, table_plan, "adagrad", 1);
  auto chief = keep(sys->spawn(stub_chief, table_plan, log, int64_t{20}, int64_t{-1}));
  train_to_end(text_config(config(chief), text, shards));
  BOOST_TEST(log->final_seen);
  BOOST_TEST(log->steps >= 20);
  check_table_halves(shards, log->steps);
}

// The same with overlapped steps (cluster.overlap-steps, async, the rows asked back with the
// pushes): each step computes while the step before's pushes travel, on rows asked back one push
// earlier, each batch's rows held apart from the next one's; both shards count every step, and
// rows no example names never move.
BOOST_AUTO_TEST_CASE(a_table_worker_overlaps_its_steps_on_rows_asked_back_a_push_earlier) {
  const auto text = text_model();
  auto table_plan = make_placement(text.variables(), 2, placement_strategy::round_robin);
  auto shards = table_shards(*this, text, table_plan, "adagrad", 1);
  auto chief = keep(sys->spawn(stub_chief, table_plan, log, int64_t{40}, int64_t{-1}));
  auto cfg = text_config(config(chief), text, shards);
  cfg.cluster.overlap_steps = 1;
  BOOST_REQUIRE(cfg.cluster.rows_with_push && cfg.cluster.mode == train_mode::async);
  train_to_end(std::move(cfg));
  BOOST_TEST(log->final_seen);
  BOOST_TEST(log->steps >= 40);
  // (each step computed on its own batch's rows: a batch's examples paired with another's rows
  // would read other rows than their ids name and stay at chance, ln 2 = 0.69)
  BOOST_REQUIRE(log->examples > 0);
  BOOST_TEST(log->loss_sum / static_cast<double>(log->examples) < 0.55, log->loss_sum / static_cast<double>(log->examples));
  check_table_halves(shards, log->steps);
}

// A table worker outlives a lost chief: it registers with the restarted chief, whose plan is the
// same, and trains on with the row exchanges it has (a fetch out, or the next batch's rows asked
// back with a push, still places its rows through the batch it renumbered). Killed at several
// points of its steps.
BOOST_AUTO_TEST_CASE(a_table_worker_outlives_a_lost_chief) {
  const auto text = text_model();
  auto table_plan = make_placement(text.variables(), 2, placement_strategy::round_robin);
  for (size_t events : {40, 97, 150, 333}) {
    auto shards = table_shards(*this, text, table_plan, "adagrad", 1);
    auto first_log = std::make_shared<chief_log>();
    auto first = keep(sys->spawn(stub_chief, table_plan, first_log, int64_t{1000}, int64_t{-1}));
    auto restarted_log = std::make_shared<chief_log>();
    auto restarted = keep(sys->spawn(stub_chief, table_plan, restarted_log, int64_t{20}, int64_t{-1}));
    auto cfg = text_config(config(first), text, shards);
    cfg.reconnect_chief = [restarted]() -> caf::expected<chief_actor> { return restarted; };
    auto worker = keep(make_worker_replica(*sys, cfg, false));
    (*self)->monitor(worker);
    sched->run();
    (*self)->send(worker, start_atom_v);
    sched->run(events); // (mid-run: a step's rows out, held, or being computed on)
    caf::anon_send_exit(first, caf::exit_reason::kill);
    sched->run();
    BOOST_TEST(restarted_log->hellos.size() == 1u, "killed after " << events << " events");
    (*self)->send(worker, start_atom_v);
    sched->run();
    caf::error reason = caf::make_error(errc::timeout);
    (*self)->receive([&](caf::down_msg& msg) { reason = msg.reason; });
    BOOST_TEST(!reason, "killed after " << events << " events: " << describe(reason));
    BOOST_TEST(restarted_log->final_seen, "killed after " << events << " events");
    BOOST_TEST(restarted_log->steps >= 20, "killed after " << events << " events");
  }
}

BOOST_AUTO_TEST_SUITE_END()
