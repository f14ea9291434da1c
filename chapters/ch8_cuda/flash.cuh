// flash.cuh - causal self-attention on the GPU as one fused kernel each
// way, which never stores the (T, T) attention weights (flash.cu).
#ifndef CH8_FLASH_CUH
#define CH8_FLASH_CUH

#include <stdbool.h>
#include <stddef.h>

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

// The same two passes on the tensor cores (flash_tc.cu): q, k, v, dout
// and the weights rounded to bf16 for the matrix products, whose sums
// stay fp32, as is everything else. Head sizes 16, 32, 48 and 64 only
// (attention_flash_tc_supports); the program stops on another.
bool attention_flash_tc_supports(int HS);
void attention_forward_flash_tc_cuda(float *out,      // (B, NH, T, HS)
                                     float *lse,      // (B, NH, T)
                                     const float *q,  // (B, NH, T, HS)
                                     const float *k,  // (B, NH, T, HS)
                                     const float *v,  // (B, NH, T, HS)
                                     int B, int NH, int T, int HS);
void attention_backward_flash_tc_cuda(float *dq,          // (B, NH, T, HS)
                                      float *dk,          // (B, NH, T, HS)
                                      float *dv,          // (B, NH, T, HS)
                                      const float *dout,  // (B, NH, T, HS)
                                      const float *out,   // (B, NH, T, HS)
                                      const float *lse,   // (B, NH, T)
                                      const float *q,     // (B, NH, T, HS)
                                      const float *k,     // (B, NH, T, HS)
                                      const float *v,     // (B, NH, T, HS)
                                      int B, int NH, int T, int HS);

// D[i] = dout[i] . out[i] for each of the rows of HS floats, what both
// backward passes need; in a device buffer of flash.cu's, which the next
// call overwrites.
const float *attention_row_dots_cuda(const float *dout,  // (rows, HS)
                                     const float *out,   // (rows, HS)
                                     size_t rows, int HS);

#ifdef __cplusplus
}
#endif

#endif
