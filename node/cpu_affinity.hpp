// node.cpus: pins this process to its CPUs before its threads start (CAF's scheduler and
// multiplexer, the input pipeline, a worker's compute thread), so every thread it starts inherits
// them. Where several nodes share a host, a worker kept on a core of its own keeps its threads'
// hand-offs and its model's cache lines on that core (docs/results.md: the data path).
#pragma once

#include <caf/error.hpp>

#include <vector>

namespace actorps {

/// The CPUs the calling thread may run on (sched_getaffinity), ascending.
std::vector<int> allowed_cpus();

/// Pins the calling thread, and every thread it starts from now on, to `cpus` (none: no change).
/// Fails with invalid_config when one of them is not allowed (check_cpus_allowed), or with
/// device_error naming sched_setaffinity's reason.
caf::error pin_to_cpus(const std::vector<int>& cpus);

} // namespace actorps
