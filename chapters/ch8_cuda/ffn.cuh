// ffn.cuh - chapter 3's feed-forward network (ffn.h) on the GPU.
#ifndef CH8_FFN_CUH
#define CH8_FFN_CUH

#include <stdint.h>

#include "activation.h"

#ifdef __cplusplus
extern "C" {
#endif

// FfnCache's and FfnScratch's views, on the device.
typedef struct {
    float *h;      // (B, T, F) c_fc's output (without its bias in the
                   // fused forms)
    float *a;      // (B, T, F) after the activation
    uint16_t *a16; // (B, T, F) its bf16 copy, kept (bf16 mode), or NULL
} FfnCacheCuda;

typedef struct {
    float *dh, *da;   // (B, T, F)
} FfnScratchCuda;

// As ffn_forward and ffn_backward (chapter 3), device pointers; act is
// GELU_EXACT or GELU_TANH (the GPU has no ReLU or SwiGLU yet).
void ffn_forward_cuda(float *out, FfnCacheCuda *cache, const float *inp,
                      const float *c_fc_w, const float *c_fc_b,
                      const float *c_proj_w, const float *c_proj_b,
                      Activation act, int B, int T, int C, int F);
// ffn_backward's gradients, except that dinp is set to its gradient,
// not added to (it needs no clearing first; the weights' gradients are
// added to, as on the CPU).
void ffn_backward_set_cuda(float *dinp, float *dc_fc_w, float *dc_fc_b,
                           float *dc_proj_w, float *dc_proj_b,
                           FfnScratchCuda *scratch, const float *dout,
                           const FfnCacheCuda *cache, const float *inp,
                           const float *c_fc_w, const float *c_proj_w,
                           Activation act, int B, int T, int C, int F);

// The fused forms (ffn.cu): the same layer, except that out comes
// without c_proj's bias, which the caller adds (block.cu adds it with the
// residual), and that cache->h holds c_fc's product without its bias
// (the GELU's kernels add it). The backward pass takes c_fc_b for that,
// and still gives c_proj_b's gradient (dout's column sums).
void ffn_forward_fused_cuda(float *out, FfnCacheCuda *cache, const float *inp,
                            const float *c_fc_w, const float *c_fc_b,
                            const float *c_proj_w, Activation act, int B,
                            int T, int C, int F);
void ffn_backward_fused_set_cuda(float *dinp, float *dc_fc_w, float *dc_fc_b,
                                 float *dc_proj_w, float *dc_proj_b,
                                 FfnScratchCuda *scratch, const float *dout,
                                 const FfnCacheCuda *cache, const float *inp,
                                 const float *c_fc_w, const float *c_fc_b,
                                 const float *c_proj_w, Activation act, int B,
                                 int T, int C, int F);

#ifdef __cplusplus
}
#endif

#endif
