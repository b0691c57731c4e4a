// OpenBLAS picks its kernels once, when the library loads, from the CPU model. OpenBLAS 0.3.21
// (Debian 12) does not know newer Xeons (e.g. family 6 model 207) and falls back to its SSE3
// "Prescott" kernels, a third of the speed the CPU's AVX-512 gives. Its only override is the
// OPENBLAS_CORETYPE environment variable, read at load time, so a program that finds the fallback
// on a CPU with AVX-512 or AVX2 re-executes itself once with the variable set. It says so in its
// log, once, when its run begins (take_blas_note), never in front of a tool's answer or error.
#pragma once

#include <string>

namespace actorps {

/// Returns OpenBLAS's kernel family ("SkylakeX", "Haswell", "Prescott", ...).
const char* blas_core_name();

/// Returns the OPENBLAS_CORETYPE this CPU should use when OpenBLAS fell back to Prescott and the
/// CPU (with its operating system) supports AVX-512 ("SkylakeX") or AVX2 ("Haswell"); nullptr
/// when nothing needs fixing or OPENBLAS_CORETYPE is already set.
const char* better_blas_core();

/// If better_blas_core() names a core, sets OPENBLAS_CORETYPE and re-executes /proc/self/exe with
/// argv, printing nothing; returns only when no re-execution was needed or it failed. Either way
/// the process's next take_blas_note() says what happened.
void reexec_with_better_blas(char** argv);

/// Returns, once per process, the one log line saying that actorps chose OpenBLAS's kernels
/// ("" when it did not, and on every later call). Clears the marker the restarted process
/// inherited (ACTORPS_BLAS_RESTART), so programs it starts do not repeat it.
std::string take_blas_note();

} // namespace actorps
