// The CPU backend: OpenBLAS sgemm plus plain loops, computing synchronously on the calling thread.
#pragma once

#include "compute/backend.hpp"

#include <memory>

namespace actorps {

/// Creates a CPU backend. Sets OpenBLAS's (process-wide) thread count to `threads` (>= 1).
std::unique_ptr<backend> make_cpu_backend(int threads = 1);

} // namespace actorps
