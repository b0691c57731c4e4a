// The window ops walk each output position's window row by row: for one (position, window row)
// the cells inside the image are one contiguous run of NHWC floats in the input and one
// contiguous run in the im2col row, so im2col and col2im move whole runs (k_w * channels floats)
// and pooling loops over channels innermost; every inner loop is branch-free and vectorises.
#include "compute/window_ops.hpp"

#include "common/vector_clones.hpp"

#include "compute/fast_math.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace actorps {

namespace {

// One window row of one output position: input row y (inside the image), window cells
// [kx_begin, kx_end) inside the image, starting at input column x_begin.
struct window_run {
  int pos;
  int ky;
  int y;
  int kx_begin;
  int kx_end;
  int x_begin;
};

// Calls on_border(pos) for every output position of one example whose window leaves the image,
// then fn(run) for each of its window rows that lies inside the image and has at least one cell
// inside; rows and cells in the padding are skipped.
template <class Border, class Fn>
void for_each_window_run(const window_geometry& g, Border&& on_border, Fn&& fn) {
  for (int oy = 0; oy < g.out_h; ++oy) {
    const int y0 = oy * g.stride - g.pad_top;
    const bool rows_inside = y0 >= 0 && y0 + g.k_h <= g.in_h;
    for (int ox = 0; ox < g.out_w; ++ox) {
      const int pos = oy * g.out_w + ox;
      const int x0 = ox * g.stride - g.pad_left;
      const int kx_begin = std::max(0, -x0);
      const int kx_end = std::min(g.k_w, g.in_w - x0);
      if (!rows_inside || kx_begin > 0 || kx_end < g.k_w)
        on_border(pos);
      if (kx_begin >= kx_end)
        continue;
      for (int ky = 0; ky < g.k_h; ++ky) {
        const int y = y0 + ky;
        if (y >= 0 && y < g.in_h)
          fn(window_run{pos, ky, y, kx_begin, kx_end, x0 + kx_begin});
      }
    }
  }
}

template <class Fn>
void for_each_window_run(const window_geometry& g, Fn&& fn) {
  for_each_window_run(g, [](int) {}, fn);
}

// Whether every input cell lies in exactly one window (stride = window, no padding, the output
// covering the input exactly): then pooling's gradient can be written without clearing first.
bool windows_tile(const window_geometry& g) {
  return g.stride == g.k_h && g.stride == g.k_w && g.pad_top == 0 && g.pad_left == 0
         && g.out_h * g.stride == g.in_h && g.out_w * g.stride == g.in_w;
}

// Short runs (the first conv layer's runs are 3 floats) copy inline: a memcpy call per run
// would cost more than the copy.
void copy_run(const float* src, size_t n, float* dst) {
  if (n < 16) {
    for (size_t i = 0; i < n; ++i)
      dst[i] = src[i];
  } else {
    std::memcpy(dst, src, n * sizeof(float));
  }
}

ACTORPS_VECTOR_CLONES
void add_run(const float* __restrict src, size_t n, float* __restrict dst) {
  for (size_t i = 0; i < n; ++i)
    dst[i] += src[i];
}

ACTORPS_VECTOR_CLONES
void max_run(const float* __restrict src, int n, float k, float* __restrict best,
             float* __restrict arg) {
  for (int i = 0; i < n; ++i) {
    bool wins = src[i] > best[i];
    best[i] = wins ? src[i] : best[i];
    arg[i] = wins ? k : arg[i];
  }
}

// dst[i] (+)= (arg[i] == k ? grad[i] : 0): the gradient of one window cell, added when windows
// overlap, written when they tile.
ACTORPS_VECTOR_CLONES
void route_run(const float* __restrict grad, const float* __restrict arg, float k, int n,
               bool accumulate, float* __restrict dst) {
  if (accumulate) {
    for (int i = 0; i < n; ++i)
      dst[i] += arg[i] == k ? grad[i] : 0.0f;
  } else {
    for (int i = 0; i < n; ++i)
      dst[i] = arg[i] == k ? grad[i] : 0.0f;
  }
}

void route_gradient(const window_geometry& g, int n, const float* dy, const float* argmax,
                    bool accumulate, float* dx) {
  const int c = g.channels;
  const size_t out_size = static_cast<size_t>(g.positions()) * c;
  for (int e = 0; e < n; ++e) {
    float* image = dx + static_cast<size_t>(e) * g.in_size();
    const float* grad = dy + e * out_size;
    const float* arg = argmax + e * out_size;
    for_each_window_run(g, [&](const window_run& r) {
      const float* gp = grad + static_cast<size_t>(r.pos) * c;
      const float* ap = arg + static_cast<size_t>(r.pos) * c;
      float* cell = image + (static_cast<size_t>(r.y) * g.in_w + r.x_begin) * c;
      for (int kx = r.kx_begin; kx < r.kx_end; ++kx, cell += c)
        route_run(gp, ap, static_cast<float>(r.ky * g.k_w + kx), c, accumulate, cell);
    });
  }
}

} // namespace

void im2col_host(const window_geometry& g, int n, const float* x, float* col) {
  const size_t c = static_cast<size_t>(g.channels);
  const size_t ws = static_cast<size_t>(g.window_size());
  for (int e = 0; e < n; ++e) {
    const float* image = x + static_cast<size_t>(e) * g.in_size();
    float* out = col + static_cast<size_t>(e) * g.positions() * ws;
    // Padding cells are 0: only the rows of positions whose window leaves the image are cleared.
    auto clear_row = [&](int pos) { std::fill(out + pos * ws, out + (pos + 1) * ws, 0.0f); };
    for_each_window_run(g, clear_row, [&](const window_run& r) {
      copy_run(image + (static_cast<size_t>(r.y) * g.in_w + r.x_begin) * c,
               static_cast<size_t>(r.kx_end - r.kx_begin) * c,
               out + r.pos * ws + (static_cast<size_t>(r.ky) * g.k_w + r.kx_begin) * c);
    });
  }
}

void col2im_host(const window_geometry& g, int n, const float* col, float* dx) {
  const size_t c = static_cast<size_t>(g.channels);
  const size_t ws = static_cast<size_t>(g.window_size());
  std::fill(dx, dx + static_cast<size_t>(n) * g.in_size(), 0.0f);
  for (int e = 0; e < n; ++e) {
    float* image = dx + static_cast<size_t>(e) * g.in_size();
    const float* rows = col + static_cast<size_t>(e) * g.positions() * ws;
    for_each_window_run(g, [&](const window_run& r) {
      add_run(rows + r.pos * ws + (static_cast<size_t>(r.ky) * g.k_w + r.kx_begin) * c,
              static_cast<size_t>(r.kx_end - r.kx_begin) * c,
              image + (static_cast<size_t>(r.y) * g.in_w + r.x_begin) * c);
    });
  }
}

void maxpool_host(const window_geometry& g, int n, const float* x, float* y, float* argmax) {
  const int c = g.channels;
  const size_t out_size = static_cast<size_t>(g.positions()) * c;
  std::fill(y, y + n * out_size, -std::numeric_limits<float>::infinity());
  std::fill(argmax, argmax + n * out_size, 0.0f);
  for (int e = 0; e < n; ++e) {
    const float* image = x + static_cast<size_t>(e) * g.in_size();
    float* out = y + e * out_size;
    float* arg = argmax + e * out_size;
    for_each_window_run(g, [&](const window_run& r) {
      const float* cell = image + (static_cast<size_t>(r.y) * g.in_w + r.x_begin) * c;
      for (int kx = r.kx_begin; kx < r.kx_end; ++kx, cell += c)
        max_run(cell, c, static_cast<float>(r.ky * g.k_w + kx), out + static_cast<size_t>(r.pos) * c,
                arg + static_cast<size_t>(r.pos) * c);
    });
  }
}

void maxpool_backward_host(const window_geometry& g, int n, const float* dy, const float* argmax,
                           float* dx) {
  if (windows_tile(g)) {
    route_gradient(g, n, dy, argmax, false, dx);
    return;
  }
  std::fill(dx, dx + static_cast<size_t>(n) * g.in_size(), 0.0f);
  route_gradient(g, n, dy, argmax, true, dx);
}

namespace {

// out[0, c) += a[0, c) * b[0, c) (a run of channels: vectorised).
ACTORPS_VECTOR_CLONES
void multiply_add_run(const float* a, const float* b, int c, float* out) {
  for (int i = 0; i < c; ++i)
    out[i] += a[i] * b[i];
}

} // namespace

void depthwise_host(const window_geometry& g, int n, const float* x, const float* w, float* y) {
  const int c = g.channels;
  const size_t out_size = static_cast<size_t>(g.positions()) * c;
  std::fill(y, y + n * out_size, 0.0f);
  for (int e = 0; e < n; ++e) {
    const float* image = x + static_cast<size_t>(e) * g.in_size();
    float* out = y + e * out_size;
    for_each_window_run(g, [&](const window_run& r) {
      const float* cell = image + (static_cast<size_t>(r.y) * g.in_w + r.x_begin) * c;
      const float* filter = w + (static_cast<size_t>(r.ky) * g.k_w + r.kx_begin) * c;
      for (int kx = r.kx_begin; kx < r.kx_end; ++kx, cell += c, filter += c)
        multiply_add_run(cell, filter, c, out + static_cast<size_t>(r.pos) * c);
    });
  }
}

void depthwise_backward_input_host(const window_geometry& g, int n, const float* dy, const float* w, float* dx) {
  const int c = g.channels;
  const size_t out_size = static_cast<size_t>(g.positions()) * c;
  std::fill(dx, dx + static_cast<size_t>(n) * g.in_size(), 0.0f);
  for (int e = 0; e < n; ++e) {
    float* image = dx + static_cast<size_t>(e) * g.in_size();
    const float* grad = dy + e * out_size;
    for_each_window_run(g, [&](const window_run& r) {
      float* cell = image + (static_cast<size_t>(r.y) * g.in_w + r.x_begin) * c;
      const float* filter = w + (static_cast<size_t>(r.ky) * g.k_w + r.kx_begin) * c;
      for (int kx = r.kx_begin; kx < r.kx_end; ++kx, cell += c, filter += c)
        multiply_add_run(grad + static_cast<size_t>(r.pos) * c, filter, c, cell);
    });
  }
}

void depthwise_backward_weights_host(const window_geometry& g, int n, const float* x, const float* dy, float* dw) {
  const int c = g.channels;
  const size_t out_size = static_cast<size_t>(g.positions()) * c;
  std::fill(dw, dw + static_cast<size_t>(g.k_h) * g.k_w * c, 0.0f);
  for (int e = 0; e < n; ++e) {
    const float* image = x + static_cast<size_t>(e) * g.in_size();
    const float* grad = dy + e * out_size;
    for_each_window_run(g, [&](const window_run& r) {
      const float* cell = image + (static_cast<size_t>(r.y) * g.in_w + r.x_begin) * c;
      float* filter = dw + (static_cast<size_t>(r.ky) * g.k_w + r.kx_begin) * c;
      for (int kx = r.kx_begin; kx < r.kx_end; ++kx, cell += c, filter += c)
        multiply_add_run(cell, grad + static_cast<size_t>(r.pos) * c, c, filter);
    });
  }
}

} // namespace actorps
