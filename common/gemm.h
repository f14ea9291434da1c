// gemm.h - the one matrix product every layer goes through.
//
//   C = alpha * op(A) @ op(B) + beta * C        (all row-major)
//
// op(A) is (M, K): A itself, or A transposed when trans_a is set (then A is
// stored (K, M)). op(B) is (K, N) likewise. lda, ldb, ldc are the row
// strides of the matrices as stored. beta == 0 means C is overwritten and
// never read (so it may hold garbage).
//
// gemm() calls OpenBLAS's cblas_sgemm; building with NO_BLAS=1 makes it call
// gemm_naive(), the plain triple loop below, which is the definition to read.
#ifndef COMMON_GEMM_H
#define COMMON_GEMM_H

#include <stdbool.h>

void gemm(bool trans_a, bool trans_b, int M, int N, int K,
          float alpha, const float *A, int lda, const float *B, int ldb,
          float beta, float *C, int ldc);

void gemm_naive(bool trans_a, bool trans_b, int M, int N, int K,
                float alpha, const float *A, int lda, const float *B, int ldb,
                float beta, float *C, int ldc);

// "openblas" or "naive": what gemm() uses in this build, for banners.
const char *gemm_backend(void);

#endif
