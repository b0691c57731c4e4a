// A one-thread sgemm in AVX-512 for the CPU backend, picked at run time on CPUs that have it: the
// narrow products of convolutions (im2col columns times 16-64 output channels) run at a fraction
// of the core's peak in OpenBLAS's AVX2 kernels, which this machine's environment selects
// (OPENBLAS_CORETYPE). GotoBLAS' scheme: panels of B and blocks of A packed, register-blocked
// micro-kernels of 14 x 32 (or 28 x 16 for products 16 wide). Deterministic: every element's sum
// runs in the same order on every call.
#pragma once

#include <cstddef>

namespace actorps {

/// Whether this CPU and OS run avx512_sgemm (AVX-512F with the vector state enabled).
bool avx512_gemm_available();

/// C = alpha op(A) op(B) + beta C in row-major storage, as cblas_sgemm(CblasRowMajor, ...):
/// op(A) is m x k, op(B) k x n, C m x n with leading dimensions lda, ldb, ldc. beta = 0 never
/// reads C. REQUIRES: avx512_gemm_available(); m, n, k >= 0.
void avx512_sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                  const float* b, int ldb, float beta, float* c, int ldc);

/// The same with A's stored rows listed instead of strided, and B not transposed: row r of A as
/// stored (of op(A) = A when trans_a is false, of its transpose when true) starts at rows[r] +
/// offset; without trans_a and with run > 0, its columns lie in runs of `run` floats, `step`
/// apart (column p at (p / run) * step + p % run). An implicit matrix: a convolution's windows
/// read from the images in place, one run per kernel row. REQUIRES: avx512_gemm_available();
/// rows holds trans_a ? k : m pointers; run is 0 when trans_a.
void avx512_sgemm_rows(bool trans_a, int m, int n, int k, float alpha, const float* const* rows, ptrdiff_t offset,
                       int run, ptrdiff_t step, const float* b, int ldb, float beta, float* c, int ldc);

} // namespace actorps
