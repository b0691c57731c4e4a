// Runs one node of a cluster -- or, with role local, the whole cluster's actors in one process --
// and returns the process exit code.
#pragma once

#include "config/cluster_options.hpp"
#include "config/train_options.hpp"

#include <caf/fwd.hpp>

namespace actorps {

/// Starts this node's actors, connects to and publishes for its peers, and waits until its work
/// is done. Returns 0 on success, 1 on failure (the reason is logged, naming the peer, file or
/// key). REQUIRES: sys has the middleman loaded (except for role local) and actorps's types.
int run_node(caf::actor_system& sys, const train_settings& train, const cluster_settings& cluster);

} // namespace actorps
