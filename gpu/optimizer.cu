// SGD, momentum and Adam updates plus axpy/scale, one thread per element (grid-stride).
#include "gpu/launch.cuh"
#include "gpu/optimizer.cuh"

namespace actorps::gpu {

namespace {

__global__ void sgd_kernel(size_t n, float lr, float* w, const float* g) {
  ACTORPS_GRID_STRIDE(i, n) w[i] -= lr * g[i];
}

__global__ void momentum_kernel(size_t n, float lr, float mu, float* w, const float* g, float* a) {
  ACTORPS_GRID_STRIDE(i, n) {
    float acc = mu * a[i] + g[i];
    a[i] = acc;
    w[i] -= lr * acc;
  }
}

__global__ void adam_kernel(size_t n, float step, float b1, float b2, float eps, float* w,
                            const float* g, float* m, float* v) {
  ACTORPS_GRID_STRIDE(i, n) {
    float gi = g[i];
    float mi = b1 * m[i] + (1.0f - b1) * gi;
    float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    w[i] -= step * mi / (sqrtf(vi) + eps);
  }
}

__global__ void axpy_kernel(size_t n, float alpha, const float* x, float* y) {
  ACTORPS_GRID_STRIDE(i, n) y[i] += alpha * x[i];
}

__global__ void scale_kernel(size_t n, float alpha, float* x) {
  ACTORPS_GRID_STRIDE(i, n) x[i] *= alpha;
}

} // namespace

cudaError_t launch_apply_update(const optimizer_params& p, long t, size_t n, float* w,
                                const float* g, float* slot0, float* slot1, cudaStream_t s) {
  if (n == 0)
    return cudaSuccess;
  switch (p.kind) {
    case optimizer_kind::sgd:
      sgd_kernel<<<grid_for(n), block_threads, 0, s>>>(n, learning_rate_at(p, t), w, g);
      break;
    case optimizer_kind::momentum:
      momentum_kernel<<<grid_for(n), block_threads, 0, s>>>(n, learning_rate_at(p, t), p.momentum, w, g,
                                                   slot0);
      break;
    case optimizer_kind::adam:
      adam_kernel<<<grid_for(n), block_threads, 0, s>>>(n, adam_step_size(p, t), p.beta1, p.beta2,
                                                p.epsilon, w, g, slot0, slot1);
      break;
  }
  return cudaGetLastError();
}

cudaError_t launch_axpy(size_t n, float alpha, const float* x, float* y, cudaStream_t s) {
  if (n == 0)
    return cudaSuccess;
  axpy_kernel<<<grid_for(n), block_threads, 0, s>>>(n, alpha, x, y);
  return cudaGetLastError();
}

cudaError_t launch_scale(size_t n, float alpha, float* x, cudaStream_t s) {
  if (n == 0)
    return cudaSuccess;
  scale_kernel<<<grid_for(n), block_threads, 0, s>>>(n, alpha, x);
  return cudaGetLastError();
}

} // namespace actorps::gpu
