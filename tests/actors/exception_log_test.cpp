// Tests of actors/exception_log: an exception that escapes a handler ends the actor with
// internal_error naming the actor and the exception (CAF's default: a bare runtime_error).
#include "actors/exception_log.hpp"

#include "tests/support/actor_fixture.hpp"

#include <caf/event_based_actor.hpp>

#include <stdexcept>

using namespace actorps;
using namespace actorps::test;

namespace {

// Throws what it is told to when it gets a string ("" throws an int, no std::exception).
caf::behavior thrower(caf::event_based_actor* self, bool logged) {
  if (logged)
    log_exceptions(self, "thrower 3");
  return {
    [](const std::string& what) {
      if (what.empty())
        throw 42;
      throw std::out_of_range(what);
    },
  };
}

caf::error reason_of_thrower(actor_fixture& f, bool logged, std::string what) {
  auto hdl = f.sys->spawn(thrower, logged);
  (*f.self)->monitor(hdl);
  (*f.self)->send(hdl, std::move(what));
  f.sched->run();
  caf::error reason;
  (*f.self)->receive([&](caf::down_msg& msg) { reason = msg.reason; });
  return reason;
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(exception_log, actor_fixture)

BOOST_AUTO_TEST_CASE(an_escaped_exception_ends_the_actor_with_its_text) {
  auto reason = reason_of_thrower(*this, true, "vector::at: index 7 >= 3");
  BOOST_TEST(code_of(reason) == errc::internal_error);
  BOOST_TEST(describe(reason) == "internal_error: thrower 3: an exception ended it: vector::at: index 7 >= 3");
}

BOOST_AUTO_TEST_CASE(an_exception_of_no_standard_type_is_named_unknown) {
  auto reason = reason_of_thrower(*this, true, "");
  BOOST_TEST(describe(reason) == "internal_error: thrower 3: an exception ended it: an unknown exception");
}

BOOST_AUTO_TEST_CASE(without_it_caf_says_only_runtime_error) { // (why every actor installs it)
  auto reason = reason_of_thrower(*this, false, "vector::at: index 7 >= 3");
  BOOST_TEST((reason == caf::sec::runtime_error));
  BOOST_TEST(describe(reason).find("vector::at") == std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
