// Tests of control/stall_watch: when a stall report is due, and whom the line names.
#include "control/stall_watch.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(stall_watch)

BOOST_AUTO_TEST_CASE(due_after_the_interval_without_a_step_and_again_each_interval) {
  actorps::stall_watch w{10s};
  std::chrono::steady_clock::time_point t0{};
  BOOST_TEST(!w.due(t0 + 60s)); // (before training: nothing observed)
  w.observe(5, t0);
  BOOST_TEST(!w.due(t0 + 9s));
  w.observe(6, t0 + 9s); // a step: the stall clock starts again
  BOOST_TEST(!w.due(t0 + 18s));
  w.observe(6, t0 + 18s); // the same step: no progress
  BOOST_TEST(w.due(t0 + 19s));
  BOOST_TEST(w.stalled_seconds(t0 + 19s) == 10.0);
  BOOST_TEST(!w.due(t0 + 20s)); // reported: the next one an interval later
  BOOST_TEST(w.due(t0 + 29s));
  BOOST_TEST(w.next_check(t0 + 29s).count() == 10000); // (the interval after that report)
  BOOST_TEST(w.next_check(t0 + 38s).count() == 1000);
  BOOST_TEST(w.next_check(t0 + 45s).count() == 100); // (never sooner than 100 ms)
  w.observe(7, t0 + 40s);
  BOOST_TEST(w.next_check(t0 + 41s).count() == 9000);
  actorps::stall_watch off{0s};
  off.observe(1, t0);
  BOOST_TEST(!off.due(t0 + 1000s));
}

BOOST_AUTO_TEST_CASE(sync_names_the_worker_the_open_step_lacks) {
  std::vector<stall_worker> workers{{"worker 0", 10.5, 0.2, false}, {"worker 1", 10.5, 0.3, false},
                                    {"worker 2", 11.0, 10.4, true}};
  auto line = stall_report(10.2, 340, 10.0, workers, {{"shard 0", true, 0.0}, {"shard 1", true, 0.0}});
  BOOST_TEST(line == "stall: no global step for 10.2 s (at step 340); waiting for worker 2 (last push 10.4 s ago, "
                     "last report 11.0 s ago, its gradient is missing from the open step)", line);
}

BOOST_AUTO_TEST_CASE(a_shard_that_does_not_answer_comes_first_then_silent_workers) {
  std::vector<stall_worker> workers{{"worker 0", 12.0, 11.0, false}, {"worker 1", 0.5, 0.1, false}};
  auto line = stall_report(12.0, 7, 10.0, workers, {{"shard 0", true, 0.0}, {"shard 1 at h:1", false, 31.5}});
  BOOST_TEST(line == "stall: no global step for 12.0 s (at step 7); waiting for shard 1 at h:1 (no answer within 10.0 s, "
                     "last answer 31.5 s ago); workers silent too: worker 0 (last push 11.0 s ago, last report 12.0 s ago)",
             line);
}

BOOST_AUTO_TEST_CASE(without_answers_the_reports_decide) {
  std::vector<stall_worker> workers{{"worker 0", 15.0, std::nullopt, false}, {"worker 1", 1.0, std::nullopt, false}};
  auto line = stall_report(15.0, 7, 10.0, workers, {{"shard 0", false, std::nullopt}});
  BOOST_TEST(line == "stall: no global step for 15.0 s (at step 7); waiting for shard 0 (no answer within 10.0 s, never "
                     "answered); workers silent too: worker 0 (last push unknown, last report 15.0 s ago)", line);
  auto quiet = stall_report(11.0, 7, 10.0, {{"worker 0", 1.0, 0.5, false}}, {{"shard 0", true, 0.0}});
  BOOST_TEST(quiet.find("every worker pushed within the interval") != std::string::npos, quiet);
}

BOOST_AUTO_TEST_SUITE_END()
