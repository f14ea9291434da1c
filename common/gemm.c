#include "gemm.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#ifndef NO_BLAS
#include <cblas.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

//> gemm-naive
void gemm_naive(bool trans_a, bool trans_b, int M, int N, int K,
                float alpha, const float *A, int lda, const float *B, int ldb,
                float beta, float *C, int ldc) {
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            double sum = 0.0;              // accumulate in double: exact-ish
            for (int k = 0; k < K; k++) {
                float a = trans_a ? A[(size_t)k * lda + i]
                                  : A[(size_t)i * lda + k];
                float b = trans_b ? B[(size_t)j * ldb + k]
                                  : B[(size_t)k * ldb + j];
                sum += (double)a * b;
            }
            float *c = &C[(size_t)i * ldc + j];
            *c = (float)(alpha * sum) + (beta == 0.0f ? 0.0f : beta * *c);
        }
    }
}
//< gemm-naive

// -1: not yet read from the environment
static int use_tiles = -1;

static bool tiles_on(void) {
    if (use_tiles < 0) {
        const char *e = getenv("GEMM_TILES");
        use_tiles = !(e && strcmp(e, "0") == 0);
    }
    return use_tiles;
}

bool gemm_set_tiles(bool on) {
    bool was = tiles_on();
    use_tiles = on;
    return was;
}

void gemm(bool trans_a, bool trans_b, int M, int N, int K,
          float alpha, const float *A, int lda, const float *B, int ldb,
          float beta, float *C, int ldc) {
#ifdef NO_BLAS
    gemm_naive(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
#else
    // gemm_tiles takes the layer's forward products and input gradients
    // (A not transposed). The small products (the attention core's, a head
    // at a time) stay with OpenBLAS, whose small-matrix kernels copy
    // nothing either; so do the weight gradients (A transposed, a long K),
    // where gemm_tiles measured 2 ms a step slower than OpenBLAS inside a
    // default step of ./ch6, though as fast on its own.
    // One row times a weight matrix (W stored (N, K): B transposed): a
    // KV-cache decoding step is made of these, which gemv_rows reads many
    // rows at a time (gemm_tiles.c).
    if (M == 1 && !trans_a && trans_b && tiles_on()
        && gemv_rows(N, K, alpha, B, ldb, A, beta, C))
        return;
    if (!trans_a && 2.0 * M * N * K >= 4e6 && tiles_on()
        && gemm_tiles(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta,
                      C, ldc))
        return;
    if (M == 1 && !trans_a) {
        // One row times a matrix is a matrix-vector product: sgemv reads
        // B once, without the packing sgemm does for large products.
        if (trans_b)   // C (1,N) = A (1,K) . B^T, B stored (N,K)
            cblas_sgemv(CblasRowMajor, CblasNoTrans, N, K, alpha, B, ldb,
                        A, 1, beta, C, 1);
        else           // B stored (K,N)
            cblas_sgemv(CblasRowMajor, CblasTrans, K, N, alpha, B, ldb, A,
                        1, beta, C, 1);
        return;
    }
#ifdef _OPENMP
    // A weight gradient (A transposed: dW += dout^T @ inp over a batch's
    // tokens) on several threads: each thread takes a band of C's rows
    // and runs OpenBLAS on one thread for it. OpenBLAS's own threads share
    // one packed copy of B and wait for each other to make it; here each
    // thread packs its own, and never waits: a default step of ./ch6 on 2
    // threads ran 1.05x faster so (chapter 6, "Weight gradients in
    // bands", on a 2-core Xeon with AVX-512). Bands start
    // at multiples of 16 rows (no band ends in OpenBLAS's narrow edge
    // kernels) and each is as big as the tiles' smallest product, so that
    // it takes OpenBLAS's regular path as the whole product does: an
    // element's sum is then the same in a band as in the whole, and one
    // thread gives the bits of many (test_common.c holds 1 to 2). Only
    // with OpenMP's OpenBLAS, which runs on one thread inside a parallel
    // region (openblas_get_parallel() == 2).
    int bands = omp_in_parallel() ? 1 : omp_get_max_threads();
    double flops = 2.0 * M * N * K;
    if (bands > M / 16) bands = M / 16;
    if (bands > flops / 4e6) bands = (int)(flops / 4e6);
    if (trans_a && bands > 1 && openblas_get_parallel() == 2) {
        int units = M / 16;
#pragma omp parallel for num_threads(bands) schedule(static, 1)
        for (int b = 0; b < bands; b++) {
            int m0 = (int)((long)units * b / bands) * 16;
            int m1 = b == bands - 1 ? M
                                    : (int)((long)units * (b + 1) / bands) * 16;
            gemm(trans_a, trans_b, m1 - m0, N, K, alpha, A + m0, lda, B, ldb,
                 beta, C + (size_t)m0 * ldc, ldc);
        }
        return;
    }
#endif
    // The same sums on 1 thread and on many. OpenBLAS cuts a long K into
    // blocks of its own size Q, and halves a last piece between Q and 2Q;
    // its one-thread driver rounds that half to its kernel's width, its
    // threaded one does not, so the two add the same products in another
    // grouping (128 x 512 x 3000 differed in the last bits). A K that is a
    // multiple of 64 halves to the same point in both (Q, a multiple of 64
    // on every core type, leaves such a piece). So the product is the
    // part up to the last multiple of 64, then the rest (under 64: never
    // cut) added on.
    int rest = K > 64 ? K % 64 : 0, K1 = K - rest;
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, M, N, K1,
                alpha, A, lda, B, ldb, beta, C, ldc);
    if (rest)
        cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                    trans_b ? CblasTrans : CblasNoTrans, M, N, rest, alpha,
                    trans_a ? A + (size_t)K1 * lda : A + K1, lda,
                    trans_b ? B + K1 : B + (size_t)K1 * ldb, ldb, 1.0f, C,
                    ldc);
#endif
}

const char *gemm_backend(void) {
#if defined(NO_BLAS)
    return "naive";
#else
    if (tiles_on() && gemm_tiles(false, false, 0, 0, 0, 1.0f, NULL, 1, NULL,
                                 1, 0.0f, NULL, 1)) {
#ifdef __AVX512F__
        return "openblas+avx512 tiles";
#else
        return "openblas+avx2 tiles";
#endif
    }
    return "openblas";
#endif
}
