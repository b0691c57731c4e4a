// Blocking: for each NC columns of C, each KC slice of the inner dimension is packed from B once
// (NR-wide panels, k-major, zero-padded), then each MC rows of A (MR-tall slivers, k-major,
// zero-padded) and every sliver x panel pair runs the micro-kernel, which keeps its MR x NR
// block of C in registers over the slice. The first slice applies beta, later ones add.
#include "compute/avx512_gemm.hpp"

#include <algorithm>
#include <cstddef>
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

// acc = sum over p of a[p * a_step + i] * b[p * NR + j], then stored (a: a packed sliver with
// a_step MR, or MR columns of a transposed A in place with a_step lda).
template <int MR, int NV>
__attribute__((target("avx512f"))) void micro_kernel(int kc, const float* a, ptrdiff_t a_step, const float* b,
                                                     float alpha, float beta, c_block out) {
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
    const float* ap = a + p * a_step;
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

// The same for 8 rows of a row-major A read in place (row pointers a + i * lda): narrow products,
// where packing A would cost as much as using it. Even and odd p go to two sets of accumulators,
// so that 16 FMA chains are in flight when NV is 1.
template <int NV>
__attribute__((target("avx512f"))) void row_kernel(int kc, const float* a, ptrdiff_t lda, const float* b, float alpha,
                                                   float beta, c_block out) {
  constexpr int MR = 8, NR = 16 * NV;
  const float* r[MR];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
    r[i] = a + i * lda;
  __m512 acc[MR][NV], odd[MR][NV];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      acc[i][v] = odd[i][v] = _mm512_setzero_ps();
  int p = 0;
  for (; p + 1 < kc; p += 2) {
    __m512 b0[NV], b1[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      b0[v] = _mm512_loadu_ps(b + p * NR + 16 * v);
      b1[v] = _mm512_loadu_ps(b + (p + 1) * NR + 16 * v);
    }
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const __m512 x0 = _mm512_set1_ps(r[i][p]), x1 = _mm512_set1_ps(r[i][p + 1]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        acc[i][v] = _mm512_fmadd_ps(x0, b0[v], acc[i][v]);
        odd[i][v] = _mm512_fmadd_ps(x1, b1[v], odd[i][v]);
      }
    }
  }
  for (; p < kc; ++p)
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        acc[i][v] = _mm512_fmadd_ps(_mm512_set1_ps(r[i][p]), _mm512_loadu_ps(b + p * NR + 16 * v), acc[i][v]);
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

// Packs op(A)[i0 .. i0 + rows) x [k0 .. k0 + kc) into MR-tall slivers, zero-padded.
template <int MR>
void pack_a(bool trans, const float* a, int lda, int i0, int rows, int k0, int kc, float* out) {
  for (int s = 0; s < rows; s += MR) // op(A)(i, p) = a[p * lda + i] transposed, a[i * lda + p] not
    pack_panel(trans ? a + static_cast<ptrdiff_t>(k0) * lda + i0 + s : a + static_cast<ptrdiff_t>(i0 + s) * lda + k0,
               trans ? lda : 1, trans ? 1 : lda, kc, std::min(MR, rows - s), MR, out + static_cast<size_t>(s) * kc);
}

// Packs op(B)[k0 .. k0 + kc) x [j0 .. j0 + cols) into NR-wide panels, zero-padded.
void pack_b(bool trans, const float* b, int ldb, int k0, int kc, int j0, int cols, int nr, float* out) {
  for (int q = 0; q < cols; q += nr) // op(B)(p, j) = b[j * ldb + p] transposed, b[p * ldb + j] not
    pack_panel(trans ? b + static_cast<ptrdiff_t>(j0 + q) * ldb + k0 : b + static_cast<ptrdiff_t>(k0) * ldb + j0 + q,
               trans ? 1 : ldb, trans ? ldb : 1, kc, std::min(nr, cols - q), nr, out + static_cast<size_t>(q) * kc);
}

template <int MR, int NV>
void blocked(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
             int ldb, float beta, float* c, int ldc) {
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
        const bool narrow = !trans_a && n <= 2 * 16;
        const int whole = trans_a ? mc / MR * MR : narrow ? mc / 8 * 8 : 0;
        if (whole < mc)
          pack_a<MR>(trans_a, a, lda, i0 + whole, mc - whole, k0, kc, packed_a.data());
        for (int q = 0; q < nc; q += NR) {
          const float* panel = packed_b.data() + static_cast<size_t>(q) * kc;
          auto block = [&](int s, int rows) {
            return c_block{c + static_cast<ptrdiff_t>(i0 + s) * ldc + j0 + q, ldc, rows, std::min(NR, nc - q)};
          };
          if (trans_a)
            for (int s = 0; s < whole; s += MR)
              micro_kernel<MR, NV>(kc, a + static_cast<ptrdiff_t>(k0) * lda + i0 + s, lda, panel, alpha, beta_now,
                                   block(s, MR));
          else
            for (int s = 0; s < whole; s += 8)
              row_kernel<NV>(kc, a + static_cast<ptrdiff_t>(i0 + s) * lda + k0, lda, panel, alpha, beta_now,
                             block(s, 8));
          for (int s = whole; s < mc; s += MR)
            micro_kernel<MR, NV>(kc, packed_a.data() + static_cast<size_t>(s - whole) * kc, MR, panel, alpha,
                                 beta_now, block(s, std::min(MR, mc - s)));
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

void avx512_sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                  const float* b, int ldb, float beta, float* c, int ldc) {
  if (m == 0 || n == 0)
    return;
  if (k == 0)
    return scale_c(m, n, beta, c, ldc);
  if (n <= 16)
    blocked<28, 1>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else
    blocked<14, 2>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

} // namespace actorps
