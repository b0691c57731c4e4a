// Tests of compute/avx512_gemm: every transpose combination against a double-precision loop, at
// shapes that cross every blocking edge (slivers, panels, the packed slices of k and n), with
// leading dimensions wider than the matrices, alpha and beta, beta 0 never reading C, and the same
// bits on every call. On a CPU without AVX-512 the cases say so and check nothing.
#include "compute/avx512_gemm.hpp"

#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>
#include <vector>

using namespace actorps;
using actorps::test::random_values;

namespace {

struct product {
  bool ta, tb;
  int m, n, k;
};

// Runs one product with leading dimensions 3 wider than needed and checks every element of C
// (and that the padding columns are untouched).
void check(const product& p, float alpha, float beta) {
  const int a_rows = p.ta ? p.k : p.m, a_cols = p.ta ? p.m : p.k;
  const int b_rows = p.tb ? p.n : p.k, b_cols = p.tb ? p.k : p.n;
  const int lda = a_cols + 3, ldb = b_cols + 3, ldc = p.n + 3;
  auto a = random_values(static_cast<size_t>(a_rows) * lda, 1);
  auto b = random_values(static_cast<size_t>(b_rows) * ldb, 2);
  auto c = random_values(static_cast<size_t>(p.m) * ldc, 3);
  if (beta == 0.0f)
    for (int i = 0; i < p.m; ++i)
      for (int j = 0; j < p.n; ++j)
        c[static_cast<size_t>(i) * ldc + j] = std::numeric_limits<float>::quiet_NaN(); // never read
  const auto before = c;
  avx512_sgemm(p.ta, p.tb, p.m, p.n, p.k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
  int wrong = 0;
  for (int i = 0; i < p.m; ++i) {
    for (int j = 0; j < p.n; ++j) {
      double sum = 0;
      for (int q = 0; q < p.k; ++q) {
        const double x = p.ta ? a[static_cast<size_t>(q) * lda + i] : a[static_cast<size_t>(i) * lda + q];
        const double y = p.tb ? b[static_cast<size_t>(j) * ldb + q] : b[static_cast<size_t>(q) * ldb + j];
        sum += x * y;
      }
      const double old = beta == 0.0f ? 0.0 : before[static_cast<size_t>(i) * ldc + j];
      const double want = alpha * sum + beta * old;
      const double got = c[static_cast<size_t>(i) * ldc + j];
      if (!(std::fabs(got - want) <= 1e-4 * (1.0 + std::sqrt(static_cast<double>(p.k)))))
        ++wrong;
    }
    for (int j = p.n; j < ldc; ++j)
      if (c[static_cast<size_t>(i) * ldc + j] != before[static_cast<size_t>(i) * ldc + j])
        ++wrong;
  }
  BOOST_TEST(wrong == 0, "ta " << p.ta << " tb " << p.tb << " " << p.m << "x" << p.n << "x" << p.k << " alpha "
                                << alpha << " beta " << beta << ": " << wrong << " wrong elements");
}

} // namespace

BOOST_AUTO_TEST_SUITE(avx512_gemm)

BOOST_AUTO_TEST_CASE(every_transpose_and_edge_matches_a_double_loop) {
  if (!avx512_gemm_available()) {
    BOOST_TEST_MESSAGE("no AVX-512 on this CPU: avx512_sgemm is never used here");
    return;
  }
  const int ms[] = {1, 13, 14, 15, 29, 200}, ns[] = {1, 15, 16, 17, 32, 33, 70}, ks[] = {1, 9, 257};
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (int m : ms)
        for (int n : ns)
          for (int k : ks)
            check({ta, tb, m, n, k}, 1.0f, 0.0f);
  check({false, false, 40, 530, 20}, 1.0f, 0.0f); // two slices of n
  check({true, false, 350, 16, 600}, 1.0f, 0.0f); // several blocks of m and slices of k
  check({false, true, 31, 40, 300}, 2.0f, 0.5f);  // alpha and beta, beta applied once across slices
  check({true, true, 17, 9, 5}, -1.0f, 1.0f);
}

BOOST_AUTO_TEST_CASE(an_empty_inner_dimension_scales_c_and_the_bits_repeat) {
  if (!avx512_gemm_available()) {
    BOOST_TEST_MESSAGE("no AVX-512 on this CPU: avx512_sgemm is never used here");
    return;
  }
  std::vector<float> c = {1, 2, 3, 4};
  avx512_sgemm(false, false, 2, 2, 0, 1.0f, nullptr, 1, nullptr, 2, 0.5f, c.data(), 2);
  BOOST_TEST((c == std::vector<float>{0.5f, 1, 1.5f, 2}));
  auto a = random_values(300 * 144, 4), b = random_values(144 * 32, 5);
  std::vector<float> once(300 * 32), again(300 * 32);
  avx512_sgemm(false, false, 300, 32, 144, 1.0f, a.data(), 144, b.data(), 32, 0.0f, once.data(), 32);
  avx512_sgemm(false, false, 300, 32, 144, 1.0f, a.data(), 144, b.data(), 32, 0.0f, again.data(), 32);
  BOOST_TEST((once == again));
}

// avx512_sgemm_rows: A's rows listed in a shuffled order from a pool, their columns in runs
// (`run` floats, `step` apart, the rest of each step garbage never read), against a double loop,
// for the narrow (rows read in place) and wide (packed) products and both transposes.
BOOST_AUTO_TEST_CASE(listed_rows_in_runs_match_a_double_loop) {
  if (!avx512_gemm_available()) {
    BOOST_TEST_MESSAGE("no AVX-512 on this CPU: avx512_sgemm_rows is never used here");
    return;
  }
  struct listed {
    bool ta;
    int m, n, k, run;
  };
  const listed cases[] = {{false, 37, 16, 144, 48}, {false, 37, 32, 300, 7}, {false, 29, 64, 576, 192},
                          {false, 50, 40, 90, 0},   {true, 45, 16, 300, 0},   {true, 30, 48, 70, 0}};
  for (const auto& t : cases) {
    const int stored = t.ta ? t.k : t.m, width = t.ta ? t.m : t.k; // A as stored: rows x width
    const int runs = t.run > 0 ? (width + t.run - 1) / t.run : 1, step = t.run > 0 ? t.run + 5 : width;
    const size_t row_floats = static_cast<size_t>(runs) * step + 3;
    auto pool = random_values(row_floats * stored, 6);
    std::vector<const float*> rows(stored);
    for (int r = 0; r < stored; ++r)
      rows[r] = pool.data() + static_cast<size_t>((r * 7) % stored) * row_floats + 3; // shuffled, offset 3 below
    auto at = [&](int r, int p) { return rows[r][p / (t.run > 0 ? t.run : width) * step + p % (t.run > 0 ? t.run : width)]; };
    auto b = random_values(static_cast<size_t>(t.k) * t.n, 7);
    std::vector<float> c(static_cast<size_t>(t.m) * t.n, std::numeric_limits<float>::quiet_NaN());
    std::vector<const float*> below(stored);
    for (int r = 0; r < stored; ++r)
      below[r] = rows[r] - 3;
    avx512_sgemm_rows(t.ta, t.m, t.n, t.k, 1.0f, below.data(), 3, t.run, step, b.data(), t.n, 0.0f, c.data(), t.n);
    int wrong = 0;
    for (int i = 0; i < t.m; ++i)
      for (int j = 0; j < t.n; ++j) {
        double sum = 0;
        for (int q = 0; q < t.k; ++q)
          sum += static_cast<double>(t.ta ? at(q, i) : at(i, q)) * b[static_cast<size_t>(q) * t.n + j];
        if (!(std::fabs(c[static_cast<size_t>(i) * t.n + j] - sum) <= 1e-4 * (1.0 + std::sqrt(t.k))))
          ++wrong;
      }
    BOOST_TEST(wrong == 0, "ta " << t.ta << " " << t.m << "x" << t.n << "x" << t.k << " run " << t.run << ": "
                                 << wrong << " wrong elements");
  }
}

BOOST_AUTO_TEST_SUITE_END()
