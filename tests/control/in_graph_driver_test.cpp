// Tests of control/in_graph_driver: the in-graph step's rules that the chief actor and the
// simulator share, driven through a host that records what it was asked to do, over a real
// run_control (sync, in-graph, two workers, two shards). The simulator's own driver lacked the
// check that holds a step while a shard is restored (issue 49); here it is a case.
#include "control/in_graph_driver.hpp"

#include "tests/control/run_control_cases.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>

using namespace actorps;
using namespace std::chrono_literals;

namespace {

const run_time t0{};

// A host that records the driver's requests and answers nothing by itself.
struct recording_host final : in_graph_host {
  run_control ctl;
  run_time clock = t0;
  int rows = 100;
  int batches_done = 0;
  std::vector<std::pair<uint64_t, in_graph_round::assignment>> parts; // (step, assignment)
  std::vector<in_graph_round::result> averages;
  std::vector<uint64_t> tokens; // (of each average pushed)
  std::vector<std::chrono::milliseconds> pauses;
  std::vector<std::string> lines;
  run_commands executed;

  explicit recording_host(run_control_config cfg) : ctl(std::move(cfg)) {
  }
  run_control& run() override { return ctl; }
  void execute(run_commands cmds) override { executed.insert(executed.end(), cmds.begin(), cmds.end()); }
  run_time now() override { return clock; }
  int batch_rows() override { return rows; }
  void batch_done() override { ++batches_done; }
  void send_part(uint64_t step, const in_graph_round::assignment& a) override { parts.emplace_back(step, a); }
  void push_average(const in_graph_round::result& result, uint64_t token) override {
    averages.push_back(result);
    tokens.push_back(token);
  }
  void step_after(std::chrono::milliseconds pause) override { pauses.push_back(pause); }
  void log(const std::string& line) override { lines.push_back(line); }

  bool did(run_command::kind k) const {
    return std::any_of(executed.begin(), executed.end(), [k](const run_command& c) { return c.what == k; });
  }
};

// The run: sync, in-graph, two workers on two shards, no step limit (run_control's own cases').
run_control_config in_graph_config() {
  auto c = run_control_cases::open_ended();
  c.mode = train_mode::sync;
  c.in_graph = true;
  c.replicas_to_aggregate = 1;
  return c;
}

// One slice of `value` for variable 0 (what every part's gradient holds here).
std::vector<variable_slice> grad(float value) {
  return {{0, 0, tensor_buffer{float_vector(4, value)}}};
}

} // namespace

BOOST_AUTO_TEST_SUITE(in_graph_driver)

BOOST_AUTO_TEST_CASE(a_step_hands_out_parts_pushes_their_average_and_counts_once_applied) {
  recording_host host{in_graph_config()};
  run_control_cases::start(host.ctl);
  actorps::in_graph_driver driver{2, 10s, host};
  driver.step();
  BOOST_REQUIRE_EQUAL(host.parts.size(), 2u);
  BOOST_TEST(host.parts[0].first == 1u); // step 1: the controller's steps + 1
  BOOST_TEST((driver.at() == actorps::in_graph_driver::phase::computing));
  driver.step(); // (one step at a time)
  BOOST_TEST(host.parts.size() == 2u);
  driver.part_delivered(0, 1, host.parts[0].second.part, 50, 25.0, grad(1.0f));
  BOOST_TEST(host.averages.empty());
  driver.part_delivered(1, 1, host.parts[1].second.part, 50, 35.0, grad(3.0f));
  BOOST_REQUIRE_EQUAL(host.averages.size(), 1u);
  BOOST_TEST(host.averages[0].rows == 100);
  BOOST_TEST(host.averages[0].average[0].data.values[0] == 2.0f);
  BOOST_TEST((driver.at() == actorps::in_graph_driver::phase::applying));
  driver.applied(host.tokens.at(0), 100, 60.0);
  BOOST_TEST(host.ctl.steps() == 1);
  BOOST_TEST(host.batches_done == 1);
  BOOST_TEST(host.did(run_command::kind::in_graph_step)); // the controller asks for the next
  BOOST_TEST((driver.at() == actorps::in_graph_driver::phase::idle));
}

BOOST_AUTO_TEST_CASE(no_step_begins_and_no_part_moves_while_a_shard_is_restored) {
  recording_host host{in_graph_config()};
  run_control_cases::start(host.ctl);
  actorps::in_graph_driver driver{2, 10s, host};
  host.ctl.shard_down(1, "killed");
  BOOST_REQUIRE(host.ctl.restoring());
  driver.step(); // (the simulator's copy began it)
  BOOST_TEST(host.parts.empty());
  BOOST_TEST((driver.at() == actorps::in_graph_driver::phase::idle));
  host.ctl.shard_restored(1);
  driver.step();
  BOOST_REQUIRE_EQUAL(host.parts.size(), 2u);
  host.ctl.shard_down(0, "killed"); // lost while the parts are computed: a failed part moves nowhere
  driver.part_failed(0, 1, "shard gone");
  BOOST_TEST(host.parts.size() == 2u);
  BOOST_TEST(host.lines.empty());
  driver.abandon(); // the chief's restore_shard: the step runs again once the shard is back
  BOOST_TEST((driver.at() == actorps::in_graph_driver::phase::idle));
}

// A part whose request failed goes to the other worker once it is free; whichever answer for it
// comes first counts (the late one of the first worker too: the same rows), the second is ignored.
BOOST_AUTO_TEST_CASE(a_failed_part_moves_to_the_other_worker_and_counts_once) {
  recording_host host{in_graph_config()};
  run_control_cases::start(host.ctl);
  actorps::in_graph_driver driver{2, 10s, host};
  driver.step();
  const auto lost = host.parts[0].second, other = host.parts[1].second;
  driver.part_failed(lost.worker, 1, "timed out");
  BOOST_TEST(host.parts.size() == 2u); // queued behind the other worker's own part
  BOOST_TEST(host.lines.size() == 1u);
  driver.part_delivered(other.worker, 1, other.part, 50, 1.0, grad(1.0f));
  BOOST_REQUIRE_EQUAL(host.parts.size(), 3u); // its next part: the lost one
  BOOST_TEST(host.parts[2].second.worker == other.worker);
  BOOST_TEST(host.parts[2].second.part == lost.part);
  BOOST_TEST(host.averages.empty());
  driver.part_delivered(lost.worker, 1, lost.part, 50, 1.0, grad(3.0f)); // the late answer comes first
  BOOST_REQUIRE_EQUAL(host.averages.size(), 1u);
  BOOST_TEST(host.averages[0].average[0].data.values[0] == 2.0f);
  driver.part_delivered(other.worker, 1, lost.part, 50, 1.0, grad(9.0f)); // computed twice: ignored
  BOOST_TEST(host.averages.size() == 1u);
  BOOST_TEST((driver.at() == actorps::in_graph_driver::phase::applying));
}

BOOST_AUTO_TEST_CASE(a_stalled_step_is_tried_again_after_the_pause_then_fails_the_run) {
  recording_host host{in_graph_config()};
  run_control_cases::start(host.ctl);
  actorps::in_graph_driver driver{2, 1s, host};
  driver.step();
  driver.worker_down(0);
  driver.worker_down(1);
  BOOST_REQUIRE_EQUAL(host.pauses.size(), 1u);
  BOOST_TEST(host.pauses[0].count() == actorps::in_graph_driver::stall_pause.count());
  BOOST_TEST(!host.did(run_command::kind::fail));
  driver.worker_back(1);
  host.clock = t0 + 2s; // a whole step timeout later, still nobody computes it
  driver.step();
  driver.part_failed(1, 1, "timed out");
  BOOST_TEST(host.did(run_command::kind::fail));
}

BOOST_AUTO_TEST_CASE(a_failed_push_fails_the_run_unless_a_shard_is_restored) {
  for (bool restoring : {false, true}) {
    BOOST_TEST_CONTEXT("restoring " << restoring) {
      recording_host host{in_graph_config()};
      run_control_cases::start(host.ctl);
      actorps::in_graph_driver driver{2, 10s, host};
      driver.step();
      driver.part_delivered(host.parts[0].second.worker, 1, host.parts[0].second.part, 50, 1.0, grad(1.0f));
      driver.part_delivered(host.parts[1].second.worker, 1, host.parts[1].second.part, 50, 1.0, grad(1.0f));
      if (restoring)
        host.ctl.shard_down(0, "killed");
      driver.apply_failed(host.tokens.at(0), "the push to shard 0 failed");
      BOOST_TEST(host.did(run_command::kind::fail) == !restoring);
      BOOST_TEST(host.batches_done == 1);
      BOOST_TEST((driver.at() == actorps::in_graph_driver::phase::idle));
      driver.applied(host.tokens.at(0), 100, 2.0); // (a late success counts nothing)
      BOOST_TEST(host.ctl.steps() == 0);
    }
  }
}

// Found by the simulator (in-graph seed 15358, shard crashes): a shard that died while the
// average was pushed, and came back at once, answered its push with nothing; the driver waited
// in applying for good, so no step began after the restore. The shard's loss ends the step
// (its batch is done, its step not counted); late answers of its pushes change nothing, even
// once the next step, of the same number, pushes its own.
BOOST_AUTO_TEST_CASE(a_shard_lost_while_the_average_is_pushed_ends_the_step) {
  recording_host host{in_graph_config()};
  run_control_cases::start(host.ctl);
  actorps::in_graph_driver driver{2, 10s, host};
  auto compute = [&](size_t from) {
    driver.step();
    BOOST_REQUIRE_EQUAL(host.parts.size(), from + 2);
    for (size_t i = from; i < from + 2; ++i)
      driver.part_delivered(host.parts[i].second.worker, host.parts[i].first, host.parts[i].second.part, 50, 1.0,
                            grad(1.0f));
    BOOST_REQUIRE((driver.at() == actorps::in_graph_driver::phase::applying));
  };
  compute(0);
  host.ctl.shard_down(0, "killed");
  driver.abandon(); // (what the chief's restore_shard command does)
  BOOST_TEST((driver.at() == actorps::in_graph_driver::phase::idle));
  BOOST_TEST(host.batches_done == 1);
  BOOST_TEST(host.ctl.steps() == 0);
  host.ctl.shard_restored(0);
  compute(2); // the next step begins after the restore (step 1 again: none was counted)
  BOOST_TEST(host.parts[2].first == 1u);
  driver.applied(host.tokens.at(0), 100, 2.0);                        // the lost step's late answer
  driver.apply_failed(host.tokens.at(0), "the push to shard 0 failed"); // or its late failure
  BOOST_TEST((driver.at() == actorps::in_graph_driver::phase::applying));
  BOOST_TEST(!host.did(run_command::kind::fail));
  driver.applied(host.tokens.at(1), 100, 2.0);
  BOOST_TEST(host.ctl.steps() == 1);
  BOOST_TEST(host.batches_done == 2);
}

BOOST_AUTO_TEST_SUITE_END()
