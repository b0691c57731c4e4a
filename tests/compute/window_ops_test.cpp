// Tests of compute/window_ops through the CPU backend: convolution by im2col + gemm against a
// direct (naive) convolution, col2im as im2col's adjoint, max pooling and its gradient against
// naive loops, dropout's mask, and invalid geometries recorded as errors.
#include "compute/cpu_backend.hpp"
#include "compute/dropout_mask.hpp"
#include "common/errc.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>

using namespace actorps;
using actorps::test::random_values;

namespace {

// Geometry like the model's: out = ceil(in / stride) with same padding, else (in - k) / stride + 1.
window_geometry make(int h, int w, int c, int k, int stride, bool same) {
  window_geometry g;
  g.in_h = h;
  g.in_w = w;
  g.channels = c;
  g.k_h = g.k_w = k;
  g.stride = stride;
  auto side = [&](int in, int& out, int& pad) {
    out = same ? (in + stride - 1) / stride : (in - k) / stride + 1;
    int total = (out - 1) * stride + k - in;
    pad = same && total > 0 ? total / 2 : 0;
  };
  side(h, g.out_h, g.pad_top);
  side(w, g.out_w, g.pad_left);
  return g;
}

float at(const std::vector<float>& x, const window_geometry& g, int e, int y, int xx, int c) {
  if (y < 0 || y >= g.in_h || xx < 0 || xx >= g.in_w)
    return 0.0f;
  return x[e * g.in_size() + (static_cast<size_t>(y) * g.in_w + xx) * g.channels + c];
}

struct fixture {
  std::unique_ptr<backend> be = make_cpu_backend(1);

  buffer put(const std::vector<float>& v) {
    auto b = std::move(*be->allocate(v.size()));
    be->upload(v.data(), v.size(), b.data());
    return b;
  }

  std::vector<float> get(const buffer& b) {
    std::vector<float> out(b.size());
    BOOST_REQUIRE(!be->download(b.data(), b.size(), out.data()));
    return out;
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(window_ops, fixture)

BOOST_AUTO_TEST_CASE(im2col_and_gemm_equal_a_direct_convolution) {
  const int n = 2, cout = 3;
  for (auto [h, k, stride, same] : {std::tuple{5, 3, 1, true}, std::tuple{6, 3, 2, true},
                                    std::tuple{7, 2, 2, false}, std::tuple{5, 4, 1, true}}) {
    auto g = make(h, h + 1, 2, k, stride, same);
    BOOST_REQUIRE(g.valid());
    auto x = random_values(n * g.in_size(), 3, -1.0f, 1.0f);
    auto w = random_values(static_cast<size_t>(g.window_size()) * cout, 4, -1.0f, 1.0f);
    auto xb = put(x), wb = put(w);
    auto col = std::move(*be->allocate(static_cast<size_t>(n) * g.positions() * g.window_size()));
    auto y = std::move(*be->allocate(static_cast<size_t>(n) * g.positions() * cout));
    be->im2col(g, n, xb.data(), col.data());
    be->gemm(false, false, 1.0f, col.as_matrix(n * g.positions(), g.window_size()),
             wb.as_matrix(g.window_size(), cout), 0.0f, y.as_matrix(n * g.positions(), cout));
    auto got = get(y);
    for (int e = 0; e < n; ++e)
      for (int oy = 0; oy < g.out_h; ++oy)
        for (int ox = 0; ox < g.out_w; ++ox)
          for (int co = 0; co < cout; ++co) {
            double want = 0;
            for (int ky = 0; ky < k; ++ky)
              for (int kx = 0; kx < k; ++kx)
                for (int ci = 0; ci < g.channels; ++ci)
                  want += double(at(x, g, e, oy * stride - g.pad_top + ky, ox * stride - g.pad_left + kx, ci))
                          * w[((ky * k + kx) * g.channels + ci) * cout + co];
            float v = got[((static_cast<size_t>(e) * g.out_h + oy) * g.out_w + ox) * cout + co];
            BOOST_TEST(std::fabs(v - want) < 1e-4, "h " << h << " k " << k << " stride " << stride
                                                       << " at " << e << "," << oy << "," << ox << "," << co);
          }
  }
}

BOOST_AUTO_TEST_CASE(col2im_is_the_adjoint_of_im2col) {
  // <im2col(x), c> == <x, col2im(c)> for every x and c: the backward pass sums what forward copied.
  for (auto [k, stride, same] : {std::tuple{3, 1, true}, std::tuple{3, 2, true}, std::tuple{2, 1, false}}) {
    auto g = make(5, 6, 3, k, stride, same);
    const int n = 2;
    auto x = random_values(n * g.in_size(), 7, -1.0f, 1.0f);
    auto c = random_values(static_cast<size_t>(n) * g.positions() * g.window_size(), 8, -1.0f, 1.0f);
    auto xb = put(x), cb = put(c);
    auto col = std::move(*be->allocate(c.size()));
    auto dx = std::move(*be->allocate(x.size()));
    be->im2col(g, n, xb.data(), col.data());
    be->col2im(g, n, cb.data(), dx.data());
    auto cx = get(col), back = get(dx);
    double lhs = 0, rhs = 0;
    for (size_t i = 0; i < c.size(); ++i)
      lhs += double(cx[i]) * c[i];
    for (size_t i = 0; i < x.size(); ++i)
      rhs += double(x[i]) * back[i];
    BOOST_TEST(lhs == rhs, boost::test_tools::tolerance(1e-5));
  }
}

BOOST_AUTO_TEST_CASE(max_pooling_and_its_gradient_match_naive_loops) {
  // (h, w) = (4, 6) with 2x2 windows of stride 2 tiles the image (every cell in one window: the
  // gradient is written, not accumulated); 5x6 leaves the last row in no window.
  for (auto [h, k, stride, same] : {std::tuple{5, 2, 2, false}, std::tuple{4, 2, 2, false},
                                    std::tuple{5, 3, 2, false}, std::tuple{5, 2, 1, false},
                                    std::tuple{5, 3, 2, true}}) {
    auto g = make(h, 6, 3, k, stride, same);
    const int n = 2;
    auto x = random_values(n * g.in_size(), 9, -1.0f, 1.0f);
    size_t out_n = static_cast<size_t>(n) * g.positions() * g.channels;
    auto dy = random_values(out_n, 10, -1.0f, 1.0f);
    auto xb = put(x), dyb = put(dy);
    auto y = std::move(*be->allocate(out_n)), arg = std::move(*be->allocate(out_n)),
         dx = put(std::vector<float>(x.size(), 7.0f)); // overwritten, never added to
    be->maxpool(g, n, xb.data(), y.data(), arg.data());
    be->maxpool_backward(g, n, dyb.data(), arg.data(), dx.data());
    auto got = get(y), grad = get(dx);
    std::vector<double> want_dx(x.size(), 0.0);
    for (int e = 0; e < n; ++e)
      for (int oy = 0; oy < g.out_h; ++oy)
        for (int ox = 0; ox < g.out_w; ++ox)
          for (int c = 0; c < g.channels; ++c) {
            float best = -std::numeric_limits<float>::infinity();
            size_t where = 0;
            for (int ky = 0; ky < k; ++ky)
              for (int kx = 0; kx < k; ++kx) {
                int yy = oy * stride - g.pad_top + ky, xx = ox * stride - g.pad_left + kx;
                if (yy < 0 || yy >= g.in_h || xx < 0 || xx >= g.in_w)
                  continue;
                size_t i = e * g.in_size() + (static_cast<size_t>(yy) * g.in_w + xx) * g.channels + c;
                if (x[i] > best) {
                  best = x[i];
                  where = i;
                }
              }
            size_t o = ((static_cast<size_t>(e) * g.out_h + oy) * g.out_w + ox) * g.channels + c;
            BOOST_TEST(got[o] == best);
            want_dx[where] += dy[o];
          }
    for (size_t i = 0; i < x.size(); ++i)
      BOOST_TEST(grad[i] == want_dx[i], boost::test_tools::tolerance(1e-6));
  }
}

BOOST_AUTO_TEST_CASE(depthwise_convolution_and_its_gradients_match_naive_loops) {
  auto be = make_cpu_backend(1);
  for (auto g : {make(7, 6, 5, 3, 1, true), make(8, 8, 3, 3, 2, true), make(9, 7, 4, 3, 2, false), make(5, 5, 17, 5, 1, true)}) {
    const int n = 2;
    const size_t in = n * g.in_size(), out = size_t(n) * g.positions() * g.channels, filters = size_t(g.k_h) * g.k_w * g.channels;
    auto xs = random_values(in, 1), ws = random_values(filters, 2), dys = random_values(out, 3);
    std::vector<float> y(out), dx(in, 7.0f), dw(filters, 7.0f); // (overwritten, not added to)
    be->depthwise(g, n, xs.data(), ws.data(), y.data());
    be->depthwise_backward_input(g, n, dys.data(), ws.data(), dx.data());
    be->depthwise_backward_weights(g, n, xs.data(), dys.data(), dw.data());
    BOOST_REQUIRE(!be->sync());
    std::vector<double> want_dx(in, 0.0), want_dw(filters, 0.0);
    for (int e = 0; e < n; ++e)
      for (int oy = 0; oy < g.out_h; ++oy)
        for (int ox = 0; ox < g.out_w; ++ox)
          for (int c = 0; c < g.channels; ++c) {
            double sum = 0;
            const size_t o = ((size_t(e) * g.out_h + oy) * g.out_w + ox) * g.channels + c;
            for (int ky = 0; ky < g.k_h; ++ky)
              for (int kx = 0; kx < g.k_w; ++kx) {
                const int yy = oy * g.stride - g.pad_top + ky, xx = ox * g.stride - g.pad_left + kx;
                const size_t f = (size_t(ky) * g.k_w + kx) * g.channels + c;
                sum += at(xs, g, e, yy, xx, c) * ws[f];
                if (yy >= 0 && yy < g.in_h && xx >= 0 && xx < g.in_w) {
                  want_dx[e * g.in_size() + (size_t(yy) * g.in_w + xx) * g.channels + c] += dys[o] * ws[f];
                  want_dw[f] += at(xs, g, e, yy, xx, c) * dys[o];
                }
              }
            BOOST_TEST(std::fabs(y[o] - sum) <= 1e-5 * (1 + std::fabs(sum)), "y[" << o << "]");
          }
    for (size_t i = 0; i < in; ++i)
      BOOST_TEST(std::fabs(dx[i] - want_dx[i]) <= 1e-5 * (1 + std::fabs(want_dx[i])), "dx[" << i << "]");
    for (size_t i = 0; i < filters; ++i)
      BOOST_TEST(std::fabs(dw[i] - want_dw[i]) <= 1e-4 * (1 + std::fabs(want_dw[i])), "dw[" << i << "]");
  }
}

BOOST_AUTO_TEST_CASE(dropout_keeps_about_one_minus_rate_and_scales_what_it_keeps) {
  const size_t n = 20000;
  std::vector<float> ones(n, 1.0f);
  auto x = put(ones);
  auto y = std::move(*be->allocate(n)), mask = std::move(*be->allocate(n));
  be->dropout(n, 0.25f, 99, x.data(), y.data(), mask.data());
  auto out = get(y), m = get(mask);
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    BOOST_TEST((out[i] == 0.0f || std::fabs(out[i] - 1.0f / 0.75f) < 1e-6f));
    BOOST_TEST(out[i] == m[i]);
    BOOST_TEST(m[i] == dropout_keep_scale(99, i, 0.25f));
    kept += out[i] != 0.0f;
  }
  BOOST_TEST(kept / double(n) == 0.75, boost::test_tools::tolerance(0.02));
  std::vector<float> a = {1, 2, 3}, b = {4, 5, 6};
  auto ab = put(a), bb = put(b);
  be->multiply(3, ab.data(), bb.data(), ab.data());
  BOOST_TEST((get(ab) == std::vector<float>{4, 10, 18}));
}

BOOST_AUTO_TEST_CASE(invalid_geometries_and_rates_are_recorded_not_run) {
  window_geometry g = make(4, 4, 1, 2, 2, false);
  g.out_h = 9; // windows beyond the input
  std::vector<float> x(16, 1.0f);
  auto xb = put(x);
  auto col = std::move(*be->allocate(1024));
  be->im2col(g, 1, xb.data(), col.data());
  auto err = be->sync();
  BOOST_TEST(err == errc::shape_mismatch);
  BOOST_TEST(describe(err).find("im2col: invalid window geometry") != std::string::npos);
  be->dropout(16, 1.0f, 1, xb.data(), xb.data(), col.data());
  BOOST_TEST(describe(be->sync()) == "invalid_argument: dropout: rate 1 is not in [0, 1)");
}

BOOST_AUTO_TEST_SUITE_END()
