// OpenBLAS picks its kernels once, when the library loads, from the CPU model. OpenBLAS 0.3.21
// (Debian 12) does not know newer Xeons (e.g. family 6 model 207) and falls back to its SSE3
// "Prescott" kernels, a third of the speed the CPU's AVX-512 gives. Its only override is the
// OPENBLAS_CORETYPE environment variable, read at load time, so a program that finds the fallback
// on a CPU with AVX-512 or AVX2 re-executes itself once with the variable set.
#pragma once

namespace actorps {

/// Returns OpenBLAS's kernel family ("SkylakeX", "Haswell", "Prescott", ...).
const char* blas_core_name();

/// Returns the OPENBLAS_CORETYPE this CPU should use when OpenBLAS fell back to Prescott and the
/// CPU (with its operating system) supports AVX-512 ("SkylakeX") or AVX2 ("Haswell"); nullptr
/// when nothing needs fixing or OPENBLAS_CORETYPE is already set.
const char* better_blas_core();

/// If better_blas_core() names a core, sets OPENBLAS_CORETYPE and re-executes /proc/self/exe with
/// argv (printing one line on stderr); returns only when no re-execution was needed or it failed.
void reexec_with_better_blas(char** argv);

} // namespace actorps
