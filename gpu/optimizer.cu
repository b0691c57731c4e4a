// The optimizer updates (compute/optimizer_rules.hpp) plus axpy/scale, one thread per element
// (grid-stride), dense or on an embedding table's rows (one launch for all of a step's rows).
// The learning rate of update t is computed on the host.
#include "gpu/launch.cuh"
#include "gpu/optimizer.cuh"

namespace actorps::gpu {

namespace {

// Where element i of the gradient lands in the weights (and slots): the same place for a dense
// update; for a sparse one (an embedding table's rows), row i / cols at offset at[i / cols].
struct dense_index {
  __device__ size_t operator()(size_t i) const { return i; }
};

struct row_index {
  const size_t* at;
  size_t cols;
  __device__ size_t operator()(size_t i) const { return at[i / cols] + i % cols; }
};

template <class Index>
__global__ void sgd_kernel(size_t n, Index at, float lr, float wd, float* w, const float* g) {
  ACTORPS_GRID_STRIDE(i, n) {
    const size_t k = at(i);
    w[k] -= lr * (g[i] + wd * w[k]);
  }
}

template <class Index>
__global__ void momentum_kernel(size_t n, Index at, float lr, float mu, float wd, float look, float* w,
                                const float* g, float* a) {
  ACTORPS_GRID_STRIDE(i, n) {
    const size_t k = at(i);
    float gi = g[i] + wd * w[k];
    float acc = mu * a[k] + gi;
    a[k] = acc;
    w[k] -= lr * (look * (gi + mu * acc) + (1.0f - look) * acc);
  }
}

template <class Index>
__global__ void adam_kernel(size_t n, Index at, float step, float b1, float b2, float eps, float wd, float* w,
                            const float* g, float* m, float* v) {
  ACTORPS_GRID_STRIDE(i, n) {
    const size_t k = at(i);
    float gi = g[i] + wd * w[k];
    float mi = b1 * m[k] + (1.0f - b1) * gi;
    float vi = b2 * v[k] + (1.0f - b2) * gi * gi;
    m[k] = mi;
    v[k] = vi;
    w[k] -= step * mi / (sqrtf(vi) + eps);
  }
}

template <class Index>
__global__ void adagrad_kernel(size_t n, Index at, float lr, float wd, float* w, const float* g, float* acc) {
  ACTORPS_GRID_STRIDE(i, n) {
    const size_t k = at(i);
    float gi = g[i] + wd * w[k];
    float a = acc[k] + gi * gi;
    acc[k] = a;
    w[k] -= lr * gi / sqrtf(a);
  }
}

template <class Index>
__global__ void rmsprop_kernel(size_t n, Index at, float lr, float rho, float mu, float eps, float wd,
                               float* w, const float* g, float* ms, float* mom) {
  ACTORPS_GRID_STRIDE(i, n) {
    const size_t k = at(i);
    float gi = g[i] + wd * w[k];
    float m = rho * ms[k] + (1.0f - rho) * gi * gi;
    float v = mu * mom[k] + lr * gi / sqrtf(m + eps);
    ms[k] = m;
    mom[k] = v;
    w[k] -= v;
  }
}

template <class Index>
__global__ void moving_average_kernel(size_t n, Index at, float decay, float* w, const float* g) {
  const float take = 1.0f - decay;
  ACTORPS_GRID_STRIDE(i, n) {
    const size_t k = at(i);
    w[k] = decay * w[k] + take * g[i];
  }
}

__global__ void axpy_kernel(size_t n, float alpha, const float* x, float* y) {
  ACTORPS_GRID_STRIDE(i, n) y[i] += alpha * x[i];
}

__global__ void scale_kernel(size_t n, float alpha, float* x) {
  ACTORPS_GRID_STRIDE(i, n) x[i] *= alpha;
}

// Update number t of p on the n gradient elements, each to the place `at` gives it.
template <class Index>
cudaError_t launch_update(const optimizer_params& p, long t, size_t n, Index at, float* w, const float* g,
                          float* slot0, float* slot1, cudaStream_t s) {
  if (n == 0)
    return cudaSuccess;
  const float lr = learning_rate_at(p, t), wd = p.weight_decay;
  const auto grid = grid_for(n);
  if (p.moving_decay > 0.0f) { // a batch-norm moving statistic: w = decay w + (1 - decay) g
    moving_average_kernel<<<grid, block_threads, 0, s>>>(n, at, p.moving_decay, w, g);
    return cudaGetLastError();
  }
  switch (p.kind) {
    case optimizer_kind::sgd:
      sgd_kernel<<<grid, block_threads, 0, s>>>(n, at, lr, wd, w, g);
      break;
    case optimizer_kind::momentum:
    case optimizer_kind::nesterov:
      momentum_kernel<<<grid, block_threads, 0, s>>>(
        n, at, lr, p.momentum, wd, p.kind == optimizer_kind::nesterov ? 1.0f : 0.0f, w, g, slot0);
      break;
    case optimizer_kind::adam:
      adam_kernel<<<grid, block_threads, 0, s>>>(n, at, adam_step_size(p, t), p.beta1, p.beta2,
                                                 p.epsilon, wd, w, g, slot0, slot1);
      break;
    case optimizer_kind::adagrad:
      adagrad_kernel<<<grid, block_threads, 0, s>>>(n, at, lr, wd, w, g, slot0);
      break;
    case optimizer_kind::rmsprop:
      rmsprop_kernel<<<grid, block_threads, 0, s>>>(n, at, lr, p.rho, p.momentum, p.epsilon, wd, w, g,
                                                    slot0, slot1);
      break;
  }
  return cudaGetLastError();
}

} // namespace

cudaError_t launch_apply_update(const optimizer_params& p, long t, size_t n, float* w,
                                const float* g, float* slot0, float* slot1, cudaStream_t s) {
  return launch_update(p, t, n, dense_index{}, w, g, slot0, slot1, s);
}

cudaError_t launch_apply_rows(const optimizer_params& p, long t, size_t cols, const size_t* at, size_t count,
                              float* w, const float* g, float* slot0, float* slot1, cudaStream_t s) {
  if (cols == 0)
    return cudaSuccess;
  return launch_update(p, t, count * cols, row_index{at, cols}, w, g, slot0, slot1, s);
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
