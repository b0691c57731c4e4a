// Softmax cross-entropy and accuracy: one thread per row, then a one-block fixed-order reduction.
#include "gpu/softmax_xent.cuh"

namespace actorps::gpu {

namespace {

constexpr int reduce_threads = 256;

__global__ void softmax_xent_rows(const float* logits, const float* labels, float* grad,
                                  float* row_loss, int rows, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows)
    return;
  const float* z = logits + static_cast<size_t>(i) * cols;
  float* g = grad + static_cast<size_t>(i) * cols;
  float zmax = z[0];
  for (int j = 1; j < cols; ++j)
    zmax = fmaxf(zmax, z[j]);
  float sum = 0.0f;
  for (int j = 0; j < cols; ++j) {
    g[j] = expf(z[j] - zmax);
    sum += g[j];
  }
  int label = static_cast<int>(labels[i]);
  row_loss[i] = logf(sum) - (z[label] - zmax);
  float inv_sum = 1.0f / sum;
  float inv_rows = 1.0f / static_cast<float>(rows);
  for (int j = 0; j < cols; ++j)
    g[j] = (g[j] * inv_sum - (j == label ? 1.0f : 0.0f)) * inv_rows;
}

__global__ void correct_rows(const float* logits, const float* labels, float* row_ok, int rows,
                             int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows)
    return;
  const float* z = logits + static_cast<size_t>(i) * cols;
  int best = 0;
  for (int j = 1; j < cols; ++j)
    if (z[j] > z[best])
      best = j;
  row_ok[i] = best == static_cast<int>(labels[i]) ? 1.0f : 0.0f;
}

// out[0] = scale * sum(values[0..n)), one block, fixed summation order.
__global__ void reduce_sum(const float* values, int n, float scale, float* out) {
  __shared__ float partial[reduce_threads];
  float acc = 0.0f;
  for (int i = threadIdx.x; i < n; i += reduce_threads)
    acc += values[i];
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (int stride = reduce_threads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride)
      partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    out[0] = partial[0] * scale;
}

} // namespace

cudaError_t launch_softmax_xent(const float* logits, const float* labels, float* grad, float* loss,
                                float* scratch, int rows, int cols, cudaStream_t s) {
  if (rows == 0)
    return cudaSuccess;
  softmax_xent_rows<<<(rows + 127) / 128, 128, 0, s>>>(logits, labels, grad, scratch, rows, cols);
  reduce_sum<<<1, reduce_threads, 0, s>>>(scratch, rows, 1.0f / static_cast<float>(rows), loss);
  return cudaGetLastError();
}

cudaError_t launch_count_correct(const float* logits, const float* labels, float* count,
                                 float* scratch, int rows, int cols, cudaStream_t s) {
  if (rows == 0)
    return cudaSuccess;
  correct_rows<<<(rows + 127) / 128, 128, 0, s>>>(logits, labels, scratch, rows, cols);
  reduce_sum<<<1, reduce_threads, 0, s>>>(scratch, rows, 1.0f, count);
  return cudaGetLastError();
}

} // namespace actorps::gpu
