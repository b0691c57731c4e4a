// One thread per output element; the backward kernels gather (one thread per input cell sums
// what every window wrote to it), so they need no atomics and are deterministic.
#include "gpu/launch.cuh"
#include "gpu/window_ops.cuh"

#include <cfloat>

namespace actorps::gpu {

namespace {

// The first output position (along one axis) whose window covers input coordinate v, and one past
// the last: windows o with o * stride - pad <= v < o * stride - pad + k.
__device__ void covering(int v, int pad, int k, int stride, int out, int& first, int& last) {
  int hi = v + pad;           // o * stride <= hi
  int lo = hi - k + 1;        // o * stride >= lo
  first = lo <= 0 ? 0 : (lo + stride - 1) / stride;
  last = min(hi / stride + 1, out);
}

__global__ void im2col_kernel(window_geometry g, size_t total, const float* x, float* col) {
  const int c = g.channels;
  const int ws = g.window_size();
  ACTORPS_GRID_STRIDE(i, total) {
    int within = static_cast<int>(i % ws);          // (ky, kx, ch)
    size_t row = i / ws;                            // (example, oy, ox)
    int pos = static_cast<int>(row % g.positions());
    size_t e = row / g.positions();
    int ch = within % c, k = within / c;
    int y = (pos / g.out_w) * g.stride - g.pad_top + k / g.k_w;
    int xx = (pos % g.out_w) * g.stride - g.pad_left + k % g.k_w;
    bool inside = y >= 0 && y < g.in_h && xx >= 0 && xx < g.in_w;
    col[i] = inside ? x[e * g.in_size() + (static_cast<size_t>(y) * g.in_w + xx) * c + ch] : 0.0f;
  }
}

// Input cell i (NHWC over every example) and the output windows that cover it.
struct covered_cell {
  int ch, x, y;
  size_t e;
  int oy0, oy1, ox0, ox1; // windows [oy0, oy1) x [ox0, ox1)
};

__device__ covered_cell cell_of(const window_geometry& g, size_t i) {
  covered_cell c;
  c.ch = static_cast<int>(i % g.channels);
  size_t cell = i / g.channels;
  c.x = static_cast<int>(cell % g.in_w);
  c.y = static_cast<int>((cell / g.in_w) % g.in_h);
  c.e = cell / (static_cast<size_t>(g.in_w) * g.in_h);
  covering(c.y, g.pad_top, g.k_h, g.stride, g.out_h, c.oy0, c.oy1);
  covering(c.x, g.pad_left, g.k_w, g.stride, g.out_w, c.ox0, c.ox1);
  return c;
}

// The index of cell c within window (oy, ox): (y - top) * k_w + (x - left).
__device__ int window_index(const window_geometry& g, const covered_cell& c, int oy, int ox) {
  return (c.y - (oy * g.stride - g.pad_top)) * g.k_w + (c.x - (ox * g.stride - g.pad_left));
}

__global__ void col2im_kernel(window_geometry g, size_t total, const float* col, float* dx) {
  const int ws = g.window_size();
  ACTORPS_GRID_STRIDE(i, total) {
    covered_cell c = cell_of(g, i);
    float sum = 0.0f;
    for (int oy = c.oy0; oy < c.oy1; ++oy)
      for (int ox = c.ox0; ox < c.ox1; ++ox) {
        size_t row = c.e * g.positions() + oy * g.out_w + ox;
        sum += col[row * ws + static_cast<size_t>(window_index(g, c, oy, ox)) * g.channels + c.ch];
      }
    dx[i] = sum;
  }
}

__global__ void maxpool_kernel(window_geometry g, size_t total, const float* x, float* y,
                               float* argmax) {
  const int c = g.channels;
  ACTORPS_GRID_STRIDE(i, total) {
    int ch = static_cast<int>(i % c);
    size_t rest = i / c;
    int pos = static_cast<int>(rest % g.positions());
    size_t e = rest / g.positions();
    int y0 = (pos / g.out_w) * g.stride - g.pad_top, x0 = (pos % g.out_w) * g.stride - g.pad_left;
    float best = -FLT_MAX * 2.0f; // -inf
    float arg = 0.0f;
    for (int ky = 0; ky < g.k_h; ++ky)
      for (int kx = 0; kx < g.k_w; ++kx) {
        int yy = y0 + ky, xx = x0 + kx;
        if (yy < 0 || yy >= g.in_h || xx < 0 || xx >= g.in_w)
          continue;
        float v = x[e * g.in_size() + (static_cast<size_t>(yy) * g.in_w + xx) * c + ch];
        if (v > best) {
          best = v;
          arg = static_cast<float>(ky * g.k_w + kx);
        }
      }
    y[i] = best;
    argmax[i] = arg;
  }
}

__global__ void maxpool_backward_kernel(window_geometry g, size_t total, const float* dy,
                                        const float* argmax, float* dx) {
  ACTORPS_GRID_STRIDE(i, total) {
    covered_cell c = cell_of(g, i);
    float sum = 0.0f;
    for (int oy = c.oy0; oy < c.oy1; ++oy)
      for (int ox = c.ox0; ox < c.ox1; ++ox) {
        size_t out = (c.e * g.positions() + oy * g.out_w + ox) * g.channels + c.ch;
        sum += argmax[out] == static_cast<float>(window_index(g, c, oy, ox)) ? dy[out] : 0.0f;
      }
    dx[i] = sum;
  }
}

__global__ void depthwise_kernel(window_geometry g, size_t total, const float* x, const float* w, float* y) {
  const int c = g.channels;
  ACTORPS_GRID_STRIDE(i, total) {
    const int ch = static_cast<int>(i % c);
    const size_t row = i / c; // (example, oy, ox)
    const int pos = static_cast<int>(row % g.positions());
    const size_t e = row / g.positions();
    const int y0 = (pos / g.out_w) * g.stride - g.pad_top, x0 = (pos % g.out_w) * g.stride - g.pad_left;
    float sum = 0.0f;
    for (int ky = 0; ky < g.k_h; ++ky) {
      const int yy = y0 + ky;
      if (yy < 0 || yy >= g.in_h)
        continue;
      for (int kx = 0; kx < g.k_w; ++kx) {
        const int xx = x0 + kx;
        if (xx >= 0 && xx < g.in_w)
          sum += x[e * g.in_size() + (static_cast<size_t>(yy) * g.in_w + xx) * c + ch] * w[(ky * g.k_w + kx) * c + ch];
      }
    }
    y[i] = sum;
  }
}

__global__ void depthwise_backward_input_kernel(window_geometry g, size_t total, const float* dy, const float* w,
                                                float* dx) {
  ACTORPS_GRID_STRIDE(i, total) {
    covered_cell c = cell_of(g, i);
    float sum = 0.0f;
    for (int oy = c.oy0; oy < c.oy1; ++oy)
      for (int ox = c.ox0; ox < c.ox1; ++ox) {
        const size_t out = (c.e * g.positions() + oy * g.out_w + ox) * g.channels + c.ch;
        sum += dy[out] * w[window_index(g, c, oy, ox) * g.channels + c.ch];
      }
    dx[i] = sum;
  }
}

constexpr int weight_chunk_rows = 256; // output rows (example, position) per partial sum

// partial[chunk][j] for filter value j = (ky, kx, ch): the sum over the chunk's output rows.
__global__ void depthwise_weight_partials(window_geometry g, int rows, const float* x, const float* dy, double* partial) {
  const int filters = g.k_h * g.k_w * g.channels;
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= filters)
    return;
  const int ch = j % g.channels, k = j / g.channels, ky = k / g.k_w, kx = k % g.k_w;
  const int first = blockIdx.y * weight_chunk_rows, last = min(rows, first + weight_chunk_rows);
  double sum = 0.0;
  for (int r = first; r < last; ++r) {
    const int pos = r % g.positions();
    const size_t e = static_cast<size_t>(r / g.positions());
    const int yy = (pos / g.out_w) * g.stride - g.pad_top + ky, xx = (pos % g.out_w) * g.stride - g.pad_left + kx;
    if (yy >= 0 && yy < g.in_h && xx >= 0 && xx < g.in_w)
      sum += static_cast<double>(x[e * g.in_size() + (static_cast<size_t>(yy) * g.in_w + xx) * g.channels + ch])
             * dy[static_cast<size_t>(r) * g.channels + ch];
  }
  partial[static_cast<size_t>(blockIdx.y) * filters + j] = sum;
}

__global__ void depthwise_weight_totals(const double* partial, int chunks, int filters, float* dw) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= filters)
    return;
  double sum = 0.0;
  for (int k = 0; k < chunks; ++k)
    sum += partial[static_cast<size_t>(k) * filters + j];
  dw[j] = static_cast<float>(sum);
}

int weight_chunks(const window_geometry& g, int n) {
  return (n * g.positions() + weight_chunk_rows - 1) / weight_chunk_rows;
}

} // namespace

cudaError_t launch_depthwise(const window_geometry& g, int n, const float* x, const float* w, float* y, cudaStream_t s) {
  size_t total = static_cast<size_t>(n) * g.positions() * g.channels;
  if (total > 0)
    depthwise_kernel<<<grid_for(total), block_threads, 0, s>>>(g, total, x, w, y);
  return cudaGetLastError();
}

cudaError_t launch_depthwise_backward_input(const window_geometry& g, int n, const float* dy, const float* w, float* dx,
                                            cudaStream_t s) {
  size_t total = static_cast<size_t>(n) * g.in_size();
  if (total > 0)
    depthwise_backward_input_kernel<<<grid_for(total), block_threads, 0, s>>>(g, total, dy, w, dx);
  return cudaGetLastError();
}

size_t depthwise_weights_scratch(const window_geometry& g, int n) {
  return static_cast<size_t>(weight_chunks(g, n)) * g.k_h * g.k_w * g.channels;
}

cudaError_t launch_depthwise_backward_weights(const window_geometry& g, int n, const float* x, const float* dy,
                                              float* dw, double* scratch, cudaStream_t s) {
  const int filters = g.k_h * g.k_w * g.channels, chunks = weight_chunks(g, n);
  if (filters == 0 || chunks == 0)
    return cudaSuccess;
  const unsigned blocks = static_cast<unsigned>((filters + 127) / 128);
  depthwise_weight_partials<<<dim3(blocks, static_cast<unsigned>(chunks)), 128, 0, s>>>(g, n * g.positions(), x, dy, scratch);
  depthwise_weight_totals<<<blocks, 128, 0, s>>>(scratch, chunks, filters, dw);
  return cudaGetLastError();
}

cudaError_t launch_im2col(const window_geometry& g, int n, const float* x, float* col, cudaStream_t s) {
  size_t total = static_cast<size_t>(n) * g.positions() * g.window_size();
  if (total > 0)
    im2col_kernel<<<grid_for(total), block_threads, 0, s>>>(g, total, x, col);
  return cudaGetLastError();
}

cudaError_t launch_col2im(const window_geometry& g, int n, const float* col, float* dx, cudaStream_t s) {
  size_t total = static_cast<size_t>(n) * g.in_size();
  if (total > 0)
    col2im_kernel<<<grid_for(total), block_threads, 0, s>>>(g, total, col, dx);
  return cudaGetLastError();
}

cudaError_t launch_maxpool(const window_geometry& g, int n, const float* x, float* y, float* argmax,
                           cudaStream_t s) {
  size_t total = static_cast<size_t>(n) * g.positions() * g.channels;
  if (total > 0)
    maxpool_kernel<<<grid_for(total), block_threads, 0, s>>>(g, total, x, y, argmax);
  return cudaGetLastError();
}

cudaError_t launch_maxpool_backward(const window_geometry& g, int n, const float* dy,
                                    const float* argmax, float* dx, cudaStream_t s) {
  size_t total = static_cast<size_t>(n) * g.in_size();
  if (total > 0)
    maxpool_backward_kernel<<<grid_for(total), block_threads, 0, s>>>(g, total, dy, argmax, dx);
  return cudaGetLastError();
}

} // namespace actorps::gpu
