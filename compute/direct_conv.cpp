// A convolution as one product whose A is implicit: output row (example, oy, ox) reads, for each
// kernel row ky, k_w * channels consecutive floats of the padded image from row oy * stride + ky,
// column ox * stride (NHWC keeps a window row's cells and channels side by side). The filter
// gradient takes one product per kernel row (A transposed is read in place a sliver at a time).
// Examples go in chunks whose padded images stay in the cache.
#include "compute/direct_conv.hpp"

#include "compute/avx512_gemm.hpp"
#include "compute/window_ops.hpp"

#include <algorithm>

namespace actorps {

namespace {

constexpr size_t chunk_floats = size_t{1} << 16;   // 256 KiB of padded images per chunk
constexpr size_t columns_floats = size_t{1} << 17; // 512 KiB of columns (input gradient, stride > 1)

// n images of height x width x channels: the input with zeros around it, or the input itself.
struct padded_images {
  const float* data;
  int height, width, channels;
  size_t image() const { return static_cast<size_t>(height) * width * channels; }
};

// Images of h x w x c placed at (top, left) in height x width images of zeros (the input itself
// when it needs no zeros: the windows stay inside it).
padded_images pad(const float* x, int n, int h, int w, int c, int top, int left, int height, int width,
                  std::vector<float>& scratch) {
  if (top == 0 && left == 0 && height <= h && width <= w)
    return {x, h, w, c};
  padded_images out{nullptr, height, width, c};
  scratch.resize(static_cast<size_t>(n) * out.image());
  const int rows = std::min(h, height - top), cells = std::min(w, width - left);
  const size_t row_floats = static_cast<size_t>(width) * c;
  for (int e = 0; e < n; ++e) { // the image's rows at (top, left), zeros around them (only there)
    float* image = scratch.data() + e * out.image();
    std::fill(image, image + top * row_floats, 0.0f);
    for (int y = 0; y < rows; ++y) {
      float* row = image + (y + top) * row_floats;
      std::fill(row, row + static_cast<size_t>(left) * c, 0.0f);
      std::copy_n(x + ((static_cast<size_t>(e) * h + y) * w) * c, static_cast<size_t>(cells) * c, row + left * c);
      std::fill(row + static_cast<size_t>(left + cells) * c, row + row_floats, 0.0f);
    }
    std::fill(image + (top + rows) * row_floats, image + out.image(), 0.0f);
  }
  out.data = scratch.data();
  return out;
}

// The windows' first cells: rows[(e * out_h + oy) * out_w + ox] for n examples.
void list_windows(const padded_images& p, int n, int out_h, int out_w, int stride, std::vector<const float*>& rows) {
  rows.resize(static_cast<size_t>(n) * out_h * out_w);
  size_t i = 0;
  for (int e = 0; e < n; ++e)
    for (int oy = 0; oy < out_h; ++oy)
      for (int ox = 0; ox < out_w; ++ox)
        rows[i++] = p.data + e * p.image() + (static_cast<size_t>(oy) * stride * p.width + ox * stride) * p.channels;
}

// Examples per chunk of images of `floats` each.
int chunk_of(size_t floats, size_t budget) {
  return static_cast<int>(std::max<size_t>(1, budget / std::max<size_t>(1, floats)));
}

// How tall and wide the input padded for g's windows is: as far as they reach.
int reach_h(const window_geometry& g) { return (g.out_h - 1) * g.stride + g.k_h; }
int reach_w(const window_geometry& g) { return (g.out_w - 1) * g.stride + g.k_w; }

// Examples per chunk of g's padded inputs.
int input_chunk(const window_geometry& g) {
  return chunk_of(static_cast<size_t>(reach_h(g)) * reach_w(g) * g.channels, chunk_floats);
}

// The padded input the windows of g read.
padded_images pad_input(const window_geometry& g, int n, const float* x, std::vector<float>& scratch) {
  return pad(x, n, g.in_h, g.in_w, g.channels, g.pad_top, g.pad_left, reach_h(g), reach_w(g), scratch);
}

// Calls fn(first, count, padded) for n examples of x in chunks of input_chunk(g): padded holds
// the chunk's padded images, rows their windows' first cells.
template <class Fn>
void for_each_chunk(const window_geometry& g, int n, const float* x, std::vector<float>& padded,
                    std::vector<const float*>& rows, Fn fn) {
  const int per_chunk = input_chunk(g);
  for (int first = 0; first < n; first += per_chunk) {
    const int count = std::min(per_chunk, n - first);
    const padded_images p = pad_input(g, count, x + first * g.in_size(), padded);
    list_windows(p, count, g.out_h, g.out_w, g.stride, rows);
    fn(first, count, p);
  }
}

// c (m x cout) = the windows (k_h kernel rows of run floats from rows[i], step apart) times b.
void windows_times(int k_h, int m, int run, ptrdiff_t step, const std::vector<const float*>& rows, const float* b,
                   int cout, float* c) {
  avx512_sgemm_rows(false, m, cout, k_h * run, 1.0f, rows.data(), 0, run, step, b, cout, 0.0f, c, cout);
}

} // namespace

void direct_conv::forward(const window_geometry& g, int n, const float* x, const float* w, int cout, float* y) {
  for_each_chunk(g, n, x, padded_, rows_, [&](int first, int count, const padded_images& p) {
    windows_times(g.k_h, count * g.positions(), g.k_w * g.channels, static_cast<ptrdiff_t>(p.width) * p.channels,
                  rows_, w, cout, y + static_cast<size_t>(first) * g.positions() * cout);
  });
}

void direct_conv::backward(const window_geometry& g, int n, const float* x, const float* dy, const float* w,
                           int cout, float beta, float* dw, float* dx) {
  const int run = g.k_w * g.channels;
  if (n == 0 && beta == 0.0f) // (the sum over no examples)
    std::fill(dw, dw + static_cast<size_t>(g.window_size()) * cout, 0.0f);
  for_each_chunk(g, n, x, padded_, rows_, [&](int first, int count, const padded_images& p) {
    const float* d = dy + static_cast<size_t>(first) * g.positions() * cout;
    for (int ky = 0; ky < g.k_h; ++ky) // dw's ky-th block of rows = the windows' ky-th rows^T dy
      avx512_sgemm_rows(true, run, cout, count * g.positions(), 1.0f, rows_.data(),
                        static_cast<ptrdiff_t>(ky) * p.width * p.channels, 0, 0, d, cout, first == 0 ? beta : 1.0f,
                        dw + static_cast<size_t>(ky) * run * cout, cout);
  });
  if (dx != nullptr)
    input_gradient(g, n, dy, w, cout, dx);
}

void direct_conv::input_gradient(const window_geometry& g, int n, const float* dy, const float* w, int cout,
                                 float* dx) {
  const int ws = g.window_size();
  if (g.stride != 1 || g.pad_top >= g.k_h || g.pad_left >= g.k_w) { // the column gradient, folded back
    const int per_chunk = chunk_of(static_cast<size_t>(g.positions()) * ws, columns_floats);
    columns_.resize(static_cast<size_t>(std::min(per_chunk, n)) * g.positions() * ws);
    for (int first = 0; first < n; first += per_chunk) {
      const int count = std::min(per_chunk, n - first);
      avx512_sgemm(false, true, count * g.positions(), ws, cout, 1.0f,
                   dy + static_cast<size_t>(first) * g.positions() * cout, cout, w, cout, 0.0f, columns_.data(), ws);
      col2im_host(g, count, columns_.data(), dx + first * g.in_size());
    }
    return;
  }
  // dx[y, x] = sum over (ky, kx) of dy[y + pad_top - ky, x + pad_left - kx] w[ky, kx]: a stride-1
  // convolution of dy, padded by k - 1 - pad before, with the filters turned (ky -> k_h - 1 - ky,
  // kx likewise) and transposed (cout in, channels out).
  turned_.resize(static_cast<size_t>(ws) * cout);
  for (int ky = 0; ky < g.k_h; ++ky)
    for (int kx = 0; kx < g.k_w; ++kx)
      for (int co = 0; co < cout; ++co)
        for (int ci = 0; ci < g.channels; ++ci)
          turned_[((static_cast<size_t>(ky) * g.k_w + kx) * cout + co) * g.channels + ci] =
              w[((static_cast<size_t>(g.k_h - 1 - ky) * g.k_w + (g.k_w - 1 - kx)) * g.channels + ci) * cout + co];
  const int height = g.in_h + g.k_h - 1, width = g.in_w + g.k_w - 1;
  const int per_chunk = chunk_of(static_cast<size_t>(height) * width * cout, chunk_floats);
  for (int first = 0; first < n; first += per_chunk) {
    const int count = std::min(per_chunk, n - first);
    const padded_images p = pad(dy + static_cast<size_t>(first) * g.positions() * cout, count, g.out_h, g.out_w, cout,
                                g.k_h - 1 - g.pad_top, g.k_w - 1 - g.pad_left, height, width, padded_);
    list_windows(p, count, g.in_h, g.in_w, 1, rows_);
    windows_times(g.k_h, count * g.in_h * g.in_w, g.k_w * cout, static_cast<ptrdiff_t>(p.width) * p.channels, rows_,
                  turned_.data(), g.channels, dx + first * g.in_size());
  }
}

size_t direct_conv::bytes() const {
  return (padded_.capacity() + turned_.capacity() + columns_.capacity()) * sizeof(float)
         + rows_.capacity() * sizeof(const float*);
}

} // namespace actorps
