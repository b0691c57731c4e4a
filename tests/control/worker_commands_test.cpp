// Tests of control/worker_commands: the meaning of replica_control's commands that the worker
// actor and the simulator share, through a host that records the primitives it was asked for.
// The two interpreters differed (issue 49): after a quit the actor went on with the commands
// after it, the simulator stopped; the shared meaning stops after a leave, a quit or a failure.
#include "control/worker_commands.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;
using namespace std::chrono_literals;
using kind = replica_command::kind;

namespace {

struct recording_host final : worker_command_host {
  std::vector<std::string> done;
  bool over = false;
  bool fail_reports = false;
  bool ended() override { return over; }
  void register_hello() override { done.push_back("hello"); }
  void reconnect_chief() override { done.push_back("reach chief"); }
  void pull() override { done.push_back("pull"); }
  void compute(const replica_command& c) override { done.push_back("compute " + std::to_string(c.batch.count)); }
  void push() override { done.push_back("push"); }
  void report(const replica_command& c) override {
    done.push_back(std::string{"report "} + (c.final ? "final" : std::to_string(c.steps)));
    over = fail_reports; // (a report that fails fails the worker)
  }
  void reconnect_shards(const std::vector<uint32_t>& shards) override {
    done.push_back("reach shards " + std::to_string(shards.size()));
  }
  void ask_lease(const replica_command&) override { done.push_back("ask lease"); }
  void arm(worker_timer t, std::chrono::milliseconds after) override {
    const char* names[] = {"lease", "retry", "tick"};
    done.push_back(std::string{"arm "} + names[static_cast<int>(t)] + " " + std::to_string(after.count()));
  }
  void announce_stop() override { done.push_back("announce stop"); }
  void leave(const lease_request&) override {
    done.push_back("leave");
    over = true;
  }
  void quit() override {
    done.push_back("quit");
    over = true;
  }
  void fail(errc code, const std::string& text) override {
    done.push_back(std::string{"fail "} + to_string(code) + " " + text);
    over = true;
  }
  void log(const std::string& text) override { done.push_back("log " + text); }
};

replica_command after(kind k, std::chrono::milliseconds ms) {
  replica_command c{k};
  c.after = ms;
  return c;
}

using lines = std::vector<std::string>;

} // namespace

BOOST_AUTO_TEST_SUITE(worker_commands)

BOOST_AUTO_TEST_CASE(every_command_reaches_its_primitive_in_order) {
  recording_host host;
  replica_command compute{kind::compute};
  compute.batch.count = 7;
  replica_command shards{kind::reconnect_shards};
  shards.shards = {0, 2};
  replica_command report{kind::report};
  report.steps = 3;
  carry_out({replica_command{kind::register_hello}, replica_command{kind::reconnect_chief}, replica_command{kind::pull},
             compute, replica_command{kind::push}, report, shards, replica_command{kind::ask_lease},
             after(kind::lease_after, 500ms), after(kind::retry_after, 200ms), after(kind::tick_after, 20000ms),
             replica_command{kind::announce_stop}, replica_command::log("hello")},
            host);
  BOOST_TEST((host.done == lines{"hello", "reach chief", "pull", "compute 7", "push", "report 3", "reach shards 2",
                                 "ask lease", "arm lease 500", "arm retry 200", "arm tick 20000", "announce stop",
                                 "log hello"}));
}

BOOST_AUTO_TEST_CASE(nothing_is_carried_out_after_a_leave_a_quit_or_a_failure) {
  for (auto last : {kind::leave, kind::quit, kind::fail}) {
    recording_host host;
    replica_command end{last};
    end.code = errc::timeout;
    end.text = "no start";
    carry_out({replica_command::log("before"), end, replica_command{kind::pull}, replica_command::log("after")}, host);
    BOOST_TEST(host.done.size() == 2u);
    BOOST_TEST(host.done.front() == "log before");
  }
  recording_host failed;
  failed.fail_reports = true; // the final report fails: no announce, no quit after it
  replica_command report{kind::report};
  report.final = true;
  carry_out({report, replica_command{kind::announce_stop}, replica_command{kind::quit}}, failed);
  BOOST_TEST((failed.done == lines{"report final"}));
  recording_host gone;
  gone.over = true; // (the simulator's worker killed meanwhile)
  carry_out({replica_command{kind::pull}}, gone);
  BOOST_TEST(gone.done.empty());
}

BOOST_AUTO_TEST_CASE(each_timer_gives_its_input_back) {
  replica_control_config cfg;
  cfg.startup_timeout = 20s;
  cfg.shards_recoverable = true;
  replica_control ctl(cfg);
  const replica_time t0{};
  ctl.begin(t0);
  // tick: past the start deadline while registering, the worker fails by name
  auto ticked = timer_fired(ctl, worker_timer::tick, t0 + 21s);
  BOOST_REQUIRE(ticked.size() == 1u);
  BOOST_TEST((ticked.front().what == kind::fail));
  BOOST_TEST(ticked.front().text.find("cluster.startup-timeout") != std::string::npos);
  // retry: after a broken round, the pause's end pulls afresh
  replica_control again(cfg);
  again.begin(t0);
  again.registered(-1, false, 1);
  again.start();
  const auto epoch = again.requested(0);
  auto down = again.shard_down(0, "shard 0 went down");
  BOOST_REQUIRE(!down.empty());
  BOOST_TEST(!again.answers(0, epoch));
  again.shards_reconnected();
  auto retried = timer_fired(again, worker_timer::retry, t0);
  BOOST_REQUIRE(retried.size() == 1u);
  BOOST_TEST((retried.front().what == kind::pull));
  // lease: a worker without leases ignores it
  BOOST_TEST(timer_fired(again, worker_timer::lease, t0).empty());
}

BOOST_AUTO_TEST_SUITE_END()
