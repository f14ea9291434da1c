#include "gemm.h"

#include <stddef.h>

#ifndef NO_BLAS
#include <cblas.h>
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

void gemm(bool trans_a, bool trans_b, int M, int N, int K,
          float alpha, const float *A, int lda, const float *B, int ldb,
          float beta, float *C, int ldc) {
#ifdef NO_BLAS
    gemm_naive(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
#else
    if (M == 1 && !trans_a) {
        // One row times a matrix is a matrix-vector product: sgemv reads
        // B once, without the packing sgemm does for large products (a
        // KV-cache decoding step is made of these).
        if (trans_b)   // C (1,N) = A (1,K) . B^T, B stored (N,K)
            cblas_sgemv(CblasRowMajor, CblasNoTrans, N, K, alpha, B, ldb,
                        A, 1, beta, C, 1);
        else           // B stored (K,N)
            cblas_sgemv(CblasRowMajor, CblasTrans, K, N, alpha, B, ldb, A,
                        1, beta, C, 1);
        return;
    }
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
#ifdef NO_BLAS
    return "naive";
#else
    return "openblas";
#endif
}
