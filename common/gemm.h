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

// The products that gemm() sends to gemm_tiles.c: all but the one-row ones
// (matrix-vector products, below), in a build for a CPU with AVX-512 or
// AVX2 and FMA and with OpenBLAS (a NO_BLAS build keeps gemm_naive). Same arguments as gemm; false (C untouched) when this
// build has no such path, when B is transposed and larger than 4 MiB (the
// copy it would take), or when its buffers cannot be allocated.
bool gemm_tiles(bool trans_a, bool trans_b, int M, int N, int K,
                float alpha, const float *A, int lda, const float *B, int ldb,
                float beta, float *C, int ldc);

// The one-row products with B transposed, a KV-cache decoding step's:
// y (1, N) = alpha * x (1, K) @ W^T + beta * y, W stored (N, K) with row
// stride ldw, many rows at a time on this CPU's vectors (on threads for
// a matrix of 1 MiB or more). false (y untouched) in a build without
// AVX-512 or AVX2 and FMA; gemm() then calls OpenBLAS's sgemv.
bool gemv_rows(int N, int K, float alpha, const float *W, int ldw,
               const float *x, float beta, float *y);

// Whether gemm() may use gemm_tiles and gemv_rows (default: yes, unless the environment
// sets GEMM_TILES=0, which benchmarks use to compare with OpenBLAS alone).
// Returns the previous setting.
bool gemm_set_tiles(bool on);

// "openblas", "openblas+avx512 tiles", "openblas+avx2 tiles" or "naive":
// what gemm() uses in this build, for banners.
const char *gemm_backend(void);

#endif
