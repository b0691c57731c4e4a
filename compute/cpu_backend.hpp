// The CPU backend: avx512_sgemm (one thread, on CPUs with AVX-512; ACTORPS_GEMM=openblas: not) or
// OpenBLAS sgemm plus plain loops, computing synchronously on the calling thread.
#pragma once

#include "compute/backend.hpp"

#include <memory>

namespace actorps {

/// Creates a CPU backend. Sets OpenBLAS's (process-wide) thread count to `threads` (>= 1).
std::unique_ptr<backend> make_cpu_backend(int threads = 1);

} // namespace actorps
