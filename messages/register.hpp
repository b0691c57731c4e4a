// Registers every actorps message type and the actorps error category with a CAF config.
#pragma once

#include <caf/fwd.hpp>

namespace actorps {

/// Adds the actorps type-ID block and the "actorps" error renderer to cfg. Call once per
/// config, before the actor system starts, on every node and in every test.
void register_types(caf::actor_system_config& cfg);

} // namespace actorps
