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
