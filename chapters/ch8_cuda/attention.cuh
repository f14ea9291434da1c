// attention.cuh - chapter 2's softmax and scaled dot-product attention
// (attention.h) on the GPU.
#ifndef CH8_ATTENTION_CUH
#define CH8_ATTENTION_CUH

#include <stdbool.h>

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

#ifdef __cplusplus
}
#endif

#endif
