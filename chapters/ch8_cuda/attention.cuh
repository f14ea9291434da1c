// attention.cuh - chapter 2's softmax and scaled dot-product attention
// (attention.h) on the GPU.
#ifndef CH8_ATTENTION_CUH
#define CH8_ATTENTION_CUH

#include <stdbool.h>
#include <stdint.h>

#include "attention.h"

#ifdef __cplusplus
extern "C" {
#endif

// As softmax_forward and softmax_backward (dinp +=); device pointers.
// out may be the same array as inp. One difference: a row whose every
// value is -inf (nothing to weigh) comes out as zeros, not NaN.
void softmax_forward_cuda(float *out,        // (N, D)
                          const float *inp,  // (N, D)
                          int N, int D);
void softmax_backward_cuda(float *dinp,        // (N, D)
                           const float *dout,  // (N, D)
                           const float *out,   // (N, D)
                           int N, int D);

// As attention_forward, with device pointers (key_mask too, or NULL), but
// nothing to report: the caller has checked the sizes (every one at
// least 1) with the CPU's rules, so there is no Error and no return value.
void attention_forward_cuda(float *out,           // (B, NH, Tq, HS)
                            float *att,           // (B, NH, Tq, Tk)
                            const float *q,       // (B, NH, Tq, HS)
                            const float *k,       // (B, NH, Tk, HS)
                            const float *v,       // (B, NH, Tk, HS)
                            const int *key_mask,  // (B, Tk) or NULL
                            bool causal, int B, int NH, int Tq, int Tk,
                            int HS);

// As attention_backward: dq, dk, dv += their gradients; datt is scratch,
// overwritten. Device pointers.
void attention_backward_cuda(float *dq,          // (B, NH, Tq, HS)
                             float *dk,          // (B, NH, Tk, HS)
                             float *dv,          // (B, NH, Tk, HS)
                             float *datt,        // (B, NH, Tq, Tk)
                             const float *dout,  // (B, NH, Tq, HS)
                             const float *att,   // (B, NH, Tq, Tk)
                             const float *q,     // (B, NH, Tq, HS)
                             const float *k,     // (B, NH, Tk, HS)
                             const float *v,     // (B, NH, Tk, HS)
                             int B, int NH, int Tq, int Tk, int HS);

// HeadsLayout, heads_packed and heads_in_rows (where the heads live:
// (B, NH, T, HS), or columns of the rows of (B, T, ld)) are chapter 2's
// (attention.h).

// attention_forward_cuda and attention_backward_cuda with each array in
// its own layout: q and dq in lq, k, v, dk and dv in lkv, out and dout
// in lo. att and datt are (B, NH, Tq, Tk), as there. The backward pass
// adds into dq, dk and dv when accumulate, else sets them (no clearing
// first, and they are not read).
// att16: where bf16 mode keeps the weights' bf16 copy, pinned for the
// backward pass (gemm.cuh), or NULL for a buffer of gemm.cu's.
// block: rows per causal block, or 0. With block > 0, causal and
// Tq == Tk, the products run a block of query rows at a time over the
// keys its last row sees (attention.cu), and of att and datt only those
// blocks are written or read: query t's keys up to the end of its block,
// min(Tk, (t / block + 1) * block); the rest of each row is left as it
// was. The backward pass takes the block the forward pass was given when
// it was causal, else 0.
void attention_forward_strided_cuda(float *out, HeadsLayout lo, float *att,
                                    uint16_t *att16, const float *q,
                                    HeadsLayout lq,
                                    const float *k, const float *v,
                                    HeadsLayout lkv, const int *key_mask,
                                    bool causal, int block, int B, int NH,
                                    int Tq, int Tk, int HS);
void attention_backward_strided_cuda(float *dq, float *dk, float *dv,
                                     float *datt, const float *dout,
                                     const float *att, const float *q,
                                     const float *k, const float *v,
                                     HeadsLayout lq, HeadsLayout lkv,
                                     HeadsLayout lo, bool accumulate,
                                     int block, int B, int NH, int Tq,
                                     int Tk, int HS);

#ifdef __cplusplus
}
#endif

#endif
