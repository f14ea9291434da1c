// activation.cuh - chapter 3's GELU (activation.h) on the GPU.
#ifndef CH8_ACTIVATION_CUH
#define CH8_ACTIVATION_CUH

#include <stddef.h>
#include <stdint.h>

#include "activation.h"   // Activation, and the CPU functions ported here

#ifdef __cplusplus
extern "C" {
#endif

// As gelu_forward and gelu_backward (+= into dinp); device pointers.
void gelu_forward_cuda(float *out,        // (n,)
                       const float *inp,  // (n,)
                       Activation kind, size_t n);
void gelu_backward_cuda(float *dinp,       // (n,)
                        const float *dout, // (n,)
                        const float *inp,  // (n,)
                        Activation kind, size_t n);

// For the feed-forward layer (ffn.cu): gelu_forward_cuda that also
// writes out rounded to bf16 into out16 (unless NULL), and the backward
// pass that sets dinp = dout * GELU'(inp) instead of adding (so dinp
// needs no clearing first and is not read) and writes its bf16 copy into
// dinp16 (unless NULL). The copies are what bf16 mode's next product
// reads (gemm.cuh's gemm_bf16_copy_begin).
void gelu_forward_copy_cuda(float *out, uint16_t *out16, const float *inp,
                            Activation kind, size_t n);
void gelu_backward_set_cuda(float *dinp, uint16_t *dinp16, const float *dout,
                            const float *inp, Activation kind, size_t n);

// The feed-forward layer's fused forms (ffn.cu, activation.cu says why):
// a = GELU(h + bias) where h (N, F) is the product without its bias
// (bias (F,) or NULL; h is not changed), with a's bf16 copy into a16
// unless NULL; and its backward pass, dh = (set) da * GELU'(h + bias),
// its bf16 copy into dh16 unless NULL, and dbias (F,) += the column sums
// of dh (unless NULL), the same bits as column_sums_cuda gives. Not
// reentrant: the sums go through linear.cu's scratch.
void bias_gelu_forward_cuda(float *a, uint16_t *a16, const float *h,
                            const float *bias, Activation kind, int N,
                            int F);
void gelu_backward_bias_cuda(float *dh, uint16_t *dh16, float *dbias,
                             const float *da, const float *h,
                             const float *bias, Activation kind, int N,
                             int F);

// The same with the threads per block chosen (the benchmarks time them).
void gelu_forward_cuda_block(float *out, const float *inp, Activation kind,
                             size_t n, unsigned threads);

#ifdef __cplusplus
}
#endif

#endif
