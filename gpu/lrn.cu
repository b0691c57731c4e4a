// One thread per element: the denominator of its channel (and, backward, of its neighbours').
#include "gpu/launch.cuh"
#include "gpu/lrn.cuh"

namespace actorps::gpu {

namespace {

__device__ float denominator(const float* row, int cols, int c, lrn_params p) {
  float sum = 0.0f;
  for (int j = max(0, c - p.radius); j <= min(cols - 1, c + p.radius); ++j)
    sum += row[j] * row[j];
  return p.bias + p.alpha * sum;
}

__global__ void lrn_kernel(const float* x, int rows, int cols, lrn_params p, float* y) {
  const size_t n = static_cast<size_t>(rows) * cols;
  ACTORPS_GRID_STRIDE(i, n) {
    const int c = static_cast<int>(i % cols);
    const float* row = x + (i - c);
    y[i] = x[i] * powf(denominator(row, cols, c, p), -p.beta);
  }
}

__global__ void lrn_backward_kernel(const float* x, const float* y, const float* dy, int rows, int cols, lrn_params p,
                                    float* dx) {
  const size_t n = static_cast<size_t>(rows) * cols;
  ACTORPS_GRID_STRIDE(i, n) {
    const int c = static_cast<int>(i % cols);
    const size_t base = i - c;
    const float* row = x + base;
    float sum = 0.0f;
    for (int j = max(0, c - p.radius); j <= min(cols - 1, c + p.radius); ++j)
      sum += dy[base + j] * y[base + j] / denominator(row, cols, j, p);
    dx[i] = dy[i] * powf(denominator(row, cols, c, p), -p.beta) - 2.0f * p.alpha * p.beta * x[i] * sum;
  }
}

} // namespace

cudaError_t launch_lrn(const float* x, int rows, int cols, const lrn_params& p, float* y, cudaStream_t s) {
  const size_t n = static_cast<size_t>(rows) * cols;
  if (n > 0)
    lrn_kernel<<<grid_for(n), block_threads, 0, s>>>(x, rows, cols, p, y);
  return cudaGetLastError();
}

cudaError_t launch_lrn_backward(const float* x, const float* y, const float* dy, int rows, int cols, const lrn_params& p,
                                float* dx, cudaStream_t s) {
  const size_t n = static_cast<size_t>(rows) * cols;
  if (n > 0)
    lrn_backward_kernel<<<grid_for(n), block_threads, 0, s>>>(x, y, dy, rows, cols, p, dx);
  return cudaGetLastError();
}

} // namespace actorps::gpu
