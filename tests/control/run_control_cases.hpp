// The helpers of the run_control tests (run_control_test.cpp, run_control_members_test.cpp,
// run_control_ops_test.cpp): configurations, a started controller, a run answered to its end.
#pragma once

#include "control/run_control.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>

namespace run_control_cases {

using namespace actorps;
using kind = run_command::kind;
using namespace std::chrono_literals;
using controller = actorps::run_control; // (the suite is named run_control too)

inline const run_time t0{};

inline const run_command* find(const run_commands& cmds, kind k) {
  auto i = std::find_if(cmds.begin(), cmds.end(), [k](const run_command& c) { return c.what == k; });
  return i == cmds.end() ? nullptr : &*i;
}

inline bool has(const run_commands& cmds, kind k) {
  return find(cmds, k) != nullptr;
}

inline bool logs(const run_commands& cmds, const std::string& part) {
  return std::any_of(cmds.begin(), cmds.end(),
                     [&](const run_command& c) { return c.what == kind::log && c.text.find(part) != std::string::npos; });
}

inline std::string describe_logs(const run_commands& cmds) {
  std::string out;
  for (auto& c : cmds)
    if (c.what == kind::log)
      out += c.text + "; ";
  return out;
}

inline run_control_config config(train_mode mode = train_mode::async, bool checkpoints = true) {
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
inline run_control_config open_ended(int64_t train_rows = 1000000, int64_t checkpoint_every_steps = 0) {
  auto c = config();
  c.max_steps = 0;
  c.train_rows = train_rows;
  c.checkpoint_every_steps = checkpoint_every_steps;
  return c;
}

// begin, every shard ready, every worker registered: returns the last commands (training).
inline run_commands start(controller& ctl, uint32_t workers = 2, uint32_t shards = 2) {
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
// The run's end began: its final save (with checkpoint.dir), or else its evaluation and summary.
inline bool ends(const controller& ctl, const run_commands& cmds) {
  return (ctl.phase() == run_phase::final_save && has(cmds, kind::save))
         || (ctl.phase() == run_phase::finishing && has(cmds, kind::finish));
}

inline run_commands run_to_end(controller& ctl, run_commands cmds, int* summaries = nullptr) {
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
inline run_commands drive_to(controller& ctl, run_phase phase) {
  auto cmds = start(ctl);
  if (phase == run_phase::training)
    return cmds;
  cmds = ctl.progress(0, 20, 20, 1.0, false, t0 + 1s, 20); // 20 pushes: over max-steps in every mode
  BOOST_REQUIRE(ctl.phase() == run_phase::stopping);
  if (phase == run_phase::stopping)
    return cmds;
  ctl.progress(0, 0, 0, 0.0, true, t0 + 1s);
  cmds = ctl.progress(1, 0, 0, 0.0, true, t0 + 1s); // (with checkpoint.dir: the final save, then the summary)
  BOOST_REQUIRE(ctl.phase() == run_phase::final_save);
  BOOST_REQUIRE(has(cmds, kind::save));
  if (phase == run_phase::final_save)
    return cmds;
  cmds = ctl.saved(find(cmds, kind::save)->op);
  BOOST_REQUIRE(ctl.phase() == run_phase::finishing);
  BOOST_REQUIRE(has(cmds, kind::finish));
  return cmds;
}

// An elastic run: 2 configured workers, 1 to 4 members, no step limit.
inline run_control_config elastic(train_mode mode, uint32_t min_workers = 1) {
  auto c = open_ended();
  c.mode = mode;
  c.elastic = true;
  c.min_workers = min_workers;
  c.max_workers = 4;
  return c;
}

inline const run_command* membership(const run_commands& cmds) {
  return find(cmds, kind::membership);
}


// The grants of `cmds` as (worker, steps).
inline std::vector<std::pair<uint32_t, int64_t>> grants(const run_commands& cmds) {
  std::vector<std::pair<uint32_t, int64_t>> out;
  for (auto& c : cmds)
    if (c.what == kind::grant)
      out.emplace_back(c.index, c.step);
  return out;
}

} // namespace run_control_cases
