// gemm.cu - the row-major product of common/gemm.h through cuBLAS, which
// is column-major (Fortran's order, as BLAS always was).
//
// A row-major (M, N) matrix, read column-major, is its (N, M) transpose.
// So C = op(A) op(B) in row-major is C^T = op(B)^T op(A)^T in column-major:
// the same call with the operands swapped and M and N exchanged. No data
// moves; only the order of the arguments changes.
#include "cuda_rt.h"

#ifdef __CUDACC__
#include <cuda_bf16.h>
#endif

extern "C" {
#include "gemm.cuh"
}

typedef __nv_bfloat16 bf16;

// ---- bf16 ---------------------------------------------------------------------

static bool use_bf16;

void gemm_set_bf16(bool on) { use_bf16 = on; }
bool gemm_bf16(void) { return use_bf16; }

#define CAST_THREADS 256

//> bf16-cuda
// out[i] = in[i] rounded to the nearest bf16: one thread per float.
__global__ void to_bf16_kernel(bf16 *out, const float *in, size_t n) {
    size_t i = (size_t)blockIdx.x * CAST_THREADS + threadIdx.x;
    if (i < n) out[i] = __float2bfloat16(in[i]);
}
//< bf16-cuda

static void to_bf16(bf16 *out, const float *in, size_t n) {
    if (n) LAUNCH(to_bf16_kernel, ceil_div(n, CAST_THREADS), CAST_THREADS,
                  0, out, in, n);
}

void bf16_round_cuda(uint16_t *out, const float *in, size_t n) {
    to_bf16((bf16 *)out, in, n);
}

// The two operands' bf16 copies: grown on demand and never freed.
static bf16 *scratch[2];
static size_t scratch_size[2];

// Operand `which` (0 or 1) of extent n floats, in bf16.
static const bf16 *as_bf16(int which, const float *x, size_t n) {
    if (n > scratch_size[which]) {
        cuda_free(scratch[which]);
        CUDA_CHECK(cudaMalloc((void **)&scratch[which], n * sizeof(bf16)));
        scratch_size[which] = n;
    }
    to_bf16(scratch[which], x, n);
    return scratch[which];
}

// The floats a row-major operand spans: `rows` rows of `cols` floats,
// ld apart, and for a batch, batch - 1 strides more.
static size_t extent(bool trans, int rows, int cols, int ld,
                     long long stride, int batch) {
    if (trans) {
        int t = rows;
        rows = cols, cols = t;
    }
    if (rows == 0 || cols == 0) return 0;
    return (size_t)(batch - 1) * stride + (size_t)(rows - 1) * ld + cols;
}

//> gemm-cuda
void gemm_cuda(bool trans_a, bool trans_b, int M, int N, int K, float alpha,
               const float *A, int lda, const float *B, int ldb, float beta,
               float *C, int ldc) {
    if (M == 0 || N == 0) return;
    if (use_bf16 && K > 0) {   // op(A) is (M, K), op(B) is (K, N)
        const bf16 *a = as_bf16(0, A, extent(trans_a, M, K, lda, 0, 1));
        const bf16 *b = as_bf16(1, B, extent(trans_b, K, N, ldb, 0, 1));
        CUBLAS_CHECK(cublasGemmEx(
            cuda_blas(), trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
            trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &alpha, b,
            CUDA_R_16BF, ldb, a, CUDA_R_16BF, lda, &beta, C, CUDA_R_32F, ldc,
            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        return;
    }
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
    if (use_bf16 && K > 0) {
        const bf16 *a = as_bf16(0, A, extent(trans_a, M, K, lda, stride_a,
                                             batch));
        const bf16 *b = as_bf16(1, B, extent(trans_b, K, N, ldb, stride_b,
                                             batch));
        CUBLAS_CHECK(cublasGemmStridedBatchedEx(
            cuda_blas(), trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
            trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &alpha, b,
            CUDA_R_16BF, ldb, stride_b, a, CUDA_R_16BF, lda, stride_a, &beta,
            C, CUDA_R_32F, ldc, stride_c, batch, CUBLAS_COMPUTE_32F,
            CUBLAS_GEMM_DEFAULT));
        return;
    }
    CUBLAS_CHECK(cublasSgemmStridedBatched(
        cuda_blas(), trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
        trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &alpha, B, ldb,
        stride_b, A, lda, stride_a, &beta, C, ldc, stride_c, batch));
}
