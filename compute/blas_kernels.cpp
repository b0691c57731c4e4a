// See blas_kernels.hpp.
#include "compute/blas_kernels.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unistd.h>

extern "C" char* openblas_get_corename(void);

namespace actorps {

namespace {

// Set by the process that restarts itself: the core it chose, read by the restarted process.
constexpr const char* restart_marker = "ACTORPS_BLAS_RESTART";

// The first words of the note either way.
constexpr const char* fallback_note = "OpenBLAS chose its Prescott (SSE3) kernels on a CPU it does not know; ";

std::mutex note_mutex;
std::string pending_note; // a failed restart's note (this process had no restart to inherit)

} // namespace

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
  ::setenv("OPENBLAS_CORETYPE", core, 1);
  ::setenv(restart_marker, core, 1);
  ::execv("/proc/self/exe", argv);
  const std::string why = std::strerror(errno);
  ::unsetenv("OPENBLAS_CORETYPE");
  ::unsetenv(restart_marker);
  std::lock_guard<std::mutex> guard{note_mutex};
  pending_note = std::string{fallback_note} + "restarting with OPENBLAS_CORETYPE=" + core + " failed (" + why + "), so it runs them";
}

std::string take_blas_note() {
  std::lock_guard<std::mutex> guard{note_mutex};
  std::string note;
  if (const char* core = std::getenv(restart_marker); core != nullptr) {
    note = std::string{fallback_note} + "restarted with OPENBLAS_CORETYPE=" + core + " (OpenBLAS now runs " + blas_core_name() + ")";
    ::unsetenv(restart_marker);
  }
  if (!pending_note.empty())
    note = std::move(pending_note);
  pending_note.clear();
  return note;
}

} // namespace actorps
