// The optimizer updates (compute/optimizer_rules.hpp) plus axpy/scale, one thread per element
// (grid-stride). The learning rate of update t is computed on the host.
#include "gpu/launch.cuh"
#include "gpu/optimizer.cuh"

namespace actorps::gpu {

namespace {

__global__ void sgd_kernel(size_t n, float lr, float wd, float* w, const float* g) {
  ACTORPS_GRID_STRIDE(i, n) w[i] -= lr * (g[i] + wd * w[i]);
}

__global__ void momentum_kernel(size_t n, float lr, float mu, float wd, float look, float* w,
                                const float* g, float* a) {
  ACTORPS_GRID_STRIDE(i, n) {
    float gi = g[i] + wd * w[i];
    float acc = mu * a[i] + gi;
    a[i] = acc;
    w[i] -= lr * (look * (gi + mu * acc) + (1.0f - look) * acc);
  }
}

__global__ void adam_kernel(size_t n, float step, float b1, float b2, float eps, float wd, float* w,
                            const float* g, float* m, float* v) {
  ACTORPS_GRID_STRIDE(i, n) {
    float gi = g[i] + wd * w[i];
    float mi = b1 * m[i] + (1.0f - b1) * gi;
    float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    w[i] -= step * mi / (sqrtf(vi) + eps);
  }
}

__global__ void adagrad_kernel(size_t n, float lr, float wd, float* w, const float* g, float* acc) {
  ACTORPS_GRID_STRIDE(i, n) {
    float gi = g[i] + wd * w[i];
    float a = acc[i] + gi * gi;
    acc[i] = a;
    w[i] -= lr * gi / sqrtf(a);
  }
}

__global__ void rmsprop_kernel(size_t n, float lr, float rho, float mu, float eps, float wd,
                               float* w, const float* g, float* ms, float* mom) {
  ACTORPS_GRID_STRIDE(i, n) {
    float gi = g[i] + wd * w[i];
    float m = rho * ms[i] + (1.0f - rho) * gi * gi;
    float v = mu * mom[i] + lr * gi / sqrtf(m + eps);
    ms[i] = m;
    mom[i] = v;
    w[i] -= v;
  }
}

__global__ void axpy_kernel(size_t n, float alpha, const float* x, float* y) {
  ACTORPS_GRID_STRIDE(i, n) y[i] += alpha * x[i];
}

__global__ void moving_average_kernel(size_t n, float decay, float* w, const float* g) {
  const float take = 1.0f - decay;
  ACTORPS_GRID_STRIDE(i, n) w[i] = decay * w[i] + take * g[i];
}

__global__ void scale_kernel(size_t n, float alpha, float* x) {
  ACTORPS_GRID_STRIDE(i, n) x[i] *= alpha;
}

} // namespace

cudaError_t launch_apply_update(const optimizer_params& p, long t, size_t n, float* w,
                                const float* g, float* slot0, float* slot1, cudaStream_t s) {
  if (n == 0)
    return cudaSuccess;
  const float lr = learning_rate_at(p, t), wd = p.weight_decay;
  const auto grid = grid_for(n);
  if (p.moving_decay > 0.0f) { // a batch-norm moving statistic: w = decay w + (1 - decay) g
    moving_average_kernel<<<grid, block_threads, 0, s>>>(n, p.moving_decay, w, g);
    return cudaGetLastError();
  }
  switch (p.kind) {
    case optimizer_kind::sgd:
      sgd_kernel<<<grid, block_threads, 0, s>>>(n, lr, wd, w, g);
      break;
    case optimizer_kind::momentum:
    case optimizer_kind::nesterov:
      momentum_kernel<<<grid, block_threads, 0, s>>>(
        n, lr, p.momentum, wd, p.kind == optimizer_kind::nesterov ? 1.0f : 0.0f, w, g, slot0);
      break;
    case optimizer_kind::adam:
      adam_kernel<<<grid, block_threads, 0, s>>>(n, adam_step_size(p, t), p.beta1, p.beta2,
                                                 p.epsilon, wd, w, g, slot0, slot1);
      break;
    case optimizer_kind::adagrad:
      adagrad_kernel<<<grid, block_threads, 0, s>>>(n, lr, wd, w, g, slot0);
      break;
    case optimizer_kind::rmsprop:
      rmsprop_kernel<<<grid, block_threads, 0, s>>>(n, lr, p.rho, p.momentum, p.epsilon, wd, w, g,
                                                    slot0, slot1);
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
