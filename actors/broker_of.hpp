// The typed broker of a typed actor handle: an actor with that interface that CAF's middleman
// runs on its multiplexer's thread (the network's), so the messages BASP delivers to it, the
// replies it sends back over BASP and the tensor streams' callbacks need no hand-off between
// threads. For actors on the tensor path only: their handlers must never block.
#pragma once

#include <caf/io/typed_broker.hpp>
#include <caf/typed_actor.hpp>

namespace actorps {

template <class Handle>
struct broker_of;

template <class... Sigs>
struct broker_of<caf::typed_actor<Sigs...>> {
  using type = caf::io::typed_broker<Sigs...>;
};

template <class Handle>
using broker_of_t = typename broker_of<Handle>::type;

} // namespace actorps
