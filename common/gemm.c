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
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, M, N, K,
                alpha, A, lda, B, ldb, beta, C, ldc);
#endif
}

const char *gemm_backend(void) {
#ifdef NO_BLAS
    return "naive";
#else
    return "openblas";
#endif
}
