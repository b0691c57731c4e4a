// The one actor-test fixture: an actor system on CAF's deterministic test_coordinator with the
// production type registration, and helpers to ask an actor and run the scheduler.
#pragma once

#include "messages/register.hpp"
#include "tests/support/helpers.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/scoped_actor.hpp>

#include <boost/test/unit_test.hpp>

#include <memory>
#include <vector>

namespace actorps::test {

class actor_fixture {
public:
  actor_fixture() {
    cfg_.set("scheduler.policy", caf::atom("testing"));
    cfg_.set("logger.verbosity", caf::atom("quiet"));
    register_types(cfg_);
    sys = std::make_unique<caf::actor_system>(cfg_);
    sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
    self = std::make_unique<caf::scoped_actor>(*sys);
  }

  /// Kills every actor the test registered with keep(), so ~actor_system cannot wait forever.
  ~actor_fixture() {
    for (auto& hdl : kept_)
      caf::anon_send_exit(hdl, caf::exit_reason::kill);
    sched->run();
    self.reset();
  }

  /// Registers hdl for cleanup and returns it.
  template <class Handle>
  Handle keep(Handle hdl) {
    kept_.push_back(caf::actor_cast<caf::actor>(hdl));
    return hdl;
  }

  /// Sends (xs...) to hdl as a request, runs every pending job, and returns the reply or error.
  template <class T, class Handle, class... Ts>
  caf::expected<T> ask(const Handle& hdl, Ts&&... xs) {
    auto rh = (*self)->request(hdl, caf::infinite, std::forward<Ts>(xs)...);
    sched->run();
    caf::expected<T> out{caf::error{}};
    bool answered = false;
    rh.receive([&](T& x) { out = std::move(x); answered = true; },
               [&](caf::error& err) { out = std::move(err); answered = true; });
    BOOST_REQUIRE(answered);
    return out;
  }

  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;
  std::unique_ptr<caf::scoped_actor> self;

private:
  caf::actor_system_config cfg_;
  std::vector<caf::actor> kept_;
};

} // namespace actorps::test
