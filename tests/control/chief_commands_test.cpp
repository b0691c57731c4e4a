// Tests of control/chief_commands: the meaning of run_control's commands that the chief actor and
// the simulator share, through a host that records the primitives it was asked for. The
// simulator's own interpreter sent stop_worker only to training workers (issue 49); the actor's
// meaning, which ships, is the case here.
#include "control/chief_commands.hpp"

#include "tests/control/run_control_cases.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;
using namespace std::chrono_literals;
using kind = run_command::kind;

namespace {

const run_time t0{};

struct recording_host final : chief_command_host {
  std::vector<std::string> done;
  bool over = false;
  bool ended() override { return over; }
  void log(const run_command& c) override { done.push_back("log " + c.text); }
  void membership(const run_command& c) override { done.push_back("membership " + c.text); }
  void tick_after(std::chrono::milliseconds after) override { done.push_back("tick " + std::to_string(after.count())); }
  void start_workers() override { done.push_back("start all"); }
  void start_worker(uint32_t j) override { done.push_back("start " + std::to_string(j)); }
  void step_soon() override { done.push_back("step"); }
  void grant(uint32_t j, int64_t n) override { done.push_back("grant " + std::to_string(j) + " " + std::to_string(n)); }
  void stop_worker(uint32_t j) override { done.push_back("stop " + std::to_string(j)); }
  void evaluate(const run_command&) override { done.push_back("evaluate"); }
  void save(const run_command&) override { done.push_back("save"); }
  void finish(const run_command&) override { done.push_back("finish"); }
  void restore_shard(uint32_t s) override { done.push_back("restore " + std::to_string(s)); }
  void quit() override { done.push_back("quit"); over = true; }
  void fail(errc, const std::string& text) override { done.push_back("fail " + text); over = true; }
};

// Sync with three workers on two shards, no step limit (run_control's own cases').
run_control_config config(bool in_graph = false) {
  auto c = run_control_cases::open_ended();
  c.workers = 3;
  c.mode = train_mode::sync;
  c.in_graph = in_graph;
  c.replicas_to_aggregate = 1;
  return c;
}

run_command indexed(kind k, uint32_t j) {
  run_command c{k};
  c.index = j;
  return c;
}

// An in-graph driver's host that ignores everything (the cases look at the driver's phase).
struct idle_in_graph_host final : in_graph_host {
  run_control& ctl;
  explicit idle_in_graph_host(run_control& c) : ctl(c) {}
  run_control& run() override { return ctl; }
  void execute(run_commands) override {}
  run_time now() override { return t0; }
  int batch_rows() override { return 90; }
  void batch_done() override {}
  void send_part(uint64_t, const in_graph_round::assignment&) override {}
  void push_average(const in_graph_round::result&, uint64_t) override {}
  void step_after(std::chrono::milliseconds) override {}
  void log(const std::string&) override {}
};

} // namespace

BOOST_AUTO_TEST_SUITE(chief_commands)

BOOST_AUTO_TEST_CASE(stop_workers_reaches_the_training_ones_stop_worker_its_worker_whatever_it_does) {
  run_control ctl{config()};
  ctl.begin(t0);
  ctl.shard_ready(0, t0);
  ctl.shard_ready(1, t0);
  ctl.worker_registered(0, t0);
  ctl.worker_registered(2, t0); // worker 1 never registers: training waits for it
  recording_host host;
  carry_out({run_command{kind::stop_workers}, indexed(kind::stop_worker, 1)}, ctl, host);
  BOOST_TEST(host.done == (std::vector<std::string>{"stop 1"})); // nobody trains yet; worker 1 is told all the same
  ctl.worker_registered(1, t0);
  BOOST_REQUIRE((ctl.phase() == run_phase::training));
  host.done.clear();
  carry_out({run_command{kind::stop_workers}}, ctl, host);
  BOOST_TEST(host.done == (std::vector<std::string>{"stop 0", "stop 1", "stop 2"}));
}

BOOST_AUTO_TEST_CASE(nothing_is_carried_out_after_a_quit_or_a_failure) {
  run_control ctl{config()};
  for (auto last : {kind::quit, kind::fail}) {
    recording_host host;
    run_command end{last};
    end.text = "lost";
    carry_out({run_command::log("a"), end, run_command::log("b"), indexed(kind::grant, 0)}, ctl, host);
    BOOST_TEST(host.done.size() == 2u);
    BOOST_TEST(host.done[0] == "log a");
  }
}

BOOST_AUTO_TEST_CASE(in_graph_a_restarted_worker_takes_parts_and_a_restore_drops_the_step) {
  run_control ctl{config(true)};
  run_control_cases::start(ctl, 3);
  idle_in_graph_host ig_host{ctl};
  in_graph_driver driver{3, 10s, ig_host};
  driver.worker_down(2);
  BOOST_TEST(!driver.round().live(2));
  recording_host host;
  carry_out({indexed(kind::start_worker, 2)}, ctl, host, &driver);
  BOOST_TEST(driver.round().live(2));
  BOOST_TEST(host.done == (std::vector<std::string>{"start 2"}));
  driver.step();
  BOOST_REQUIRE((driver.at() == in_graph_driver::phase::computing));
  carry_out({indexed(kind::restore_shard, 1), run_command{kind::in_graph_step}}, ctl, host, &driver);
  BOOST_TEST((driver.at() == in_graph_driver::phase::idle));
  BOOST_TEST(host.done.back() == "step");
}

BOOST_AUTO_TEST_SUITE_END()
