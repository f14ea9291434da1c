// gemm.cuh - common/gemm.h's one matrix product, on the GPU (cuBLAS).
#ifndef CH8_GEMM_CUH
#define CH8_GEMM_CUH

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

// C = alpha * op(A) @ op(B) + beta * C, all row-major, exactly as gemm()
// of common/gemm.h; device pointers. beta == 0: C is not read.
void gemm_cuda(bool trans_a, bool trans_b, int M, int N, int K, float alpha,
               const float *A, int lda, const float *B, int ldb, float beta,
               float *C, int ldc);

// batch such products at once: C_i = alpha * op(A_i) @ op(B_i) + beta * C_i
// for i = 0..batch-1, where A_i = A + i * stride_a (in floats), and the
// same for B and C. Attention's heads are such a batch.
void gemm_batched_cuda(bool trans_a, bool trans_b, int M, int N, int K,
                       float alpha, const float *A, int lda,
                       long long stride_a, const float *B, int ldb,
                       long long stride_b, float beta, float *C, int ldc,
                       long long stride_c, int batch);

#ifdef __cplusplus
}
#endif

#endif
