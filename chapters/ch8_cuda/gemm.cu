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

// The same swap for a batch of independent products, matrix i of A, B
// and C starting stride_a, stride_b, stride_c floats after matrix i-1:
// one cuBLAS call runs them all, instead of a loop of small launches.
void gemm_batched_cuda(bool trans_a, bool trans_b, int M, int N, int K,
                       float alpha, const float *A, int lda,
                       long long stride_a, const float *B, int ldb,
                       long long stride_b, float beta, float *C, int ldc,
                       long long stride_c, int batch) {
    if (M == 0 || N == 0 || batch == 0) return;
    CUBLAS_CHECK(cublasSgemmStridedBatched(
        cuda_blas(), trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
        trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &alpha, B, ldb,
        stride_b, A, lda, stride_a, &beta, C, ldc, stride_c, batch));
}
