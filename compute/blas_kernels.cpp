// See blas_kernels.hpp.
#include "compute/blas_kernels.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

extern "C" char* openblas_get_corename(void);

namespace actorps {

const char* blas_core_name() {
  return openblas_get_corename();
}

const char* better_blas_core() {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr)
    return nullptr;
  if (std::strcmp(blas_core_name(), "Prescott") != 0)
    return nullptr;
  __builtin_cpu_init(); // checks the OS enabled the vector state (XGETBV), not only CPUID
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
      && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return "Haswell";
  return nullptr;
}

void reexec_with_better_blas(char** argv) {
  const char* core = better_blas_core();
  if (core == nullptr)
    return;
  std::fprintf(stderr, "[blas] OpenBLAS chose its Prescott (SSE3) kernels on a CPU it does not know; "
                       "restarting with OPENBLAS_CORETYPE=%s\n", core);
  ::setenv("OPENBLAS_CORETYPE", core, 1);
  ::execv("/proc/self/exe", argv);
  std::fprintf(stderr, "[blas] restarting failed (%s); continuing with the Prescott kernels\n",
               std::strerror(errno));
}

} // namespace actorps
