// gemm.cu - the row-major product of common/gemm.h through cuBLAS, which
// is column-major (Fortran's order, as BLAS always was).
//
// A row-major (M, N) matrix, read column-major, is its (N, M) transpose.
// So C = op(A) op(B) in row-major is C^T = op(B)^T op(A)^T in column-major:
// the same call with the operands swapped and M and N exchanged. No data
// moves; only the order of the arguments changes.
#include "cuda_rt.h"

extern "C" {
#include "gemm.cuh"
}

//> gemm-cuda
void gemm_cuda(bool trans_a, bool trans_b, int M, int N, int K, float alpha,
               const float *A, int lda, const float *B, int ldb, float beta,
               float *C, int ldc) {
    if (M == 0 || N == 0) return;
    CUBLAS_CHECK(cublasSgemm(cuda_blas(),
                             trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                             trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K,
                             &alpha, B, ldb, A, lda, &beta, C, ldc));
}
//< gemm-cuda
