// Blocking: for each NC columns of C, each KC slice of the inner dimension is packed from B once
// (NR-wide panels, k-major, zero-padded), then each MC rows of A (MR-tall slivers, k-major,
// zero-padded) and every sliver x panel pair runs the micro-kernel, which keeps its MR x NR
// block of C in registers over the slice. The first slice applies beta, later ones add.
#include "compute/avx512_gemm.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

#include <immintrin.h>

namespace actorps {

namespace {

constexpr int kc_max = 256;
constexpr int nc_max = 512;

// The block of C a micro-kernel owns: rows x cols valid of MR x NR, at c with leading dimension ldc.
struct c_block {
  float* c;
  int ldc, rows, cols;
};

// Writes C = alpha acc + beta C for the valid part of a block (beta 0: C is not read).
template <int NV>
__attribute__((target("avx512f"))) inline void store_block(const __m512 (*acc)[NV], float alpha, float beta,
                                                           c_block out) {
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  for (int i = 0; i < out.rows; ++i) {
    float* row = out.c + static_cast<ptrdiff_t>(i) * out.ldc;
    for (int v = 0; v < NV; ++v) {
      const int left = out.cols - 16 * v;
      if (left <= 0)
        break;
      const __mmask16 mask = left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
      __m512 r = _mm512_mul_ps(va, acc[i][v]);
      if (beta != 0.0f)
        r = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(mask, row + 16 * v), r);
      _mm512_mask_storeu_ps(row + 16 * v, mask, r);
    }
  }
}

// Where A's stored rows are: row r at a + r * lda (a matrix), or at rows[r] + offset (an implicit
// one, e.g. a convolution's windows read from the images: compute/direct_conv.cpp), and where
// column p of a row is: at p, or in runs (column p at (p / run) * step + p % run; a window's
// kernel rows). run_left(p): the columns from p on that are consecutive in memory.
struct strided_rows {
  const float* a;
  ptrdiff_t lda;
  const float* row(int r) const { return a + static_cast<ptrdiff_t>(r) * lda; }
  ptrdiff_t column(int p) const { return p; }
  int run_left(int) const { return std::numeric_limits<int>::max(); }
};
struct listed_rows {
  const float* const* rows;
  ptrdiff_t offset;
  int run; // 0: one run
  ptrdiff_t step;
  const float* row(int r) const { return rows[r] + offset; }
  ptrdiff_t column(int p) const { return run > 0 ? p / run * step + p % run : p; }
  int run_left(int p) const { return run > 0 ? run - p % run : std::numeric_limits<int>::max(); }
};

// The rows of a from row first and column column on (a transposed A's slivers read in place).
template <class Rows>
struct shifted_rows {
  const Rows& a;
  int first, column;
  const float* row(int r) const { return a.row(first + r) + column; }
};

// acc = sum over p of a.row(p)[i] * b[p * NR + j], then stored (a: a packed sliver, k-major with
// rows of MR, or MR columns of a transposed A in place).
template <int MR, int NV, class Rows>
__attribute__((target("avx512f"))) void micro_kernel(int kc, const Rows& a, const float* b, float alpha, float beta,
                                                     c_block out) {
  constexpr int NR = 16 * NV;
  __m512 acc[MR][NV];
#pragma GCC unroll 32
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      acc[i][v] = _mm512_setzero_ps();
  for (int p = 0; p < kc; ++p) {
    __m512 bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      bv[v] = _mm512_loadu_ps(b + p * NR + 16 * v);
    const float* ap = a.row(p);
#pragma GCC unroll 32
    for (int i = 0; i < MR; ++i) {
      const __m512 ai = _mm512_set1_ps(ap[i]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        acc[i][v] = _mm512_fmadd_ps(ai, bv[v], acc[i][v]);
    }
  }
  store_block<NV>(acc, alpha, beta, out);
}

// The same for 8 rows of a non-transposed A read in place (rows a.row(first + i) from column
// k0, run by run): narrow products, where packing A would cost as much as using it. Even and odd p go to two
// sets of accumulators when NV is 1, so that 16 FMA chains are in flight.
template <int NV, class Rows>
__attribute__((target("avx512f"))) void row_kernel(int kc, const Rows& a, int first, int k0, const float* b,
                                                   float alpha, float beta, c_block out) {
  constexpr int MR = 8, NR = 16 * NV;
  __m512 acc[MR][NV], odd[MR][NV];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      acc[i][v] = odd[i][v] = _mm512_setzero_ps();
  __m512(&second)[MR][NV] = NV == 1 ? odd : acc; // (wider blocks have 16 chains without odd ones)
  for (int done = 0; done < kc;) { // run by run of consecutive columns
    const int len = std::min(a.run_left(k0 + done), kc - done);
    const float* r[MR];
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i)
      r[i] = a.row(first + i) + a.column(k0 + done);
    const float* bp = b + static_cast<ptrdiff_t>(done) * NR;
    int p = 0;
    for (; p + 1 < len; p += 2) {
      __m512 b0[NV], b1[NV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        b0[v] = _mm512_loadu_ps(bp + p * NR + 16 * v);
        b1[v] = _mm512_loadu_ps(bp + (p + 1) * NR + 16 * v);
      }
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) {
        const __m512 x0 = _mm512_set1_ps(r[i][p]), x1 = _mm512_set1_ps(r[i][p + 1]);
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) {
          acc[i][v] = _mm512_fmadd_ps(x0, b0[v], acc[i][v]);
          second[i][v] = _mm512_fmadd_ps(x1, b1[v], second[i][v]);
        }
      }
    }
    for (; p < len; ++p)
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v)
          acc[i][v] = _mm512_fmadd_ps(_mm512_set1_ps(r[i][p]), _mm512_loadu_ps(bp + p * NR + 16 * v), acc[i][v]);
    done += len;
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      acc[i][v] = _mm512_add_ps(acc[i][v], odd[i][v]);
  store_block<NV>(acc, alpha, beta, out);
}

// Packs kc x width values, k-major, into out: out[p * width + j] = src[p * p_step + j * j_step]
// for j < n, zeros after (the padding of a last sliver or panel). Reads go down p in order;
// strided j gathers from n rows side by side.
void pack_panel(const float* src, ptrdiff_t p_step, ptrdiff_t j_step, int kc, int n, int width, float* out) {
  for (int p = 0; p < kc; ++p) {
    const float* row = src + p * p_step;
    float* dst = out + static_cast<size_t>(p) * width;
    if (j_step == 1)
      for (int j = 0; j < n; ++j)
        dst[j] = row[j];
    else
      for (int j = 0; j < n; ++j)
        dst[j] = row[j * j_step];
    for (int j = n; j < width; ++j)
      dst[j] = 0.0f;
  }
}

// Packs op(A)[i0 .. i0 + rows) x [k0 .. k0 + kc) into MR-tall slivers, zero-padded:
// op(A)(i, p) = a.row(p)[i] transposed, a.row(i)[p] not.
template <int MR, class Rows>
void pack_a(bool trans, const Rows& a, int i0, int rows, int k0, int kc, float* out) {
  for (int s = 0; s < rows; s += MR) {
    const int n = std::min(MR, rows - s);
    float* sliver = out + static_cast<size_t>(s) * kc;
    for (int p = 0; p < kc; ++p) {
      float* dst = sliver + static_cast<size_t>(p) * MR;
      if (trans) {
        const float* src = a.row(k0 + p) + i0 + s;
        for (int j = 0; j < n; ++j)
          dst[j] = src[j];
      }
      for (int j = n; j < MR; ++j)
        dst[j] = 0.0f;
    }
    if (!trans)
      for (int j = 0; j < n; ++j)
        for (int p = 0; p < kc;) {
          const int len = std::min(a.run_left(k0 + p), kc - p);
          const float* src = a.row(i0 + s + j) + a.column(k0 + p);
          for (int q = 0; q < len; ++q)
            sliver[static_cast<size_t>(p + q) * MR + j] = src[q];
          p += len;
        }
  }
}

// Packs op(B)[k0 .. k0 + kc) x [j0 .. j0 + cols) into NR-wide panels, zero-padded.
void pack_b(bool trans, const float* b, int ldb, int k0, int kc, int j0, int cols, int nr, float* out) {
  for (int q = 0; q < cols; q += nr) // op(B)(p, j) = b[j * ldb + p] transposed, b[p * ldb + j] not
    pack_panel(trans ? b + static_cast<ptrdiff_t>(j0 + q) * ldb + k0 : b + static_cast<ptrdiff_t>(k0) * ldb + j0 + q,
               trans ? 1 : ldb, trans ? ldb : 1, kc, std::min(nr, cols - q), nr, out + static_cast<size_t>(q) * kc);
}

template <int MR, int NV, class Rows>
void blocked(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const Rows& a, const float* b, int ldb,
             float beta, float* c, int ldc) {
  constexpr int NR = 16 * NV;
  constexpr int mc_max = MR * 12;
  thread_local std::vector<float> packed_a, packed_b;
  packed_a.resize(static_cast<size_t>(mc_max) * kc_max);
  packed_b.resize(static_cast<size_t>(nc_max + NR) * kc_max);
  for (int j0 = 0; j0 < n; j0 += nc_max) {
    const int nc = std::min(nc_max, n - j0);
    for (int k0 = 0; k0 < k; k0 += kc_max) {
      const int kc = std::min(kc_max, k - k0);
      const float beta_now = k0 == 0 ? beta : 1.0f;
      pack_b(trans_b, b, ldb, k0, kc, j0, nc, NR, packed_b.data());
      for (int i0 = 0; i0 < m; i0 += mc_max) {
        const int mc = std::min(mc_max, m - i0);
        // Whole slivers of a transposed A are read in place (its p-th row holds them side by
        // side), and so is a narrow product's row-major A, 8 rows at a time; the rest is packed.
        const bool narrow = !trans_a && n <= 4 * 16;
        const int whole = trans_a ? mc / MR * MR : narrow ? mc / 8 * 8 : 0;
        if (whole < mc)
          pack_a<MR>(trans_a, a, i0 + whole, mc - whole, k0, kc, packed_a.data());
        for (int q = 0; q < nc; q += NR) {
          const float* panel = packed_b.data() + static_cast<size_t>(q) * kc;
          auto block = [&](int s, int rows) {
            return c_block{c + static_cast<ptrdiff_t>(i0 + s) * ldc + j0 + q, ldc, rows, std::min(NR, nc - q)};
          };
          if (trans_a)
            for (int s = 0; s < whole; s += MR)
              micro_kernel<MR, NV>(kc, shifted_rows<Rows>{a, k0, i0 + s}, panel, alpha, beta_now, block(s, MR));
          else
            for (int s = 0; s < whole; s += 8)
              row_kernel<NV>(kc, a, i0 + s, k0, panel, alpha, beta_now, block(s, 8));
          for (int s = whole; s < mc; s += MR)
            micro_kernel<MR, NV>(kc, strided_rows{packed_a.data() + static_cast<size_t>(s - whole) * kc, MR}, panel,
                                 alpha, beta_now, block(s, std::min(MR, mc - s)));
        }
      }
    }
  }
}

// C = beta C (beta 0: zeros, never reading C): the product of an empty inner dimension.
void scale_c(int m, int n, float beta, float* c, int ldc) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float& x = c[static_cast<ptrdiff_t>(i) * ldc + j];
      x = beta == 0.0f ? 0.0f : beta * x;
    }
}

} // namespace

bool avx512_gemm_available() {
  static const bool available = [] {
    __builtin_cpu_init(); // (checks the OS enabled the vector state, not only CPUID)
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return available;
}

namespace {

template <class Rows>
void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const Rows& a, const float* b, int ldb,
           float beta, float* c, int ldc) {
  if (m == 0 || n == 0)
    return;
  if (k == 0)
    return scale_c(m, n, beta, c, ldc);
  if (n <= 16)
    blocked<28, 1>(trans_a, trans_b, m, n, k, alpha, a, b, ldb, beta, c, ldc);
  else
    blocked<14, 2>(trans_a, trans_b, m, n, k, alpha, a, b, ldb, beta, c, ldc);
}

} // namespace

void avx512_sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                  const float* b, int ldb, float beta, float* c, int ldc) {
  sgemm(trans_a, trans_b, m, n, k, alpha, strided_rows{a, lda}, b, ldb, beta, c, ldc);
}

void avx512_sgemm_rows(bool trans_a, int m, int n, int k, float alpha, const float* const* rows, ptrdiff_t offset,
                       int run, ptrdiff_t step, const float* b, int ldb, float beta, float* c, int ldc) {
  sgemm(trans_a, false, m, n, k, alpha, listed_rows{rows, offset, trans_a ? 0 : run, step}, b, ldb, beta, c, ldc);
}

} // namespace actorps
