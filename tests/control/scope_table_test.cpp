// Tests of control/scope_table: a ps node's scopes -- created, attached, refused, ended, dropped --
// and how a session's plan is compared with a scope's variables.
#include "control/scope_table.hpp"

#include "control/placement.hpp"
#include "common/errc.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;

namespace {

using table = actorps::scope_table; // (the suite is named scope_table too)

shard_setup setup_of(const std::string& scope, std::vector<variable_spec> vars = {{"dense0/weights", 784, 160},
                                                                                  {"dense0/bias", 1, 160}}) {
  shard_setup s;
  s.shard = 0;
  s.plan = make_placement(vars, 2, placement_strategy::round_robin);
  s.plan.scope = scope;
  s.workers = 2;
  s.session.mode = session_kind::sync;
  return s;
}

} // namespace

BOOST_AUTO_TEST_SUITE(scope_table)

BOOST_AUTO_TEST_CASE(a_new_scope_is_created_and_a_later_session_attaches) {
  table t;
  BOOST_TEST((*t.begin(setup_of("problem_1")) == table::verdict::create));
  BOOST_TEST((t.phase("problem_1") == scope_phase::in_session));
  t.end("problem_1");
  BOOST_TEST((t.phase("problem_1") == scope_phase::kept));
  BOOST_TEST((*t.begin(setup_of("problem_1")) == table::verdict::attach));
  BOOST_TEST((t.phase("problem_1") == scope_phase::in_session));
  // a restarted chief attaches while the session is still on
  BOOST_TEST((*t.begin(setup_of("problem_1")) == table::verdict::attach));
  BOOST_TEST((*t.begin(setup_of("problem_2")) == table::verdict::create));
  BOOST_TEST(t.names() == std::vector<std::string>({"problem_1", "problem_2"}));
}

BOOST_AUTO_TEST_CASE(another_model_is_refused_naming_the_variable_and_both_shapes) {
  table t;
  BOOST_REQUIRE(t.begin(setup_of("p")));
  auto other = t.begin(setup_of("p", {{"dense0/weights", 784, 100}, {"dense0/bias", 1, 100}}));
  BOOST_REQUIRE(!other);
  BOOST_TEST((other.error() == errc::shape_mismatch));
  BOOST_TEST(describe(other.error()) == "shape_mismatch: shard 0: scope \"p\" does not match this session: "
                                        "dense0/weights is 784x160 here, but 784x100 in this session's model");
  auto renamed = t.begin(setup_of("p", {{"conv0/weights", 9, 32}, {"dense0/bias", 1, 160}}));
  BOOST_TEST(describe(renamed.error()).find("variable 0 is dense0/weights (784x160) here, but conv0/weights (9x32)")
             != std::string::npos, describe(renamed.error()));
  auto longer = t.begin(setup_of("p", {{"dense0/weights", 784, 160}, {"dense0/bias", 1, 160}, {"logits/weights", 160, 10}}));
  BOOST_TEST(describe(longer.error()).find("2 variables here, 3 in this session's model (the first unmatched: "
                                           "logits/weights 160x10)") != std::string::npos, describe(longer.error()));
  auto split = setup_of("p");
  split.plan = make_placement({{"dense0/weights", 784, 160}, {"dense0/bias", 1, 160}}, 2,
                              placement_strategy::round_robin, {partitioner::rule::fixed, 2});
  split.plan.scope = "p";
  BOOST_TEST(describe(t.begin(split).error()).find("partitioner none), this session places them on 2 (placement "
                                                   "round-robin, partitioner fixed:2)") != std::string::npos);
  auto more = setup_of("p");
  more.workers = 3;
  auto refused = t.begin(more);
  BOOST_TEST((refused.error() == errc::invalid_argument));
  BOOST_TEST(describe(refused.error()).find("was trained by 2 workers (sync), this session has 3 (sync)") != std::string::npos);
  BOOST_TEST((t.phase("p") == scope_phase::in_session)); // refusals change nothing
  BOOST_TEST(t.names().size() == 1u);
}

BOOST_AUTO_TEST_CASE(only_kept_scopes_are_dropped) {
  table t;
  BOOST_REQUIRE(t.begin(setup_of("a")));
  auto busy = t.drop("a", 1);
  BOOST_TEST((busy == errc::invalid_argument));
  BOOST_TEST(describe(busy) == "invalid_argument: scope \"a\" is in session: stop its chief first");
  t.end("a");
  BOOST_TEST(!t.drop("a", 1));
  BOOST_TEST(!t.holds("a"));
  BOOST_TEST(describe(t.drop("a", 1)) == "unknown_scope: shard 1 holds no scope \"a\" (it holds: none)");
  BOOST_TEST((t.missing("a", 1) == errc::not_initialized)); // nothing held: a restart not set up yet
  BOOST_REQUIRE(t.begin(setup_of("")));
  BOOST_TEST(describe(t.unknown("x", 0)) == "unknown_scope: shard 0 holds no scope \"x\" (it holds: (none))");
  BOOST_TEST((t.missing("x", 0) == errc::unknown_scope));
  t.forget("");
  BOOST_TEST(t.names().empty());
}

// Issue 32, item 4: the train mode travelled as a string; an unknown one silently got no
// aggregator (and was applied as async). It is an enum on the wire now, and a number outside it
// (a peer of another version, or forged) is refused by name before anything is created.
BOOST_AUTO_TEST_CASE(an_unknown_session_mode_is_refused_by_name) {
  table t;
  auto setup = setup_of("p");
  setup.session.mode = static_cast<session_kind>(9);
  auto r = t.begin(setup);
  BOOST_REQUIRE(!r);
  BOOST_TEST(describe(r.error())
             == "invalid_argument: shard 0: unknown session mode 9 (0 async, 1 sync, 2 ssp, 3 model-parallel, 4 in-graph)");
  BOOST_TEST(t.names().empty());
}

BOOST_AUTO_TEST_SUITE_END()
