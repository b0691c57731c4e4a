// The replica_control tests' helpers: a controller's config, and the inputs of a start, a pull
// and a step with two shards. Included by tests/control/replica_control*_test.cpp only.
#pragma once

#include "control/replica_control.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <ostream>

namespace actorps { // for the messages of failed checks
inline std::ostream& operator<<(std::ostream& out, replica_phase p) {
  return out << to_string(p);
}
inline std::ostream& operator<<(std::ostream& out, errc c) {
  return out << to_string(c);
}
} // namespace actorps

using namespace actorps;
using kind = replica_command::kind;
using phase = replica_phase;
using step_state = replica_control::step_state;
using namespace std::chrono_literals;

namespace replica_test {

using controller = actorps::replica_control; // (the suite is named replica_control too)

inline const replica_time t0{};

inline const replica_command* find(const replica_commands& cmds, kind k) {
  auto i = std::find_if(cmds.begin(), cmds.end(), [k](const replica_command& c) { return c.what == k; });
  return i == cmds.end() ? nullptr : &*i;
}

inline bool has(const replica_commands& cmds, kind k) {
  return find(cmds, k) != nullptr;
}

inline bool logs(const replica_commands& cmds, const std::string& part) {
  return std::any_of(cmds.begin(), cmds.end(),
                     [&](const replica_command& c) { return c.what == kind::log && c.text.find(part) != std::string::npos; });
}

inline std::vector<kind> kinds(const replica_commands& cmds) {
  std::vector<kind> out;
  for (auto& c : cmds)
    if (c.what != kind::log)
      out.push_back(c.what);
  return out;
}

inline replica_control_config config(train_mode mode = train_mode::async) {
  replica_control_config c;
  c.mode = mode;
  c.max_steps = 0;
  c.report_every = 3;
  c.shards_recoverable = true;
  c.chief_recoverable = true;
  c.startup_timeout = 20s;
  return c;
}

// Two shards, one request each per round: the epochs of the round just sent.
struct round_tokens {
  uint64_t e0, e1;
};

inline round_tokens send(controller& ctl) {
  return {ctl.requested(0), ctl.requested(1)};
}

// Registers with two shards (no step limit) and starts: returns the start's commands (a pull).
inline replica_commands start(controller& ctl, int64_t steps_left = -1, bool more = false) {
  ctl.begin(t0);
  ctl.registered(steps_left, more, 2);
  return ctl.start();
}

// Answers the pull just asked for, shard 0 at `v0` and shard 1 at `v1`; returns the commands
// (a compute).
inline replica_commands answer_pull(controller& ctl, uint64_t v0, uint64_t v1) {
  auto t = send(ctl);
  BOOST_REQUIRE(ctl.answers(0, t.e0));
  ctl.pulled(0, v0);
  BOOST_REQUIRE(ctl.answers(1, t.e1));
  return ctl.pulled(1, v1);
}

// The same with both shards at `version`.
inline replica_commands answer_pull(controller& ctl, uint64_t version = 0) {
  return answer_pull(ctl, version, version);
}

// Started, pulled, and the first step computed: returns the epochs of its pushes, just sent.
inline round_tokens first_pushes(controller& ctl) {
  start(ctl);
  answer_pull(ctl);
  BOOST_REQUIRE(has(ctl.step_status(step_state::ready, 10), kind::push));
  return send(ctl);
}

// A whole step: the computed gradients are ready, both pushes answered; returns the commands of
// the last reply (a compute, a report, the finish...).
inline replica_commands one_step(controller& ctl, uint64_t next_step, bool stale = false) {
  auto push = ctl.step_status(step_state::ready, 10);
  BOOST_REQUIRE(has(push, kind::push));
  auto t = send(ctl);
  BOOST_REQUIRE(ctl.answers(0, t.e0));
  ctl.pushed(0, next_step, next_step, stale);
  BOOST_REQUIRE(ctl.answers(1, t.e1));
  return ctl.pushed(1, next_step, next_step, stale);
}

} // namespace replica_test

using namespace replica_test;

