// Reaching a restarted peer without blocking the actor that needs it: the blocking connect (the
// node's retries until cluster.connect-timeout) runs in a one-shot helper actor, and its result
// comes back as the reply to a request -- an input like any other, while the actor goes on
// handling the rest of its inbox (a stop, a SIGTERM's leave, another peer lost).
#pragma once

#include <caf/actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/expected.hpp>
#include <caf/spawn_options.hpp>

#include <functional>
#include <utility>

namespace actorps {

/// Runs `connect` in a helper (on a thread of its own when `detached`, as in production; on the
/// scheduler otherwise, for deterministic tests) and calls `reached(Handle)` or `failed(error)`
/// inside `self`'s handlers once it returns.
template <class Handle, class Self, class Reached, class Failed>
void reach_later(Self* self, bool detached, std::function<caf::expected<Handle>()> connect, Reached reached,
                 Failed failed) {
  auto helper = [connect = std::move(connect)](caf::event_based_actor* h) -> caf::behavior {
    return {[=](caf::connect_atom) -> caf::result<caf::strong_actor_ptr> {
      h->quit(); // one answer, then gone
      auto hdl = connect();
      if (!hdl)
        return std::move(hdl.error());
      return caf::actor_cast<caf::strong_actor_ptr>(std::move(*hdl));
    }};
  };
  caf::actor worker = detached ? self->home_system().template spawn<caf::detached>(helper)
                               : self->home_system().spawn(helper);
  self->request(worker, caf::infinite, caf::connect_atom_v)
    .then([=](caf::strong_actor_ptr& ptr) { reached(caf::actor_cast<Handle>(std::move(ptr))); },
          [=](caf::error& err) { failed(std::move(err)); });
}

} // namespace actorps
