// im2col copies runs of `channels` contiguous floats (NHWC keeps a pixel's channels together);
// pooling loops over channels innermost, so both vectorise.
#include "compute/window_ops.hpp"

#include "compute/fast_math.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace actorps {

namespace {

// Calls fn(out_index, y, x, k) for every output position and window cell of one example whose
// input cell (y, x) lies inside the image; k is the cell's index in the window.
template <class Fn>
void for_each_window_cell(const window_geometry& g, Fn&& fn) {
  for (int oy = 0; oy < g.out_h; ++oy)
    for (int ox = 0; ox < g.out_w; ++ox) {
      const int pos = oy * g.out_w + ox;
      for (int ky = 0; ky < g.k_h; ++ky) {
        const int y = oy * g.stride - g.pad_top + ky;
        for (int kx = 0; kx < g.k_w; ++kx) {
          const int x = ox * g.stride - g.pad_left + kx;
          fn(pos, y, x, ky * g.k_w + kx, y >= 0 && y < g.in_h && x >= 0 && x < g.in_w);
        }
      }
    }
}

ACTORPS_VECTOR_CLONES
void add_run(const float* src, int n, float* dst) {
  for (int i = 0; i < n; ++i)
    dst[i] += src[i];
}

ACTORPS_VECTOR_CLONES
void max_run(const float* src, int n, float k, float* best, float* arg) {
  for (int i = 0; i < n; ++i) {
    bool wins = src[i] > best[i];
    best[i] = wins ? src[i] : best[i];
    arg[i] = wins ? k : arg[i];
  }
}

} // namespace

void im2col_host(const window_geometry& g, int n, const float* x, float* col) {
  const int c = g.channels;
  const size_t run = static_cast<size_t>(c) * sizeof(float);
  for (int e = 0; e < n; ++e) {
    const float* image = x + static_cast<size_t>(e) * g.in_size();
    float* rows = col + static_cast<size_t>(e) * g.positions() * g.window_size();
    for_each_window_cell(g, [&](int pos, int y, int xx, int k, bool inside) {
      float* dst = rows + static_cast<size_t>(pos) * g.window_size() + static_cast<size_t>(k) * c;
      const float* src = inside ? image + (static_cast<size_t>(y) * g.in_w + xx) * c : image;
      if (c < 8) { // a call to memcpy per pixel would cost more than the copy (the first layer: c = 1)
        for (int i = 0; i < c; ++i)
          dst[i] = inside ? src[i] : 0.0f;
      } else if (inside) {
        std::memcpy(dst, src, run);
      } else {
        std::memset(dst, 0, run);
      }
    });
  }
}

void col2im_host(const window_geometry& g, int n, const float* col, float* dx) {
  const int c = g.channels;
  std::fill(dx, dx + static_cast<size_t>(n) * g.in_size(), 0.0f);
  for (int e = 0; e < n; ++e) {
    float* image = dx + static_cast<size_t>(e) * g.in_size();
    const float* rows = col + static_cast<size_t>(e) * g.positions() * g.window_size();
    for_each_window_cell(g, [&](int pos, int y, int xx, int k, bool inside) {
      if (inside)
        add_run(rows + static_cast<size_t>(pos) * g.window_size() + static_cast<size_t>(k) * c, c,
                image + (static_cast<size_t>(y) * g.in_w + xx) * c);
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
    for_each_window_cell(g, [&](int pos, int yy, int xx, int k, bool inside) {
      if (inside)
        max_run(image + (static_cast<size_t>(yy) * g.in_w + xx) * c, c, static_cast<float>(k),
                out + static_cast<size_t>(pos) * c, arg + static_cast<size_t>(pos) * c);
    });
  }
}

void maxpool_backward_host(const window_geometry& g, int n, const float* dy, const float* argmax,
                           float* dx) {
  const int c = g.channels;
  const size_t out_size = static_cast<size_t>(g.positions()) * c;
  std::fill(dx, dx + static_cast<size_t>(n) * g.in_size(), 0.0f);
  for (int e = 0; e < n; ++e) {
    float* image = dx + static_cast<size_t>(e) * g.in_size();
    const float* grad = dy + e * out_size;
    const float* arg = argmax + e * out_size;
    for_each_window_cell(g, [&](int pos, int yy, int xx, int k, bool inside) {
      if (!inside)
        return;
      float* cell = image + (static_cast<size_t>(yy) * g.in_w + xx) * c;
      const float* gp = grad + static_cast<size_t>(pos) * c;
      const float* ap = arg + static_cast<size_t>(pos) * c;
      const float kf = static_cast<float>(k);
      for (int i = 0; i < c; ++i)
        cell[i] += ap[i] == kf ? gp[i] : 0.0f;
    });
  }
}

} // namespace actorps
