// Tests of compute/cpu_backend: every op against naive loops, and shape/label errors.
#include "compute/cpu_backend.hpp"

#include "common/errc.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>

using namespace actorps;
using actorps::test::random_values;

namespace {

struct fixture {
  std::unique_ptr<backend> be = make_cpu_backend(1);

  buffer from(const std::vector<float>& v) {
    auto b = std::move(*be->allocate(v.size()));
    be->upload(v.data(), v.size(), b.data());
    return b;
  }

  std::vector<float> to_host(const buffer& b) {
    std::vector<float> out(b.size());
    BOOST_REQUIRE(!be->download(b.data(), b.size(), out.data()));
    return out;
  }
};

// c = op(a) op(b) in double, row-major.
std::vector<float> naive_gemm(bool ta, bool tb, const std::vector<float>& a, int ar, int ac,
                              const std::vector<float>& b, int br, int bc) {
  int m = ta ? ac : ar, k = ta ? ar : ac, n = tb ? br : bc;
  std::vector<float> c(size_t(m) * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int p = 0; p < k; ++p) {
        double x = ta ? a[size_t(p) * ac + i] : a[size_t(i) * ac + p];
        double y = tb ? b[size_t(j) * bc + p] : b[size_t(p) * bc + j];
        acc += x * y;
      }
      c[size_t(i) * n + j] = static_cast<float>(acc);
    }
  return c;
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(cpu_backend, fixture)

BOOST_AUTO_TEST_CASE(gemm_matches_naive_loop_for_every_transpose) {
  for (auto [m, n, k] : {std::tuple{7, 5, 9}, std::tuple{50, 160, 784}, std::tuple{1, 10, 160}})
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        int ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
        auto a = random_values(size_t(ar) * ac, 1), b = random_values(size_t(br) * bc, 2);
        auto ba = from(a), bb = from(b), bc_ = from(std::vector<float>(size_t(m) * n, 0.5f));
        be->gemm(ta, tb, 1.0f, ba.as_matrix(ar, ac), bb.as_matrix(br, bc), 0.0f, bc_.as_matrix(m, n));
        auto got = to_host(bc_);
        auto want = naive_gemm(ta, tb, a, ar, ac, b, br, bc);
        for (size_t i = 0; i < want.size(); ++i)
          BOOST_TEST(std::fabs(got[i] - want[i]) <= 1e-4f * (1.0f + std::fabs(want[i])),
                     "m=" << m << " n=" << n << " k=" << k << " ta=" << ta << " tb=" << tb << " i=" << i);
      }
}

BOOST_AUTO_TEST_CASE(gemm_alpha_beta) {
  auto a = random_values(6, 3), b = random_values(6, 4), c0 = random_values(4, 5);
  auto ba = from(a), bb = from(b), bc = from(c0);
  be->gemm(false, false, 2.0f, ba.as_matrix(2, 3), bb.as_matrix(3, 2), 0.5f, bc.as_matrix(2, 2));
  auto got = to_host(bc);
  auto ab = naive_gemm(false, false, a, 2, 3, b, 3, 2);
  for (size_t i = 0; i < 4; ++i)
    BOOST_TEST(std::fabs(got[i] - (2.0f * ab[i] + 0.5f * c0[i])) < 1e-5f);
}

BOOST_AUTO_TEST_CASE(gemm_shape_mismatch_is_an_error_and_leaves_c) {
  auto ba = from(random_values(6, 1)), bb = from(random_values(8, 2)), bc = from({1, 2, 3, 4});
  be->gemm(false, false, 1.0f, ba.as_matrix(2, 3), bb.as_matrix(4, 2), 0.0f, bc.as_matrix(2, 2));
  auto err = be->sync();
  BOOST_TEST(err == actorps::errc::shape_mismatch);
  BOOST_TEST(describe(err) == "shape_mismatch: gemm: op(a) is 2x3, op(b) is 4x2, c is 2x2");
  BOOST_TEST(to_host(bc) == std::vector<float>({1, 2, 3, 4}));
  BOOST_TEST(!be->sync()); // the error was cleared
}

BOOST_AUTO_TEST_CASE(allocate_zeroes_and_copies_round_trip) {
  auto b = std::move(*be->allocate(5));
  BOOST_TEST(to_host(b) == std::vector<float>(5, 0.0f));
  auto src = from({1, 2, 3, 4, 5});
  be->copy(src.data() + 1, 3, b.data());
  BOOST_TEST(to_host(b) == std::vector<float>({2, 3, 4, 0, 0}));
}

BOOST_AUTO_TEST_CASE(bias_add_and_row_sums) {
  auto y = from({1, 2, 3, 4, 5, 6});
  auto bias = from({10, 20, 30});
  be->add_bias(y.as_matrix(2, 3), bias.data());
  BOOST_TEST(to_host(y) == std::vector<float>({11, 22, 33, 14, 25, 36}));
  auto sums = std::move(*be->allocate(3));
  be->sum_rows(y.as_matrix(2, 3), sums.data());
  BOOST_TEST(to_host(sums) == std::vector<float>({25, 47, 69}));
}

BOOST_AUTO_TEST_CASE(axpy_and_scale) {
  auto x = from({1, 2, 3}), y = from({1, 1, 1});
  be->axpy(3, 2.0f, x.data(), y.data());
  BOOST_TEST(to_host(y) == std::vector<float>({3, 5, 7}));
  be->scale(3, 0.5f, y.data());
  BOOST_TEST(to_host(y) == std::vector<float>({1.5f, 2.5f, 3.5f}));
}

BOOST_AUTO_TEST_CASE(activations_match_reference_formulas) {
  auto xs = random_values(4000, 9, -30.0f, 30.0f);
  xs.push_back(0.0f);
  int n = static_cast<int>(xs.size());
  for (auto f : {activation::relu, activation::elu, activation::sigmoid}) {
    auto x = from(xs), y = std::move(*be->allocate(xs.size()));
    be->activate(f, x.as_matrix(1, n), y.as_matrix(1, n));
    auto ys = to_host(y);
    auto gs = random_values(xs.size(), 10);
    auto g = from(gs), d = std::move(*be->allocate(xs.size()));
    be->activate_backward(f, y.as_matrix(1, n), g.as_matrix(1, n), d.as_matrix(1, n));
    auto ds = to_host(d);
    for (int i = 0; i < n; ++i) {
      float want = activate_ref(f, xs[i]);
      BOOST_TEST(std::fabs(ys[i] - want) <= 1e-6f * (1.0f + std::fabs(want)), to_string(f) << " x=" << xs[i]);
      float dwant = gs[i] * derivative_from_output_ref(f, ys[i]);
      BOOST_TEST(std::fabs(ds[i] - dwant) <= 1e-6f, to_string(f) << " x=" << xs[i]);
    }
  }
}

BOOST_AUTO_TEST_CASE(softmax_xent_matches_double_computation) {
  const int rows = 4, cols = 5;
  auto zs = random_values(rows * cols, 11, -5.0f, 5.0f);
  std::vector<float> ls = {0, 4, 2, 2};
  auto z = from(zs), l = from(ls), g = std::move(*be->allocate(rows * cols)),
       loss = std::move(*be->allocate(1));
  be->softmax_xent(z.as_matrix(rows, cols), l.data(), g.as_matrix(rows, cols), loss.data());
  auto gs = to_host(g);
  double want_loss = 0;
  for (int i = 0; i < rows; ++i) {
    double sum = 0;
    for (int j = 0; j < cols; ++j)
      sum += std::exp(double(zs[i * cols + j]));
    want_loss += std::log(sum) - zs[i * cols + int(ls[i])];
    for (int j = 0; j < cols; ++j) {
      double p = std::exp(double(zs[i * cols + j])) / sum;
      double want = (p - (j == int(ls[i]) ? 1.0 : 0.0)) / rows;
      BOOST_TEST(std::fabs(gs[i * cols + j] - want) < 1e-6);
    }
  }
  BOOST_TEST(std::fabs(to_host(loss)[0] - want_loss / rows) < 1e-5);
}

BOOST_AUTO_TEST_CASE(count_correct_counts_argmax_hits) {
  auto z = from({0.1f, 0.9f, 0.0f, /**/ 0.8f, 0.1f, 0.1f, /**/ 0.2f, 0.3f, 0.5f});
  auto l = from({1, 2, 2});
  auto count = std::move(*be->allocate(1));
  be->count_correct(z.as_matrix(3, 3), l.data(), count.data());
  BOOST_TEST(to_host(count)[0] == 2.0f);
}

BOOST_AUTO_TEST_CASE(label_out_of_range_is_an_error) {
  auto z = from({0, 0, 0, 0}), l = from({0, 7}), g = std::move(*be->allocate(4)),
       loss = from({-1});
  be->softmax_xent(z.as_matrix(2, 2), l.data(), g.as_matrix(2, 2), loss.data());
  auto err = be->sync();
  BOOST_TEST(err == actorps::errc::invalid_argument);
  BOOST_TEST(describe(err).find("label 7 of row 1") != std::string::npos);
  BOOST_TEST(to_host(loss)[0] == -1.0f);
}

BOOST_FIXTURE_TEST_CASE(batch_norm_matches_the_formulas_in_double, fixture) {
  const int rows = 37, cols = 5;
  const float eps = 0.001f;
  auto xs = random_values(rows * cols, 21, -3.0f, 5.0f), dys = random_values(rows * cols, 22);
  auto gammas = random_values(cols, 23, 0.5f, 2.0f), betas = random_values(cols, 24);
  auto x = from(xs), dy = from(dys), gamma = from(gammas), beta = from(betas), y = from(std::vector<float>(rows * cols));
  auto mean = from(std::vector<float>(cols)), var = from(std::vector<float>(cols));
  auto dgamma = from(std::vector<float>(cols)), dbeta = from(std::vector<float>(cols)), dx = from(std::vector<float>(rows * cols));
  be->channel_moments(x.as_matrix(rows, cols), mean.data(), var.data());
  be->batch_norm(x.as_matrix(rows, cols), mean.data(), var.data(), gamma.data(), beta.data(), eps, y.as_matrix(rows, cols));
  be->batch_norm_backward(x.as_matrix(rows, cols), dy.as_matrix(rows, cols), mean.data(), var.data(), gamma.data(), eps,
                          dgamma.data(), dbeta.data(), dx.as_matrix(rows, cols));
  auto m = to_host(mean), v = to_host(var), out = to_host(y), dg = to_host(dgamma), db = to_host(dbeta), din = to_host(dx);
  for (int c = 0; c < cols; ++c) {
    double sum = 0, sq = 0, sdy = 0, sdyx = 0;
    for (int r = 0; r < rows; ++r)
      sum += xs[r * cols + c];
    const double mu = sum / rows;
    for (int r = 0; r < rows; ++r)
      sq += (xs[r * cols + c] - mu) * (xs[r * cols + c] - mu);
    const double sigma2 = sq / rows, inv = 1.0 / std::sqrt(sigma2 + eps);
    BOOST_TEST(m[c] == mu, boost::test_tools::tolerance(1e-5));
    BOOST_TEST(v[c] == sigma2, boost::test_tools::tolerance(1e-5));
    for (int r = 0; r < rows; ++r) {
      const double xhat = (xs[r * cols + c] - mu) * inv, g = dys[r * cols + c];
      BOOST_TEST(out[r * cols + c] == gammas[c] * xhat + betas[c], boost::test_tools::tolerance(1e-4));
      sdy += g;
      sdyx += g * xhat;
    }
    BOOST_TEST(db[c] == sdy, boost::test_tools::tolerance(1e-4));
    BOOST_TEST(dg[c] == sdyx, boost::test_tools::tolerance(1e-4));
    for (int r = 0; r < rows; ++r) {
      const double xhat = (xs[r * cols + c] - mu) * inv;
      const double want = gammas[c] * inv / rows * (rows * dys[r * cols + c] - sdy - xhat * sdyx);
      BOOST_TEST(std::fabs(din[r * cols + c] - want) <= 1e-4 * (1 + std::fabs(want)), "dx[" << r << "][" << c << "]");
    }
  }
}

BOOST_FIXTURE_TEST_CASE(lrn_matches_tensorflows_formula_in_double, fixture) {
  const int rows = 6, cols = 13;
  for (lrn_params p : {lrn_params{}, lrn_params{4, 1.0f, 0.001f / 9.0f, 0.75f}, lrn_params{2, 2.0f, 0.5f, 1.0f}}) {
    auto xs = random_values(rows * cols, 51, -3.0f, 3.0f), dys = random_values(rows * cols, 52);
    auto x = from(xs), y = from(std::vector<float>(rows * cols)), dy = from(dys), dx = from(std::vector<float>(rows * cols));
    be->lrn(x.as_matrix(rows, cols), p, y.as_matrix(rows, cols));
    be->lrn_backward(x.as_matrix(rows, cols), y.as_matrix(rows, cols), dy.as_matrix(rows, cols), p, dx.as_matrix(rows, cols));
    auto out = to_host(y), din = to_host(dx);
    for (int r = 0; r < rows; ++r) {
      auto s = [&](int c) {
        double sum = 0;
        for (int j = std::max(0, c - p.radius); j <= std::min(cols - 1, c + p.radius); ++j)
          sum += double(xs[r * cols + j]) * xs[r * cols + j];
        return p.bias + p.alpha * sum;
      };
      for (int c = 0; c < cols; ++c) {
        const double want = xs[r * cols + c] * std::pow(s(c), -p.beta);
        BOOST_TEST(std::fabs(out[r * cols + c] - want) <= 1e-5 * (1 + std::fabs(want)), "y[" << r << "][" << c << "]");
        // d/dx_c of sum_j dy_j x_j s_j^-beta
        double grad = dys[r * cols + c] * std::pow(s(c), -p.beta);
        for (int j = std::max(0, c - p.radius); j <= std::min(cols - 1, c + p.radius); ++j)
          grad -= dys[r * cols + j] * xs[r * cols + j] * p.beta * std::pow(s(j), -p.beta - 1) * p.alpha * 2 * xs[r * cols + c];
        BOOST_TEST(std::fabs(din[r * cols + c] - grad) <= 1e-4 * (1 + std::fabs(grad)), "dx[" << r << "][" << c << "]");
      }
    }
  }
}

// The direct convolution runs where the backend says it does (one thread, AVX-512, 8 channels or
// more) and is refused by name elsewhere, with the output untouched; its scratch is metered.
BOOST_AUTO_TEST_CASE(direct_convolution_runs_where_offered_and_is_refused_by_name_elsewhere) {
  window_geometry g;
  g.in_h = g.in_w = g.out_h = g.out_w = 4;
  g.k_h = g.k_w = 3;
  g.pad_top = g.pad_left = 1;
  g.channels = 2; // too few: im2col's
  BOOST_TEST(!be->direct_conv(g));
  auto x = from(random_values(2 * 16 * 2, 1)), w = from(random_values(18 * 3, 2));
  auto y = from(std::vector<float>(2 * 16 * 3, 7.0f));
  be->conv_forward(g, 2, x.data(), w.data(), 3, y.data());
  auto err = be->sync();
  BOOST_TEST(describe(err).find("conv_forward: this backend has no direct convolution") != std::string::npos,
             describe(err));
  BOOST_TEST((to_host(y) == std::vector<float>(2 * 16 * 3, 7.0f)));
  g.channels = 8;
  auto threaded = make_cpu_backend(2);
  BOOST_TEST(!threaded->direct_conv(g)); // several threads: OpenBLAS's products
  if (!be->direct_conv(g)) {
    BOOST_TEST_MESSAGE("no AVX-512 on this CPU: no direct convolution offered");
    return;
  }
  auto x8 = from(random_values(2 * 16 * 8, 3)), w8 = from(random_values(72 * 3, 4));
  const size_t before = be->memory().in_use;
  be->conv_forward(g, 2, x8.data(), w8.data(), 3, y.data());
  BOOST_TEST(!be->sync());
  BOOST_TEST(be->memory().in_use > before); // the padded images and window addresses
}

BOOST_AUTO_TEST_SUITE_END()
