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

#ifdef __cplusplus
}
#endif

#endif
