// Soft placement per op (TensorFlow's allow_soft_placement): a backend without a kernel for an
// op still runs it, on the CPU. Its operands are copied to the host, the CPU backend computes,
// and what the op writes is copied back; the first time each such op runs, one log line names
// it. Ops the device has a kernel for run there as before.
#pragma once

#include "compute/backend.hpp"

#include <caf/expected.hpp>

#include <memory>
#include <string>
#include <vector>

namespace actorps {

/// The ops `be` has no kernel for, in declaration order.
std::vector<backend_op> missing_kernels(const backend& be);

/// Returns device itself when it has every kernel; otherwise, with `soft` (compute.soft-placement),
/// a backend that runs the missing ops on a CPU backend of `cpu_threads` threads (log lines tagged
/// `who`), or without it an error (invalid_config) naming the device and the ops.
caf::expected<std::unique_ptr<backend>> place_softly(std::unique_ptr<backend> device, bool soft, int cpu_threads,
                                                     const std::string& who);

} // namespace actorps
