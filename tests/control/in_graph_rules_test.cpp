// Tests of control/in_graph_rules: the cut of the global batch, the hand-out of parts, what a
// lost worker's parts become, late and bad answers, and an average that does not depend on who
// computed which part or in which order the parts came in.
#include "control/in_graph_rules.hpp"

#include "common/errc.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;

namespace {

using round_t = actorps::in_graph_round;
using assignments = std::vector<round_t::assignment>;

// The gradient a worker computes for part p: two variables, values that tell the parts apart.
std::vector<variable_slice> grads_of(uint32_t p) {
  const float x = 1.0f + static_cast<float>(p);
  return {{0, 0, {x, 2 * x, 3 * x}}, {1, 0, {x / 7}}};
}

caf::expected<round_t::delivery> deliver(round_t& r, uint32_t w, uint32_t p) {
  return r.deliver(w, r.step(), p, r.part_at(p).rows, 0.5 * r.part_at(p).rows, grads_of(p));
}

bool same(const assignments& xs, const assignments& ys) {
  if (xs.size() != ys.size())
    return false;
  for (size_t i = 0; i < xs.size(); ++i)
    if (xs[i].worker != ys[i].worker || xs[i].part != ys[i].part)
      return false;
  return true;
}

} // namespace

BOOST_AUTO_TEST_SUITE(in_graph_rules)

BOOST_AUTO_TEST_CASE(the_global_batch_is_cut_into_one_part_per_worker) {
  round_t r{3};
  auto first = r.begin(1, 100);
  BOOST_REQUIRE(first);
  BOOST_TEST(same(*first, {{0, 0}, {1, 1}, {2, 2}}));
  BOOST_TEST(r.part_at(0).begin == 0);
  BOOST_TEST(r.part_at(0).rows == 33);
  BOOST_TEST(r.part_at(1).begin == 33);
  BOOST_TEST(r.part_at(1).rows == 33);
  BOOST_TEST(r.part_at(2).begin == 66);
  BOOST_TEST(r.part_at(2).rows == 34);
  // the last batch of an epoch may have fewer rows than there are workers: fewer parts
  round_t small{3};
  auto two = small.begin(1, 2);
  BOOST_REQUIRE(two);
  BOOST_TEST(same(*two, {{0, 0}, {1, 1}}));
}

BOOST_AUTO_TEST_CASE(the_average_is_weighted_by_rows_and_summed_in_part_order) {
  round_t a{3};
  BOOST_REQUIRE(a.begin(7, 100));
  for (uint32_t p : {2u, 0u, 1u}) // any arrival order
    BOOST_REQUIRE(deliver(a, p, p));
  BOOST_REQUIRE(a.ready());
  auto x = a.complete();
  BOOST_TEST(x.step == 7u);
  BOOST_TEST(x.rows == 100);
  BOOST_TEST(x.loss_sum == 50.0);
  // part p's gradient is (1 + p) * (1, 2, 3): the mean is (33 * 1 + 33 * 2 + 34 * 3) / 100 = 2.01
  BOOST_TEST(x.average.at(0).data.values.at(0) == 2.01f, boost::test_tools::tolerance(1e-6f));
  BOOST_TEST(x.average.at(1).data.values.at(0) == 2.01f / 7, boost::test_tools::tolerance(1e-6f));
  BOOST_TEST(!a.running());
  // another order and another worker computing a part: the same floats, bit for bit
  round_t b{3};
  BOOST_REQUIRE(b.begin(7, 100));
  BOOST_REQUIRE(b.lose(1, true).empty()); // worker 0 takes part 1 after its own
  for (uint32_t p : {1u, 0u, 2u})
    BOOST_REQUIRE(deliver(b, p == 1 ? 0 : p, p));
  auto y = b.complete();
  BOOST_TEST(y.average.at(0).data.to_vector() == x.average.at(0).data.to_vector());
  BOOST_TEST(y.average.at(1).data.to_vector() == x.average.at(1).data.to_vector());
}

BOOST_AUTO_TEST_CASE(a_lost_workers_part_goes_to_the_least_loaded_and_queues_behind_its_own) {
  round_t r{3};
  BOOST_REQUIRE(r.begin(1, 90));
  BOOST_REQUIRE(deliver(r, 1, 1)); // worker 1 is idle now, worker 0 still computes part 0
  auto moved = r.lose(2, true);
  BOOST_TEST(same(moved, {{1, 2}})); // to the idle worker, at once
  BOOST_TEST(!r.live(2));
  BOOST_TEST(r.live_workers() == 2u);
  // worker 0 goes too: its part queues behind worker 1's
  BOOST_TEST(r.lose(0, true).empty());
  auto next = deliver(r, 1, 2);
  BOOST_REQUIRE(next);
  BOOST_REQUIRE(next->next.has_value());
  BOOST_TEST(next->next->worker == 1u);
  BOOST_TEST(next->next->part == 0u);
  BOOST_REQUIRE(deliver(r, 1, 0));
  BOOST_TEST(r.ready());
  r.complete();
  // the next step gives the two lost workers nothing until they rejoin
  auto only = r.begin(2, 90);
  BOOST_REQUIRE(only);
  BOOST_TEST(same(*only, {{1, 0}}));
  r.rejoin(2);
  r.abandon();
  auto again = r.begin(3, 90);
  BOOST_REQUIRE(again);
  BOOST_TEST(same(*again, {{1, 0}, {2, 1}}));
}

BOOST_AUTO_TEST_CASE(a_late_answer_for_a_reassigned_part_counts_once) {
  round_t r{2};
  BOOST_REQUIRE(r.begin(1, 10));
  auto moved = r.lose(0, false); // a timed-out request: benched for this step only
  BOOST_REQUIRE(deliver(r, 1, 1));
  BOOST_TEST(r.live(0));
  BOOST_TEST(same(moved, {})); // worker 1 was busy: part 0 queued behind part 1
  auto late = deliver(r, 0, 0);  // the slow worker answers after all
  BOOST_REQUIRE(late);
  BOOST_TEST((late->what == round_t::verdict::accepted));
  BOOST_TEST(r.ready());
  auto twice = deliver(r, 1, 0);
  BOOST_REQUIRE(twice);
  BOOST_TEST((twice->what == round_t::verdict::ignored));
  r.complete();
  auto old = r.deliver(0, 1, 0, 5, 0.0, grads_of(0)); // after the step: ignored
  BOOST_REQUIRE(old);
  BOOST_TEST((old->what == round_t::verdict::ignored));
}

BOOST_AUTO_TEST_CASE(a_step_nobody_can_compute_stalls) {
  round_t r{2};
  BOOST_REQUIRE(r.begin(1, 10));
  BOOST_TEST(r.lose(0, false).empty());
  BOOST_TEST(!r.stalled()); // part 0 queued behind worker 1's
  BOOST_TEST(r.lose(1, false).empty());
  BOOST_TEST(r.stalled());
  r.abandon();
  BOOST_TEST(!r.stalled());
  auto again = r.begin(1, 10); // benched only for the step: both take parts again
  BOOST_REQUIRE(again);
  BOOST_TEST(again->size() == 2u);
  r.lose(0, true);
  r.lose(1, true);
  r.abandon();
  auto none = r.begin(2, 10);
  BOOST_REQUIRE(!none);
  BOOST_TEST((none.error() == errc::peer_unreachable));
}

// Issue 32, item 4: the stall rule lived in the chief actor (its own clock field); now the round
// holds it. A stalled step is tried again until it has stalled for a whole step timeout since the
// first stall after the last completed step; then the run gives up.
BOOST_AUTO_TEST_CASE(a_stalled_step_is_retried_until_it_stalled_for_the_step_timeout) {
  using namespace std::chrono_literals;
  const std::chrono::steady_clock::time_point t0{};
  round_t r{1};
  BOOST_REQUIRE(r.begin(1, 4));
  r.lose(0, false);
  BOOST_REQUIRE(r.stalled());
  BOOST_TEST((r.stall(t0, 1000ms) == round_t::stall_action::retry));
  BOOST_TEST(!r.running()); // abandoned
  BOOST_REQUIRE(r.begin(1, 4));
  r.lose(0, false);
  BOOST_TEST((r.stall(t0 + 999ms, 1000ms) == round_t::stall_action::retry));
  BOOST_REQUIRE(r.begin(1, 4));
  r.lose(0, false);
  BOOST_TEST((r.stall(t0 + 1000ms, 1000ms) == round_t::stall_action::give_up));
  // a completed step starts the count afresh
  round_t s{1};
  BOOST_REQUIRE(s.begin(1, 4));
  s.lose(0, false);
  s.stall(t0, 1000ms);
  auto first = s.begin(1, 4);
  BOOST_REQUIRE(first);
  BOOST_REQUIRE(deliver(s, 0, 0));
  s.complete();
  BOOST_REQUIRE(s.begin(2, 4));
  s.lose(0, false);
  BOOST_TEST((s.stall(t0 + 1500ms, 1000ms) == round_t::stall_action::retry));
}

BOOST_AUTO_TEST_CASE(bad_answers_are_refused_by_name) {
  round_t r{2};
  BOOST_REQUIRE(r.begin(4, 10));
  auto no_part = r.deliver(0, 4, 5, 5, 0.0, grads_of(0));
  BOOST_REQUIRE(!no_part);
  BOOST_TEST(describe(no_part.error()) == "protocol_error: in-graph step 4: worker 0 answered for part 5 of 2");
  auto rows = r.deliver(0, 4, 0, 4, 0.0, grads_of(0));
  BOOST_REQUIRE(!rows);
  BOOST_TEST(describe(rows.error()) == "protocol_error: in-graph step 4: worker 0 computed 4 rows of part 0, which has 5");
  BOOST_REQUIRE(deliver(r, 0, 0));
  auto layout = r.deliver(1, 4, 1, 5, 0.0, {{0, 0, {1.0f}}});
  BOOST_REQUIRE(!layout);
  BOOST_TEST(describe(layout.error())
             == "protocol_error: in-graph step 4: worker 1's gradient of part 1 is laid out unlike the other parts'");
  BOOST_TEST(!r.begin(5, 0));
}

BOOST_AUTO_TEST_SUITE_END()
