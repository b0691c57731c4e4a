// Activation kernels (relu, elu, sigmoid) and their derivatives from the forward output.
#include "gpu/elementwise.cuh"
#include "gpu/launch.cuh"

namespace actorps::gpu {

namespace {

template <activation F>
__global__ void activate_kernel(const float* x, float* y, size_t n) {
  ACTORPS_GRID_STRIDE(i, n) {
    float v = x[i];
    if constexpr (F == activation::relu)
      y[i] = v > 0.0f ? v : 0.0f;
    else if constexpr (F == activation::elu)
      y[i] = v > 0.0f ? v : expm1f(v);
    else
      y[i] = 1.0f / (1.0f + expf(-v));
  }
}

template <activation F>
__global__ void activate_backward_kernel(const float* y, const float* dy, float* dx, size_t n) {
  ACTORPS_GRID_STRIDE(i, n) {
    float out = y[i];
    float d;
    if constexpr (F == activation::relu)
      d = out > 0.0f ? 1.0f : 0.0f;
    else if constexpr (F == activation::elu)
      d = out > 0.0f ? 1.0f : out + 1.0f;
    else
      d = out * (1.0f - out);
    dx[i] = dy[i] * d;
  }
}

} // namespace

cudaError_t launch_activate(activation f, const float* x, float* y, size_t n, cudaStream_t s) {
  if (n == 0)
    return cudaSuccess;
  switch (f) {
    case activation::relu: activate_kernel<activation::relu><<<grid_for(n), block_threads, 0, s>>>(x, y, n); break;
    case activation::elu: activate_kernel<activation::elu><<<grid_for(n), block_threads, 0, s>>>(x, y, n); break;
    case activation::sigmoid: activate_kernel<activation::sigmoid><<<grid_for(n), block_threads, 0, s>>>(x, y, n); break;
  }
  return cudaGetLastError();
}

cudaError_t launch_activate_backward(activation f, const float* y, const float* dy, float* dx,
                                     size_t n, cudaStream_t s) {
  if (n == 0)
    return cudaSuccess;
  switch (f) {
    case activation::relu:
      activate_backward_kernel<activation::relu><<<grid_for(n), block_threads, 0, s>>>(y, dy, dx, n);
      break;
    case activation::elu:
      activate_backward_kernel<activation::elu><<<grid_for(n), block_threads, 0, s>>>(y, dy, dx, n);
      break;
    case activation::sigmoid:
      activate_backward_kernel<activation::sigmoid><<<grid_for(n), block_threads, 0, s>>>(y, dy, dx, n);
      break;
  }
  return cudaGetLastError();
}

} // namespace actorps::gpu
