// A bound on a node's shutdown once its outcome is known.
#pragma once

#include <chrono>

namespace actorps {

/// Starts a detached thread that, if the process is still running after `grace`, logs one line
/// and ends the process with `code` (std::_Exit). Call it once the node's work is done and its
/// exit code decided, before the actor system shuts down: CAF 0.17's shutdown sometimes never
/// finishes: a detached actor's thread waits forever for its last reference. Seen only on
/// model-parallel workers (published, directly connected to each other): in about 1 of 4 runs of
/// 2 groups x 2 slices one worker hung after "stopped at step"; never in 8 async runs. Withdrawing
/// the publication after the actor exits (the middleman's reference) made it about 1 in 30; the
/// other reference was not found. A finished node must not hang its cluster script.
void arm_exit_watchdog(int code, std::chrono::milliseconds grace);

} // namespace actorps
