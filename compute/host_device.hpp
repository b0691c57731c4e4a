// Marks small inline functions that both the host and CUDA kernels call (one formula, two backends).
#pragma once

#ifdef __CUDACC__
#  define ACTORPS_HOST_DEVICE __host__ __device__
#else
#  define ACTORPS_HOST_DEVICE
#endif
