// The CAF settings every actorps node starts from (set before the config file and the command
// line are read, so either overrides them): one scheduler thread that polls little, and no BASP
// deserialization workers. Why each, with the measurements: caf_defaults.cpp.
#pragma once

#include <caf/actor_system_config.hpp>

namespace actorps {

/// Sets the node defaults in cfg (docs/config.md, "Scheduler defaults of actorps-node").
void set_node_caf_defaults(caf::actor_system_config& cfg);

} // namespace actorps
