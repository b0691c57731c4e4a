// Activation kernels (relu, elu, sigmoid) and their derivatives from the forward output.
#include "gpu/elementwise.cuh"

namespace actorps::gpu {

namespace {

constexpr int block = 256;

unsigned grid_for(size_t n) {
  size_t g = (n + block - 1) / block;
  return static_cast<unsigned>(g < 65535 * 16 ? g : 65535 * 16);
}

template <activation F>
__global__ void activate_kernel(const float* x, float* y, size_t n) {
  for (size_t i = blockIdx.x * size_t{block} + threadIdx.x; i < n; i += size_t{gridDim.x} * block) {
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
  for (size_t i = blockIdx.x * size_t{block} + threadIdx.x; i < n; i += size_t{gridDim.x} * block) {
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
    case activation::relu: activate_kernel<activation::relu><<<grid_for(n), block, 0, s>>>(x, y, n); break;
    case activation::elu: activate_kernel<activation::elu><<<grid_for(n), block, 0, s>>>(x, y, n); break;
    case activation::sigmoid: activate_kernel<activation::sigmoid><<<grid_for(n), block, 0, s>>>(x, y, n); break;
  }
  return cudaGetLastError();
}

cudaError_t launch_activate_backward(activation f, const float* y, const float* dy, float* dx,
                                     size_t n, cudaStream_t s) {
  if (n == 0)
    return cudaSuccess;
  switch (f) {
    case activation::relu:
      activate_backward_kernel<activation::relu><<<grid_for(n), block, 0, s>>>(y, dy, dx, n);
      break;
    case activation::elu:
      activate_backward_kernel<activation::elu><<<grid_for(n), block, 0, s>>>(y, dy, dx, n);
      break;
    case activation::sigmoid:
      activate_backward_kernel<activation::sigmoid><<<grid_for(n), block, 0, s>>>(y, dy, dx, n);
      break;
  }
  return cudaGetLastError();
}

} // namespace actorps::gpu
