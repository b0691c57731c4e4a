// Tests of compute/direct_conv against im2col's definition (im2col_host, then double-precision
// products): forward, the filter gradient with beta 0 (dw never read) and 1, and the input
// gradient by both of its routes (stride 1: the turned filters; strides 2 and padding as wide as
// the window: the folded columns), at geometries with and without padding, odd sizes, chunks of
// examples, and channel counts on both sides of the products' blocking. On a CPU without
// AVX-512 the cases say so and check nothing.
#include "compute/direct_conv.hpp"

#include "compute/avx512_gemm.hpp"
#include "compute/window_ops.hpp"

#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <vector>

using namespace actorps;
using actorps::test::random_values;

namespace {

struct conv_case {
  int h, w, c, k, stride, pad, cout, n;
  int after = -1; // the padding below and right (-1: as much as before)
};

window_geometry geometry(const conv_case& t) {
  window_geometry g;
  g.in_h = t.h;
  g.in_w = t.w;
  g.channels = t.c;
  g.k_h = g.k_w = t.k;
  g.stride = t.stride;
  g.pad_top = g.pad_left = t.pad;
  const int after = t.after < 0 ? t.pad : t.after;
  g.out_h = (t.h + t.pad + after - t.k) / t.stride + 1;
  g.out_w = (t.w + t.pad + after - t.k) / t.stride + 1;
  return g;
}

// Counts the elements of got farther from want than float rounding over k terms allows.
int wrong(const std::vector<double>& want, const std::vector<float>& got, int k) {
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= 1e-4 * (1.0 + std::sqrt(static_cast<double>(k)))))
      ++bad;
  return bad;
}

void check(const conv_case& t) {
  BOOST_TEST_CONTEXT("input " << t.h << "x" << t.w << "x" << t.c << ", window " << t.k << " stride " << t.stride
                              << " pad " << t.pad << ", " << t.cout << " filters, " << t.n << " examples") {
    const window_geometry g = geometry(t);
    BOOST_REQUIRE(g.valid());
    const int m = t.n * g.positions(), ws = g.window_size();
    const auto x = random_values(static_cast<size_t>(t.n) * g.in_size(), 1);
    const auto w = random_values(static_cast<size_t>(ws) * t.cout, 2);
    const auto dy = random_values(static_cast<size_t>(m) * t.cout, 3);
    std::vector<float> cols(static_cast<size_t>(m) * ws);
    im2col_host(g, t.n, x.data(), cols.data());
    std::vector<double> y_want(static_cast<size_t>(m) * t.cout, 0.0), dw_want(static_cast<size_t>(ws) * t.cout, 0.0),
        dcols(static_cast<size_t>(m) * ws, 0.0);
    for (int i = 0; i < m; ++i)
      for (int p = 0; p < ws; ++p)
        for (int o = 0; o < t.cout; ++o) {
          const double col = cols[static_cast<size_t>(i) * ws + p], wv = w[static_cast<size_t>(p) * t.cout + o],
                       d = dy[static_cast<size_t>(i) * t.cout + o];
          y_want[static_cast<size_t>(i) * t.cout + o] += col * wv;
          dw_want[static_cast<size_t>(p) * t.cout + o] += col * d;
          dcols[static_cast<size_t>(i) * ws + p] += d * wv;
        }
    // dx: every column entry into the input cell its window read (none for padding cells)
    std::vector<double> dx_want(static_cast<size_t>(t.n) * g.in_size(), 0.0);
    for (int i = 0; i < m; ++i) {
      const int e = i / g.positions(), oy = i % g.positions() / g.out_w, ox = i % g.out_w;
      for (int p = 0; p < ws; ++p) {
        const int ky = p / (t.k * t.c), kx = p / t.c % t.k, ch = p % t.c;
        const int yy = oy * t.stride - t.pad + ky, xx = ox * t.stride - t.pad + kx;
        if (yy >= 0 && yy < t.h && xx >= 0 && xx < t.w)
          dx_want[e * g.in_size() + (static_cast<size_t>(yy) * t.w + xx) * t.c + ch] += dcols[static_cast<size_t>(i) * ws + p];
      }
    }

    actorps::direct_conv conv;
    std::vector<float> y(y_want.size(), std::numeric_limits<float>::quiet_NaN());
    conv.forward(g, t.n, x.data(), w.data(), t.cout, y.data());
    BOOST_TEST(wrong(y_want, y, ws) == 0);

    std::vector<float> dw(dw_want.size(), std::numeric_limits<float>::quiet_NaN()); // beta 0: never read
    std::vector<float> dx(dx_want.size(), std::numeric_limits<float>::quiet_NaN());
    conv.backward(g, t.n, x.data(), dy.data(), w.data(), t.cout, 0.0f, dw.data(), dx.data());
    BOOST_TEST(wrong(dw_want, dw, m) == 0);
    BOOST_TEST(wrong(dx_want, dx, ws) == 0);

    // beta 1 adds to dw; no dx asked, none written
    std::vector<float> twice = dw;
    conv.backward(g, t.n, x.data(), dy.data(), w.data(), t.cout, 1.0f, twice.data(), nullptr);
    std::vector<double> doubled(dw_want);
    for (auto& v : doubled)
      v *= 2.0;
    BOOST_TEST(wrong(doubled, twice, 2 * m) == 0);

    // the same bits again (scratch reused)
    std::vector<float> again(y.size());
    conv.forward(g, t.n, x.data(), w.data(), t.cout, again.data());
    BOOST_TEST((again == y));
    BOOST_TEST(conv.bytes() > 0u);
  }
}

} // namespace

BOOST_AUTO_TEST_SUITE(direct_conv)

BOOST_AUTO_TEST_CASE(direct_convolution_matches_im2col_and_products) {
  if (!avx512_gemm_available()) {
    BOOST_TEST_MESSAGE("this CPU has no AVX-512: direct_conv is not used here, nothing to check");
    return;
  }
  const conv_case cases[] = {
    {7, 7, 16, 3, 1, 1, 16, 3},  // resnet20's 3x3 same, narrow products (row kernel)
    {6, 5, 32, 3, 1, 1, 32, 2},  // 32 filters
    {5, 6, 20, 3, 1, 1, 64, 2},  // wide products (packed slivers), channels off the blocking
    {9, 9, 16, 3, 2, 1, 32, 2},  // stride 2: the folded column gradient
    {8, 8, 16, 1, 2, 0, 32, 3},  // 1x1 projection, stride 2, no padding: windows read the input itself
    {6, 6, 8, 1, 1, 0, 24, 2},   // 1x1 stride 1
    {9, 8, 3, 5, 1, 0, 17, 2},   // 5x5 valid
    {7, 7, 4, 5, 1, 2, 40, 2},   // 5x5 same, 40 filters
    {5, 5, 2, 3, 1, 3, 5, 1, 0}, // padding (above and left) as wide as the window: folded columns
    {30, 30, 16, 3, 1, 1, 16, 6} // several chunks of examples
  };
  for (const auto& t : cases)
    check(t);
}

BOOST_AUTO_TEST_CASE(no_examples_give_a_zero_filter_gradient) {
  if (!avx512_gemm_available()) {
    BOOST_TEST_MESSAGE("no AVX-512 on this CPU: nothing to check");
    return;
  }
  const window_geometry g = geometry({5, 5, 8, 3, 1, 1, 4, 0});
  std::vector<float> w(static_cast<size_t>(g.window_size()) * 4, 1.0f), dw(w.size(), 7.0f);
  actorps::direct_conv conv;
  conv.backward(g, 0, nullptr, nullptr, w.data(), 4, 0.0f, dw.data(), nullptr);
  BOOST_TEST((dw == std::vector<float>(w.size(), 0.0f)));
}

BOOST_AUTO_TEST_SUITE_END()
