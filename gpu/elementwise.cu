// Activation kernels and their derivatives from the forward output, dropout and the elementwise
// product. CPU references: compute/activation.hpp, compute/dropout_mask.hpp.
#include "compute/dropout_mask.hpp"
#include "gpu/elementwise.cuh"
#include "gpu/launch.cuh"

#include <type_traits>

namespace actorps::gpu {

namespace {

template <activation F>
__device__ float apply(float v) {
  if constexpr (F == activation::relu)
    return v > 0.0f ? v : 0.0f;
  else if constexpr (F == activation::elu)
    return v > 0.0f ? v : expm1f(v);
  else if constexpr (F == activation::sigmoid)
    return 1.0f / (1.0f + expf(-v));
  else if constexpr (F == activation::tanh)
    return tanhf(v);
  else
    return v > 0.0f ? v : leaky_relu_alpha * v;
}

template <activation F>
__device__ float derivative(float out) {
  if constexpr (F == activation::relu)
    return out > 0.0f ? 1.0f : 0.0f;
  else if constexpr (F == activation::elu)
    return out > 0.0f ? 1.0f : out + 1.0f;
  else if constexpr (F == activation::sigmoid)
    return out * (1.0f - out);
  else if constexpr (F == activation::tanh)
    return 1.0f - out * out;
  else
    return out > 0.0f ? 1.0f : leaky_relu_alpha;
}

template <activation F>
__global__ void activate_kernel(const float* x, float* y, size_t n) {
  ACTORPS_GRID_STRIDE(i, n) y[i] = apply<F>(x[i]);
}

template <activation F>
__global__ void activate_backward_kernel(const float* y, const float* dy, float* dx, size_t n) {
  ACTORPS_GRID_STRIDE(i, n) dx[i] = dy[i] * derivative<F>(y[i]);
}

// Calls fn(std::integral_constant<activation, F>{}) for the runtime value f.
template <class Fn>
void dispatch(activation f, Fn&& fn) {
  using std::integral_constant;
  switch (f) {
    case activation::relu: fn(integral_constant<activation, activation::relu>{}); break;
    case activation::elu: fn(integral_constant<activation, activation::elu>{}); break;
    case activation::sigmoid: fn(integral_constant<activation, activation::sigmoid>{}); break;
    case activation::tanh: fn(integral_constant<activation, activation::tanh>{}); break;
    case activation::leaky_relu: fn(integral_constant<activation, activation::leaky_relu>{}); break;
  }
}

__global__ void dropout_kernel(size_t n, float rate, uint64_t seed, const float* x, float* y,
                               float* mask) {
  ACTORPS_GRID_STRIDE(i, n) {
    float m = dropout_keep_scale(seed, i, rate);
    mask[i] = m;
    y[i] = x[i] * m;
  }
}

__global__ void multiply_kernel(size_t n, const float* a, const float* b, float* out) {
  ACTORPS_GRID_STRIDE(i, n) out[i] = a[i] * b[i];
}

} // namespace

cudaError_t launch_activate(activation f, const float* x, float* y, size_t n, cudaStream_t s) {
  if (n == 0)
    return cudaSuccess;
  auto go = [&](auto tag) {
    activate_kernel<decltype(tag)::value><<<grid_for(n), block_threads, 0, s>>>(x, y, n);
  };
  dispatch(f, go);
  return cudaGetLastError();
}

cudaError_t launch_activate_backward(activation f, const float* y, const float* dy, float* dx,
                                     size_t n, cudaStream_t s) {
  if (n == 0)
    return cudaSuccess;
  auto go = [&](auto tag) {
    activate_backward_kernel<decltype(tag)::value><<<grid_for(n), block_threads, 0, s>>>(y, dy, dx, n);
  };
  dispatch(f, go);
  return cudaGetLastError();
}

cudaError_t launch_dropout(size_t n, float rate, uint64_t seed, const float* x, float* y,
                           float* mask, cudaStream_t s) {
  if (n == 0)
    return cudaSuccess;
  dropout_kernel<<<grid_for(n), block_threads, 0, s>>>(n, rate, seed, x, y, mask);
  return cudaGetLastError();
}

cudaError_t launch_multiply(size_t n, const float* a, const float* b, float* out, cudaStream_t s) {
  if (n == 0)
    return cudaSuccess;
  multiply_kernel<<<grid_for(n), block_threads, 0, s>>>(n, a, b, out);
  return cudaGetLastError();
}

} // namespace actorps::gpu
