// cuBLAS, loaded when the first CUDA backend starts rather than with the program: libcublas
// brings libcublasLt, whose static initialisers touch ~146 MB (84 MB of its .bss, 62 MB of its
// code) in every process that maps it, GPU or not. A CPU-only process (compute.device = cpu, or
// auto on a machine without a usable GPU) never loads it. Host-compiled only.
#pragma once

#include <caf/expected.hpp>
#include <cublas_v2.h>

#include <string>

namespace actorps::gpu {

/// The cuBLAS calls the CUDA backend makes (cublas_v2.h's names: create is cublasCreate_v2).
struct cublas_functions {
  decltype(&cublasCreate) create = nullptr;
  decltype(&cublasDestroy) destroy = nullptr;
  decltype(&cublasSetStream) set_stream = nullptr;
  decltype(&cublasSetMathMode) set_math_mode = nullptr;
  decltype(&cublasSgemm) sgemm = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
};

/// The library the build linked against (its full path), then its file name for the loader's
/// search path.
const char* default_cublas_library();

/// Returns cuBLAS's functions, loading `library` on the first successful call (thread-safe;
/// later calls return the same table whatever they name). device_unavailable naming the library
/// and the loader's message when it cannot be loaded or lacks a function.
caf::expected<const cublas_functions*> load_cublas(const std::string& library = default_cublas_library());

/// Returns the loaded table, or nullptr before a load succeeded.
const cublas_functions* loaded_cublas();

} // namespace actorps::gpu
