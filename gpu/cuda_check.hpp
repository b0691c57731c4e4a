// The one place CUDA and cuBLAS status codes become actorps errors (errc::device_error).
// Host-compiled only (g++); kernels report through their launchers' cudaError_t.
#pragma once

#include "common/errc.hpp"
#include "common/log.hpp"
#include "gpu/cublas_library.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace actorps::gpu {

/// Returns none for cudaSuccess, else device_error naming the call and CUDA's message.
inline caf::error to_error(cudaError_t status, const char* what) {
  if (status == cudaSuccess)
    return caf::none;
  return caf::make_error(errc::device_error, cat(what, ": ", cudaGetErrorName(status), " (",
                                                 cudaGetErrorString(status), ")"));
}

/// Returns none for CUBLAS_STATUS_SUCCESS, else device_error naming the call and status.
inline caf::error to_error(cublasStatus_t status, const char* what) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return caf::none;
  const auto* blas = loaded_cublas(); // (a status comes from a loaded cuBLAS)
  return caf::make_error(errc::device_error, cat(what, ": ", blas != nullptr ? blas->status_string(status)
                                                                             : cat("cuBLAS status ", int{status}).c_str()));
}

} // namespace actorps::gpu

/// Evaluates a CUDA/cuBLAS call and records a failure in the enclosing backend's op_errors errors_.
#define ACTORPS_CUDA_CHECK(call) errors_.record(::actorps::gpu::to_error((call), #call))
