// Tests of actors/resource_container: scopes spawned by their first setup, messages routed by
// scope, sessions attaching to kept variables with node.keep-alive, refusals by name, the
// admin listing and drop -- each against the container's typed interface.
#include "actors/resource_container.hpp"

#include "control/placement.hpp"
#include "tests/support/actor_fixture.hpp"

#include <caf/event_based_actor.hpp>

using namespace actorps;
using namespace actorps::test;

namespace {

struct container_fixture : actor_fixture {
  // One variable w (1x2) on one shard, sgd with learning rate 1: a push of g subtracts g.
  shard_setup setup_of(const std::string& scope, std::vector<float> w = {10.0f, 20.0f}, session_kind mode = session_kind::async) {
    shard_setup s;
    s.shard = 0;
    s.plan = make_placement({{"w", 1, 2}}, 1, placement_strategy::round_robin);
    s.plan.scope = scope;
    s.optimizer = {"sgd", 1.0f};
    s.workers = 1;
    s.initial = {{0, 0, {std::move(w)}}};
    s.session.mode = mode;
    return s;
  }

  resource_container_actor spawn(bool keep_alive) {
    return keep(make_resource_container(*sys, {0, std::chrono::milliseconds{0}, std::chrono::milliseconds{60000}, keep_alive}));
  }

  std::vector<float> values(const resource_container_actor& c, const std::string& scope) {
    auto r = ask<pull_reply>(c, pull_atom_v, pull_request{0, {{0, 0, 2}}, false, scope});
    BOOST_REQUIRE_MESSAGE(r, error_text(r));
    return r->slices.at(0).data.to_vector();
  }

  caf::expected<push_reply> push(const resource_container_actor& c, const std::string& scope, float g) {
    push_request req{0, 0, {{0, 0, {{g, g}}}}, true};
    req.scope = scope;
    return ask<push_reply>(c, push_atom_v, req);
  }

  std::vector<scope_info> list(const resource_container_actor& c) {
    auto r = ask<std::vector<scope_info>>(c, scopes_atom_v);
    BOOST_REQUIRE_MESSAGE(r, error_text(r));
    return *r;
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(resource_container, container_fixture)

BOOST_AUTO_TEST_CASE(scopes_are_kept_apart) {
  auto c = spawn(false);
  BOOST_REQUIRE(!ask<setup_reply>(c, init_atom_v, setup_of("a"))->already_initialized);
  BOOST_REQUIRE(!ask<setup_reply>(c, init_atom_v, setup_of("b", {1.0f, 2.0f}))->already_initialized);
  BOOST_REQUIRE(push(c, "a", 1.0f));
  BOOST_TEST(values(c, "a") == std::vector<float>({9.0f, 19.0f}));
  BOOST_TEST(values(c, "b") == std::vector<float>({1.0f, 2.0f})); // untouched by a's push
  auto r = ask<pull_reply>(c, pull_atom_v, pull_request{0, {{0, 0, 2}}, false, "c"});
  BOOST_REQUIRE(!r);
  BOOST_TEST(describe(r.error()) == "unknown_scope: shard 0 holds no scope \"c\" (it holds: \"a\", \"b\")");
  auto p = push(c, "", 1.0f);
  BOOST_TEST(describe(p.error()) == "unknown_scope: shard 0 holds no scope (none) (it holds: \"a\", \"b\")");
}

// A restarted ps node holds nothing until the chief restores it: workers that reach it first
// must be told to wait (not_initialized, which they retry), not refused (unknown_scope ends them).
BOOST_AUTO_TEST_CASE(a_node_without_scopes_asks_workers_to_wait_for_the_setup) {
  auto c = spawn(false);
  auto r = ask<pull_reply>(c, pull_atom_v, pull_request{0, {{0, 0, 2}}, false, ""});
  BOOST_REQUIRE(!r);
  BOOST_TEST((r.error() == errc::not_initialized));
  BOOST_TEST(describe(r.error()) == "not_initialized: shard 0 holds no scope yet (a restarted ps node waits for the "
                                    "chief to set it up)");
  auto p = push(c, "a", 1.0f);
  BOOST_REQUIRE(!p);
  BOOST_TEST((p.error() == errc::not_initialized));
  BOOST_REQUIRE(ask<setup_reply>(c, init_atom_v, setup_of("a")));
  BOOST_TEST(static_cast<bool>(push(c, "a", 1.0f)));
}

BOOST_AUTO_TEST_CASE(without_keep_alive_the_chiefs_stop_ends_the_node) {
  auto c = spawn(false);
  BOOST_REQUIRE(ask<setup_reply>(c, init_atom_v, setup_of("a")));
  (*self)->send(c, stop_atom_v);
  sched->run();
  auto r = ask<pull_reply>(c, pull_atom_v, pull_request{0, {{0, 0, 2}}, false, "a"});
  BOOST_TEST(!r); // the container is gone
}

// Issue 32, item 7: SIGTERM to a ps node ended it at once (exit 143) and the run failed. Now the
// node asks its session's chief to end the run, serves until the chief's stop, then quits.
BOOST_AUTO_TEST_CASE(sigterm_asks_the_sessions_chief_to_end_the_run_and_serves_until_then) {
  for (bool keep_alive : {false, true}) {
    auto c = spawn(keep_alive);
    auto asked = std::make_shared<std::vector<uint32_t>>();
    auto setup = setup_of("a");
    auto chief = keep(sys->spawn([c, setup, asked](caf::event_based_actor* me) {
      me->request(c, caf::infinite, init_atom_v, setup).then([](const setup_reply&) {});
      return caf::behavior{[asked](stop_atom, uint32_t shard) { asked->push_back(shard); },
                           [me, c](stop_atom) { me->send(c, stop_atom_v); }}; // the run's end
    }));
    sched->run();
    (*self)->send(c, leave_atom_v); // the node's SIGTERM watch (a local sender)
    sched->run();
    BOOST_TEST(*asked == std::vector<uint32_t>({0}));
    BOOST_TEST(values(c, "a") == std::vector<float>({10.0f, 20.0f})); // still serving
    caf::anon_send(chief, stop_atom_v);
    sched->run();
    BOOST_TEST(!ask<pull_reply>(c, pull_atom_v, pull_request{0, {{0, 0, 2}}, false, "a"})); // gone
  }
}

BOOST_AUTO_TEST_CASE(sigterm_without_a_session_in_progress_ends_the_node_at_once) {
  auto c = spawn(true);
  (*self)->send(c, leave_atom_v);
  sched->run();
  BOOST_TEST(!ask<std::vector<scope_info>>(c, scopes_atom_v));
}

BOOST_AUTO_TEST_CASE(with_keep_alive_a_later_session_continues_the_kept_variables) {
  auto c = spawn(true);
  BOOST_REQUIRE(ask<setup_reply>(c, init_atom_v, setup_of("a")));
  BOOST_REQUIRE(push(c, "a", 1.0f));
  BOOST_REQUIRE(push(c, "a", 1.0f));
  BOOST_TEST((list(c).at(0) == scope_info{"a", "in session", 1, 8, 2}));
  (*self)->send(c, stop_atom_v); // session 1 ends
  sched->run();
  BOOST_TEST((list(c).at(0) == scope_info{"a", "kept", 1, 8, 2}));
  auto again = ask<setup_reply>(c, init_atom_v, setup_of("a", {0.0f, 0.0f})); // session 2: values ignored
  BOOST_REQUIRE_MESSAGE(again, error_text(again));
  BOOST_TEST(again->already_initialized);
  BOOST_TEST(again->version == 2u);
  BOOST_TEST(values(c, "a") == std::vector<float>({8.0f, 18.0f}));
  BOOST_TEST(list(c).at(0).phase == "in session");
}

BOOST_AUTO_TEST_CASE(with_keep_alive_a_chief_going_down_ends_its_session) {
  auto c = spawn(true);
  auto setup = setup_of("a");
  auto chief = sys->spawn([c, setup](caf::event_based_actor* me) {
    me->request(c, caf::infinite, init_atom_v, setup).then([](const setup_reply&) {});
    return caf::behavior{[](int) {}};
  });
  sched->run();
  BOOST_TEST(list(c).at(0).phase == "in session");
  caf::anon_send_exit(chief, caf::exit_reason::kill); // kill -9 of the chief's process, seen as a down
  sched->run();
  BOOST_TEST(list(c).at(0).phase == "kept");
  BOOST_TEST(static_cast<bool>(ask<scope_info>(c, drop_atom_v, std::string{"a"}))); // droppable now
}

BOOST_AUTO_TEST_CASE(a_session_that_does_not_fit_is_refused_and_changes_nothing) {
  auto c = spawn(true);
  BOOST_REQUIRE(ask<setup_reply>(c, init_atom_v, setup_of("a")));
  auto other = setup_of("a");
  other.plan = make_placement({{"w", 2, 1}}, 1, placement_strategy::round_robin);
  other.plan.scope = "a";
  auto r = ask<setup_reply>(c, init_atom_v, other);
  BOOST_REQUIRE(!r);
  BOOST_TEST(describe(r.error()) == "shape_mismatch: shard 0: scope \"a\" does not match this session: w is 1x2 here, "
                                    "but 2x1 in this session's model");
  BOOST_TEST(values(c, "a") == std::vector<float>({10.0f, 20.0f}));
  // a new scope whose shard refuses its setup leaves nothing behind
  auto bad = setup_of("b");
  bad.initial.clear();
  BOOST_TEST(describe(ask<setup_reply>(c, init_atom_v, bad).error()) == "invalid_argument: shard 0: no initial value for w");
  BOOST_TEST(list(c).size() == 1u);
  BOOST_TEST(static_cast<bool>(ask<setup_reply>(c, init_atom_v, setup_of("b")))); // and may be set up properly later
}

BOOST_AUTO_TEST_CASE(only_kept_scopes_are_dropped) {
  auto c = spawn(true);
  BOOST_REQUIRE(ask<setup_reply>(c, init_atom_v, setup_of("a")));
  BOOST_REQUIRE(ask<setup_reply>(c, init_atom_v, setup_of("b")));
  auto busy = ask<scope_info>(c, drop_atom_v, std::string{"a"});
  BOOST_TEST(describe(busy.error()) == "invalid_argument: scope \"a\" is in session: stop its chief first");
  (*self)->send(c, stop_atom_v);
  sched->run();
  auto dropped = ask<scope_info>(c, drop_atom_v, std::string{"a"});
  BOOST_REQUIRE_MESSAGE(dropped, error_text(dropped));
  BOOST_TEST((*dropped == scope_info{"a", "kept", 1, 8, 0}));
  auto names = list(c);
  BOOST_REQUIRE_EQUAL(names.size(), 1u);
  BOOST_TEST(names[0].name == "b");
  BOOST_TEST((ask<scope_info>(c, drop_atom_v, std::string{"a"}).error() == errc::unknown_scope));
  // a dropped scope's name starts fresh
  BOOST_REQUIRE(!ask<setup_reply>(c, init_atom_v, setup_of("a", {5.0f, 5.0f}))->already_initialized);
  BOOST_TEST(values(c, "a") == std::vector<float>({5.0f, 5.0f}));
}

BOOST_AUTO_TEST_CASE(a_sync_session_gets_its_own_aggregator) {
  auto c = spawn(true);
  BOOST_REQUIRE(ask<setup_reply>(c, init_atom_v, setup_of("s", {10.0f, 20.0f}, session_kind::sync)));
  BOOST_REQUIRE(ask<setup_reply>(c, init_atom_v, setup_of("t", {10.0f, 20.0f}, session_kind::async)));
  auto r = push(c, "s", 2.0f);
  BOOST_REQUIRE_MESSAGE(r, error_text(r));
  BOOST_TEST(r->next_step == 1u); // released by the aggregator (1 worker: every push completes a step)
  auto stats = ask<shard_stats>(c, stats_atom_v); // both scopes' chief is this test: refused by name
  if (stats)
    BOOST_FAIL("stats for two scopes of one chief were answered");
  BOOST_TEST(describe(stats.error()) == "unknown_scope: shard 0: cannot tell which of 2 scopes this request is for "
                                        "(it did not come from exactly one scope's chief)");
  BOOST_TEST(list(c).at(0).version == 1u);
  BOOST_TEST(values(c, "s") == std::vector<float>({8.0f, 18.0f}));
}

BOOST_AUTO_TEST_SUITE_END()
