// Tests of control/step_grants: the chief's step grants as a plain class (run_control's own tests
// drive them through whole runs): a grant fills up to grant_steps from the pool of the step
// limit, never past a worker's own budget; reports and releases give steps back; an ssp worker
// with nothing left is out of steps; max-epochs' estimate grants one more step at a time while
// the stop rule says the epochs are not done.
#include "control/step_grants.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;

namespace {

step_grant_config grants_of(train_mode mode, int64_t grant_steps, int64_t max_steps, uint32_t workers = 2) {
  step_grant_config c;
  c.mode = mode;
  c.workers = workers;
  c.grant_steps = grant_steps;
  c.max_steps = max_steps;
  return c;
}

} // namespace

BOOST_AUTO_TEST_SUITE(step_grants)

BOOST_AUTO_TEST_CASE(grants_fill_up_from_the_pool_and_reports_give_room) {
  actorps::step_grants g{grants_of(train_mode::async, 10, 25)};
  BOOST_TEST(g.enabled());
  BOOST_TEST(g.grant(0, 0, 0) == 10);
  BOOST_TEST(g.grant(0, 0, 0) == 0); // full
  BOOST_TEST(g.grant(1, 0, 0) == 10);
  BOOST_TEST(g.held() == 20);
  g.reported(0, 4, false); // 4 steps of 25 done, 16 held: 5 left in the pool
  BOOST_TEST(g.granted(0) == 6);
  BOOST_TEST(g.grant(0, 4, 200) == 4); // up to its grant_steps
  BOOST_TEST(g.grant(1, 4, 200) == 0);
  g.reported(1, 10, true); // final: it holds nothing more
  BOOST_TEST(g.granted(1) == 0);
  BOOST_TEST(g.grant(0, 14, 700) == 0); // 14 done + 10 held of 25: 1 left, but 0 is full
  g.release(0);
  BOOST_TEST(g.granted(0) == 0);
  BOOST_TEST(g.grant(0, 14, 700) == 10); // 11 left in the pool
}

BOOST_AUTO_TEST_CASE(no_grant_passes_a_workers_own_budget) {
  auto c = grants_of(train_mode::async, 10, 100);
  c.worker_budgets = {12, 30};
  actorps::step_grants g{c};
  BOOST_TEST(g.grant(0, 0, 0) == 10);
  g.reported(0, 10, false);
  BOOST_TEST(g.own_steps_left(0) == 2);
  BOOST_TEST(g.grant(0, 10, 0) == 2);
  g.reported(0, 2, false);
  BOOST_TEST(g.grant(0, 12, 0) == 0);
  g.grow(2); // an elastic joiner: no budget of its own
  BOOST_TEST(g.own_steps_left(2) > 1000000);
  BOOST_TEST(g.grant(2, 12, 0) == 10);
}

BOOST_AUTO_TEST_CASE(an_ssp_worker_with_nothing_left_is_out_of_steps_an_async_one_waits) {
  for (auto mode : {train_mode::ssp, train_mode::async}) {
    BOOST_TEST_CONTEXT("mode " << to_string(mode)) {
      actorps::step_grants g{grants_of(mode, 10, 10)};
      BOOST_TEST(g.grant(0, 0, 0) == 10);
      BOOST_TEST(g.grant(1, 0, 0) == 0);
      BOOST_TEST(g.out_of_steps(1, 0) == (mode == train_mode::ssp));
      BOOST_TEST(!g.out_of_steps(0, 0)); // (it holds steps)
    }
  }
}

BOOST_AUTO_TEST_CASE(an_epochs_estimate_grants_one_more_step_while_the_rule_says_go_on) {
  auto c = grants_of(train_mode::async, 10, 10);
  c.budget_from_epochs = true;
  int64_t stop_at = 12;
  c.should_stop = [&stop_at](int64_t steps, int64_t) -> std::optional<std::string> {
    return steps >= stop_at ? std::optional<std::string>{"epochs done"} : std::nullopt;
  };
  actorps::step_grants g{c};
  BOOST_TEST(g.grant(0, 0, 0) == 10);
  g.reported(0, 10, false);
  BOOST_TEST(g.grant(0, 10, 500) == 1); // the estimate ran out, the epochs did not
  g.reported(0, 1, false);
  BOOST_TEST(g.grant(0, 11, 550) == 1);
  g.reported(0, 1, false);
  BOOST_TEST(g.grant(0, 12, 600) == 0); // the rule says stop
}

BOOST_AUTO_TEST_CASE(without_grant_steps_nothing_is_granted_and_reports_still_count) {
  auto c = grants_of(train_mode::async, 0, 10);
  c.worker_budgets = {5, 5};
  actorps::step_grants g{c};
  BOOST_TEST(!g.enabled());
  BOOST_TEST(g.grant(0, 0, 0) == 0);
  g.reported(0, 3, false);
  BOOST_TEST(g.own_steps_left(0) == 2);
  BOOST_TEST(g.granted(0) == 0);
}

BOOST_AUTO_TEST_SUITE_END()
