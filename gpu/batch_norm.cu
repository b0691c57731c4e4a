// Column sums in two stages: blocks of 32 columns x 8 row lanes each sum one chunk of rows (a
// lane every 8th row, then the lanes in order), then one thread per column adds the chunks in
// order. Elementwise passes use a grid-stride loop.
#include "gpu/batch_norm.cuh"
#include "gpu/launch.cuh"

namespace actorps::gpu {

namespace {

constexpr int tile_cols = 32;
constexpr int lanes = 8;
constexpr int chunk_rows = 256;

int chunks_for(int rows) {
  return (rows + chunk_rows - 1) / chunk_rows;
}

enum class sums { plain, centered, gradient };

// partial[(chunk, c)] (and partial_b for the gradient's second sum) over the chunk's rows:
// plain: x; centered: (x - mean)^2; gradient: dy and dy * (x - mean) * inv.
__global__ void column_partials(sums what, const float* x, const float* dy, int rows, int cols, const float* mean,
                                const float* var, float eps, double* partial_a, double* partial_b) {
  __shared__ double a_lane[lanes][tile_cols];
  __shared__ double b_lane[lanes][tile_cols];
  const int c = blockIdx.x * tile_cols + threadIdx.x;
  const int chunk = blockIdx.y;
  double a = 0.0, b = 0.0;
  if (c < cols) {
    const double m = what == sums::plain ? 0.0 : static_cast<double>(mean[c]);
    const float inv = what == sums::gradient ? static_cast<float>(1.0 / sqrt(static_cast<double>(var[c]) + eps)) : 0.0f;
    const int last = min(rows, (chunk + 1) * chunk_rows);
    for (int r = chunk * chunk_rows + static_cast<int>(threadIdx.y); r < last; r += lanes) {
      const double v = x[static_cast<size_t>(r) * cols + c];
      switch (what) {
        case sums::plain: a += v; break;
        case sums::centered: a += (v - m) * (v - m); break;
        case sums::gradient: {
          const double g = dy[static_cast<size_t>(r) * cols + c];
          a += g;
          b += g * static_cast<double>((x[static_cast<size_t>(r) * cols + c] - mean[c]) * inv); // (xhat in float, as on the CPU)
          break;
        }
      }
    }
  }
  a_lane[threadIdx.y][threadIdx.x] = a;
  b_lane[threadIdx.y][threadIdx.x] = b;
  __syncthreads();
  if (threadIdx.y == 0 && c < cols) {
    double sa = 0.0, sb = 0.0;
    for (int l = 0; l < lanes; ++l) {
      sa += a_lane[l][threadIdx.x];
      sb += b_lane[l][threadIdx.x];
    }
    partial_a[static_cast<size_t>(chunk) * cols + c] = sa;
    partial_b[static_cast<size_t>(chunk) * cols + c] = sb;
  }
}

// out_a[c] = scale * sum of the chunks' partial_a (out_b likewise, when given).
__global__ void column_totals(const double* partial_a, const double* partial_b, int chunks, int cols, double scale,
                              float* out_a, float* out_b) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols)
    return;
  double sa = 0.0, sb = 0.0;
  for (int k = 0; k < chunks; ++k) {
    sa += partial_a[static_cast<size_t>(k) * cols + c];
    sb += partial_b[static_cast<size_t>(k) * cols + c];
  }
  out_a[c] = static_cast<float>(sa * scale);
  if (out_b != nullptr)
    out_b[c] = static_cast<float>(sb * scale);
}

__device__ float inverse_std(const float* var, int c, float eps) {
  return static_cast<float>(1.0 / sqrt(static_cast<double>(var[c]) + eps));
}

__global__ void normalize_kernel(const float* x, int rows, int cols, const float* mean, const float* var,
                                 const float* gamma, const float* beta, float eps, float* y) {
  const size_t n = static_cast<size_t>(rows) * cols;
  ACTORPS_GRID_STRIDE(i, n) {
    const int c = static_cast<int>(i % cols);
    const float scale = gamma[c] * inverse_std(var, c, eps);
    const float shift = beta[c] - mean[c] * scale;
    y[i] = x[i] * scale + shift;
  }
}

__global__ void input_gradient_kernel(const float* x, const float* dy, int rows, int cols, const float* mean,
                                      const float* var, const float* gamma, float eps, const float* dgamma,
                                      const float* dbeta, float* dx) {
  const size_t n = static_cast<size_t>(rows) * cols;
  ACTORPS_GRID_STRIDE(i, n) {
    const int c = static_cast<int>(i % cols);
    const float inv = inverse_std(var, c, eps);
    const float k = gamma[c] * inv;
    const float a = k * inv * dgamma[c] / static_cast<float>(rows);
    const float b = k * dbeta[c] / static_cast<float>(rows) - a * mean[c];
    dx[i] = k * dy[i] - a * x[i] - b;
  }
}

dim3 partial_grid(int rows, int cols) {
  return dim3(static_cast<unsigned>((cols + tile_cols - 1) / tile_cols), static_cast<unsigned>(chunks_for(rows)));
}

} // namespace

size_t batch_norm_scratch(int rows, int cols) {
  return 2 * static_cast<size_t>(chunks_for(rows)) * static_cast<size_t>(cols);
}

cudaError_t launch_channel_moments(const float* x, int rows, int cols, float* mean, float* var, double* scratch,
                                   cudaStream_t s) {
  if (rows <= 0 || cols <= 0)
    return cudaSuccess;
  const int chunks = chunks_for(rows);
  double* pa = scratch;
  double* pb = scratch + static_cast<size_t>(chunks) * cols;
  const dim3 block(tile_cols, lanes);
  const unsigned totals = static_cast<unsigned>((cols + 127) / 128);
  column_partials<<<partial_grid(rows, cols), block, 0, s>>>(sums::plain, x, nullptr, rows, cols, nullptr, nullptr, 0.0f,
                                                            pa, pb);
  column_totals<<<totals, 128, 0, s>>>(pa, pb, chunks, cols, 1.0 / rows, mean, nullptr);
  column_partials<<<partial_grid(rows, cols), block, 0, s>>>(sums::centered, x, nullptr, rows, cols, mean, nullptr, 0.0f,
                                                            pa, pb);
  column_totals<<<totals, 128, 0, s>>>(pa, pb, chunks, cols, 1.0 / rows, var, nullptr);
  return cudaGetLastError();
}

cudaError_t launch_batch_norm(const float* x, int rows, int cols, const float* mean, const float* var,
                              const float* gamma, const float* beta, float eps, float* y, cudaStream_t s) {
  const size_t n = static_cast<size_t>(rows) * cols;
  if (n == 0)
    return cudaSuccess;
  normalize_kernel<<<grid_for(n), block_threads, 0, s>>>(x, rows, cols, mean, var, gamma, beta, eps, y);
  return cudaGetLastError();
}

cudaError_t launch_batch_norm_backward(const float* x, const float* dy, int rows, int cols, const float* mean,
                                       const float* var, const float* gamma, float eps, float* dgamma, float* dbeta,
                                       float* dx, double* scratch, cudaStream_t s) {
  const size_t n = static_cast<size_t>(rows) * cols;
  if (n == 0)
    return cudaSuccess;
  const int chunks = chunks_for(rows);
  double* pa = scratch;
  double* pb = scratch + static_cast<size_t>(chunks) * cols;
  column_partials<<<partial_grid(rows, cols), dim3(tile_cols, lanes), 0, s>>>(sums::gradient, x, dy, rows, cols, mean, var,
                                                                             eps, pa, pb);
  column_totals<<<static_cast<unsigned>((cols + 127) / 128), 128, 0, s>>>(pa, pb, chunks, cols, 1.0, dbeta, dgamma);
  input_gradient_kernel<<<grid_for(n), block_threads, 0, s>>>(x, dy, rows, cols, mean, var, gamma, eps, dgamma, dbeta, dx);
  return cudaGetLastError();
}

} // namespace actorps::gpu
