// ffn.cu - chapter 3's feed-forward network on the GPU: ffn.c's three
// calls, each now a GPU call. The CPU's FfnCache records the activation;
// here the caller passes it to the backward pass again. Two differences:
// the backward pass sets its gradients instead of clearing them and
// adding (each is that one term): da and dh inside (linear_backward_set_
// cuda, and the GELU's gelu_backward_set_cuda), and dinp, whence its name
// ffn_backward_set_cuda (the weights' gradients still add up); and in
// bf16 mode both GELU kernels write the
// bf16 copy of their output that the next product reads (gemm.cuh), so
// that no rounding pass of its own reads the (N, F) array again.
#include "cuda_rt.h"

extern "C" {
#include "activation.cuh"
#include "ffn.cuh"
#include "gemm.cuh"
#include "linear.cuh"
}

//> ffn-cuda
void ffn_forward_cuda(float *out, FfnCacheCuda *cache, const float *inp,
                      const float *c_fc_w, const float *c_fc_b,
                      const float *c_proj_w, const float *c_proj_b,
                      Activation act, int B, int T, int C, int F) {
    int N = B * T;                    // position-wise: just rows
    size_t nf = (size_t)N * F;
    linear_forward_cuda(cache->h, inp, c_fc_w, c_fc_b, N, C, F);
    unsigned long before = cuda_writes();   // a = GELU(h)
    uint16_t *a16 = gemm_bf16_copy_begin(cache->a, nf, cache->a16);
    gelu_forward_copy_cuda(cache->a, a16, cache->h, act, nf);
    gemm_bf16_copy_end(before, cache->a, nf);
    linear_forward_cuda(out, cache->a, c_proj_w, c_proj_b, N, F, C);
}

void ffn_backward_set_cuda(float *dinp, float *dc_fc_w, float *dc_fc_b,
                           float *dc_proj_w, float *dc_proj_b,
                           FfnScratchCuda *scratch, const float *dout,
                           const FfnCacheCuda *cache, const float *inp,
                           const float *c_fc_w, const float *c_proj_w,
                           Activation act, int B, int T, int C, int F) {
    FfnScratchCuda *s = scratch;
    int N = B * T;
    size_t nf = (size_t)N * F;
    // out = a @ c_proj_w^T + c_proj_b (da set, not added to)
    linear_backward_set_cuda(s->da, dc_proj_w, dc_proj_b, dout, cache->a,
                             c_proj_w, N, F, C);
    unsigned long before = cuda_writes();   // a = GELU(h)
    uint16_t *dh16 = gemm_bf16_copy_begin(s->dh, nf, NULL);
    gelu_backward_set_cuda(s->dh, dh16, s->da, cache->h, act, nf);
    gemm_bf16_copy_end(before, s->dh, nf);
    // h = inp @ c_fc_w^T + c_fc_b (dinp set)
    linear_backward_set_cuda(dinp, dc_fc_w, dc_fc_b, s->dh, inp, c_fc_w, N,
                             C, F);
}
//< ffn-cuda

//> ffn-fused-cuda
// The fused forms (block.cu's default): c_fc's product writes h without
// its bias, and one kernel adds the bias and applies the GELU; c_proj's
// product writes out without its bias, which the caller adds in the
// kernel that adds the residual (residual.cu). Backward, the GELU's
// kernel also sums the bias's gradient.
void ffn_forward_fused_cuda(float *out, FfnCacheCuda *cache, const float *inp,
                            const float *c_fc_w, const float *c_fc_b,
                            const float *c_proj_w, Activation act, int B,
                            int T, int C, int F) {
    int N = B * T;
    size_t nf = (size_t)N * F;
    linear_forward_cuda(cache->h, inp, c_fc_w, NULL, N, C, F);
    unsigned long before = cuda_writes();   // a = GELU(h + c_fc_b)
    uint16_t *a16 = gemm_bf16_copy_begin(cache->a, nf, cache->a16);
    bias_gelu_forward_cuda(cache->a, a16, cache->h, c_fc_b, act, N, F);
    gemm_bf16_copy_end(before, cache->a, nf);
    linear_forward_cuda(out, cache->a, c_proj_w, NULL, N, F, C);
}

void ffn_backward_fused_set_cuda(float *dinp, float *dc_fc_w, float *dc_fc_b,
                                 float *dc_proj_w, float *dc_proj_b,
                                 FfnScratchCuda *scratch, const float *dout,
                                 const FfnCacheCuda *cache, const float *inp,
                                 const float *c_fc_w, const float *c_fc_b,
                                 const float *c_proj_w, Activation act, int B,
                                 int T, int C, int F) {
    FfnScratchCuda *s = scratch;
    int N = B * T;
    size_t nf = (size_t)N * F;
    // out = a @ c_proj_w^T (+ c_proj_b, added by the caller: its gradient
    // is still dout's column sums)
    linear_backward_set_cuda(s->da, dc_proj_w, dc_proj_b, dout, cache->a,
                             c_proj_w, N, F, C);
    // a = GELU(h + c_fc_b): dh, and c_fc_b's gradient in the same pass
    unsigned long before = cuda_writes();
    uint16_t *dh16 = gemm_bf16_copy_begin(s->dh, nf, NULL);
    gelu_backward_bias_cuda(s->dh, dh16, dc_fc_b, s->da, cache->h, c_fc_b,
                            act, N, F);
    gemm_bf16_copy_end(before, s->dh, nf);
    // h = inp @ c_fc_w^T (dinp set; the bias's gradient is done)
    linear_backward_set_cuda(dinp, dc_fc_w, NULL, s->dh, inp, c_fc_w, N, C,
                             F);
}
//< ffn-fused-cuda
