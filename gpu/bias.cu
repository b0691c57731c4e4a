// Bias add and column sums, one thread per element / per column.
#include "gpu/bias.cuh"
#include "gpu/launch.cuh"

namespace actorps::gpu {

namespace {

__global__ void add_bias_kernel(float* y, const float* bias, int rows, int cols) {
  size_t n = static_cast<size_t>(rows) * cols;
  ACTORPS_GRID_STRIDE(i, n)
    y[i] += bias[i % cols];
}

__global__ void sum_rows_kernel(const float* x, float* out, int rows, int cols) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= cols)
    return;
  float acc = 0.0f;
  for (int i = 0; i < rows; ++i)
    acc += x[static_cast<size_t>(i) * cols + j];
  out[j] = acc;
}

} // namespace

cudaError_t launch_add_bias(float* y, const float* bias, int rows, int cols, cudaStream_t s) {
  size_t n = static_cast<size_t>(rows) * cols;
  if (n == 0)
    return cudaSuccess;
  add_bias_kernel<<<grid_for(n), block_threads, 0, s>>>(y, bias, rows, cols);
  return cudaGetLastError();
}

cudaError_t launch_sum_rows(const float* x, float* out, int rows, int cols, cudaStream_t s) {
  if (cols == 0)
    return cudaSuccess;
  sum_rows_kernel<<<(cols + 127) / 128, 128, 0, s>>>(x, out, rows, cols);
  return cudaGetLastError();
}

} // namespace actorps::gpu
