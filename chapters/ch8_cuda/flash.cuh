// flash.cuh - causal self-attention on the GPU as one fused kernel each
// way, which never stores the (T, T) attention weights (flash.cu).
#ifndef CH8_FLASH_CUH
#define CH8_FLASH_CUH

#ifdef __cplusplus
extern "C" {
#endif

// What attention_forward (attention.h) computes with causal = true,
// key_mask = NULL and Tq = Tk = T; device pointers. Instead of the weights
// it keeps, per query row, lse = log(sum_s exp(score_s)) over the keys the
// row sees (scores already scaled by 1/sqrt(HS)): all the backward pass
// needs to recompute any weight as exp(score - lse). HS at most 128.
void attention_forward_flash_cuda(float *out,      // (B, NH, T, HS)
                                  float *lse,      // (B, NH, T)
                                  const float *q,  // (B, NH, T, HS)
                                  const float *k,  // (B, NH, T, HS)
                                  const float *v,  // (B, NH, T, HS)
                                  int B, int NH, int T, int HS);

// Accumulates (+=) dq, dk, dv as attention_backward does, given dout and
// the out and lse of attention_forward_flash_cuda on the same q, k, v.
void attention_backward_flash_cuda(float *dq,          // (B, NH, T, HS)
                                   float *dk,          // (B, NH, T, HS)
                                   float *dv,          // (B, NH, T, HS)
                                   const float *dout,  // (B, NH, T, HS)
                                   const float *out,   // (B, NH, T, HS)
                                   const float *lse,   // (B, NH, T)
                                   const float *q,     // (B, NH, T, HS)
                                   const float *k,     // (B, NH, T, HS)
                                   const float *v,     // (B, NH, T, HS)
                                   int B, int NH, int T, int HS);

#ifdef __cplusplus
}
#endif

#endif
