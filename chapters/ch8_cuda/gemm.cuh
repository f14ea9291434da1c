// gemm.cuh - common/gemm.h's one matrix product, on the GPU (cuBLAS).
#ifndef CH8_GEMM_CUH
#define CH8_GEMM_CUH

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

// A batch of outer x inner products whose matrices lie on a grid:
// product (i, j) reads A + i * a_outer + j * a_inner (in floats), and the
// same for B and C. Attention's heads inside the linear layer's rows are
// such a grid (sequences outer, heads inner), where no single stride
// reaches them all. One cuBLAS call (a strided batch when one stride
// does reach them all).
void gemm_grid_cuda(bool trans_a, bool trans_b, int M, int N, int K,
                    float alpha, const float *A, int lda, long long a_outer,
                    long long a_inner, const float *B, int ldb,
                    long long b_outer, long long b_inner, float beta,
                    float *C, int ldc, long long c_outer, long long c_inner,
                    int outer, int inner);

// bf16 mixed precision (off: fp32, the default). On, both functions
// above round A and B to bf16 (into scratch buffers of gemm.cu's) and
// multiply them on the tensor cores, with the sums and C in fp32: the
// weights, the activations and every other kernel stay fp32.
void gemm_set_bf16(bool on);
bool gemm_bf16(void);

// In bf16 mode, rounds x[0..n) now, so that the products that follow
// find any operand that lies inside it, unchanged since, already cast (a
// whole qkv array, whose q, k and v the heads' products read a piece at
// a time); off, nothing. Only ever a saving: the products are right
// either way.
void gemm_bf16_prepare(const float *x, size_t n);

// A copy made by the kernel that computes the operand, instead of by a
// pass of its own. In bf16 mode, gemm_bf16_copy_begin returns room for
// n bf16 values (NULL when off): keep when given, else a buffer of
// gemm.cu's. The caller launches the kernel that writes x[0..n) and,
// beside it, x's values rounded to bf16 into that room, then calls
// gemm_bf16_copy_end with what cuda_writes() returned before the launch:
// the products that follow find the copy as if they had cast x
// themselves (a copy in keep stays pinned, as gemm_bf16_pin's). The
// caller vouches that its writes since `before` changed x and the copy
// only, so copies of other memory stay good too: attention's softmax
// writes the weights between two products that read v.
uint16_t *gemm_bf16_copy_begin(const float *x, size_t n, uint16_t *keep);
void gemm_bf16_copy_end(unsigned long before, const float *x, size_t n);

// In bf16 mode, rounds x[0..n) into copy (n values of the caller's) and
// pins it: every product until gemm_bf16_unpin_all finds there any
// operand inside x. The caller vouches that x does not change meanwhile
// (a product writing over x unpins it). The model pins the activations
// its backward pass multiplies again; gpt_forward_cuda unpins all first.
// Off, or copy NULL: nothing.
void gemm_bf16_pin(const float *x, size_t n, uint16_t *copy);
void gemm_bf16_unpin_all(void);

// Grows every buffer of bf16 copies to the largest operand asked for so
// far: after a step, the next same step finds room wherever its
// operands land and frees nothing (what a graph's capture needs:
// runtime.cuh).
void gemm_bf16_reserve(void);

// How many floats gemm.cu has rounded to bf16 so far (its rounding
// passes; not the copies kernels write beside their output): what the
// checks count to see that a copy was found rather than made again.
unsigned long long gemm_bf16_cast_floats(void);

// out[i] = the bf16 nearest to in[i] (ties to even), as its 16 bits; the
// rounding gemm_cuda applies in bf16 mode. Device pointers.
void bf16_round_cuda(uint16_t *out, const float *in, size_t n);

#ifdef __cplusplus
}
#endif

#endif
