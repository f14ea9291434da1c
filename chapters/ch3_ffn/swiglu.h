// swiglu.h - the SwiGLU feed-forward network of PaLM and LLaMA, a drop-in
// replacement for the GELU network of ffn.h:
//
//   g   = inp @ w_gate^T + b_gate     (B,T,H)  the gate
//   u   = inp @ w_up^T + b_up         (B,T,H)  the values it lets through
//   s   = SiLU(g) * u                 (B,T,H)  SiLU(g) = g * sigmoid(g)
//   out = s @ w_down^T + b_down       (B,T,C)
//
// Three matrices instead of two, so the hidden width H is usually 2/3 of
// the F a GELU network would use (swiglu_hidden): the parameter count then
// stays about the same. Weights are stored (out, in) as PyTorch stores
// them: w_gate and w_up (H, C), w_down (C, H); biases may be NULL (LLaMA
// has none). Cache and scratch work as in ffn.h.
#ifndef CH3_SWIGLU_H
#define CH3_SWIGLU_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

// Cache and scratch, as in ffn.h; defined with their allocation, at the
// end.
typedef struct SwigluCache SwigluCache;
typedef struct SwigluScratch SwigluScratch;

//> swiglu-gate-api
// The gate, element by element: s = SiLU(g) * u.
void swiglu_gate_forward(float *s,         // (n,)
                         const float *g,   // (n,)
                         const float *u,   // (n,)
                         size_t n);
// dg += ds * u * SiLU'(g),  du += ds * SiLU(g)
void swiglu_gate_backward(float *dg,        // (n,)
                          float *du,        // (n,)
                          const float *ds,  // (n,)
                          const float *g,   // (n,)
                          const float *u,   // (n,)
                          size_t n);
//< swiglu-gate-api

//> swiglu-api
// The forward pass; as ffn_forward, with the three weights.
int swiglu_forward(float *out,            // (B, T, C)
                   SwigluCache *cache,    // filled in for the backward
                   const float *inp,      // (B, T, C)
                   const float *w_gate,   // (H, C)
                   const float *b_gate,   // (H,) or NULL
                   const float *w_up,     // (H, C)
                   const float *b_up,     // (H,) or NULL
                   const float *w_down,   // (C, H)
                   const float *b_down,   // (C,) or NULL
                   int B, int T, int C, int H, Error *err);

// The backward pass, after a swiglu_forward with the same arguments that
// returned 0; accumulates (+=) like ffn_backward.
void swiglu_backward(float *dinp,             // (B, T, C) or NULL
                     float *dw_gate,          // (H, C)
                     float *db_gate,          // (H,) or NULL
                     float *dw_up,            // (H, C)
                     float *db_up,            // (H,) or NULL
                     float *dw_down,          // (C, H)
                     float *db_down,          // (C,) or NULL
                     SwigluScratch *scratch,  // work space, overwritten
                     const float *dout,       // (B, T, C)
                     const SwigluCache *cache,
                     const float *inp,        // (B, T, C)
                     const float *w_gate,     // (H, C)
                     const float *w_up,       // (H, C)
                     const float *w_down,     // (C, H)
                     int B, int T, int C, int H);
//< swiglu-api

// The hidden width that matches a GELU network of width F in parameters:
// 2F/3, rounded down (341 for F = 512), as int(2 * d_ff / 3) in Python.
int swiglu_hidden(int F);

// Parameters of one SwiGLU network: three matrices, plus biases if any.
size_t swiglu_param_count(int C, int H, bool bias);

// ---- memory ----------------------------------------------------------------

struct SwigluCache {
    int B, T, C, H;    // the sizes it was allocated for
    float *g;          // (B, T, H)  the gate, before SiLU
    float *u;          // (B, T, H)  the up projection
    float *s;          // (B, T, H)  SiLU(g) * u, w_down's input
    float *mem;
};

struct SwigluScratch {
    int B, T, C, H;
    float *ds;         // (B, T, H)
    float *dg;         // (B, T, H)
    float *du;         // (B, T, H)
    float *mem;
};

// 0, or -1 with a message for bad sizes; *_free releases and clears;
// *_floats: what the allocation holds.
int swiglu_cache_alloc(SwigluCache *c, int B, int T, int C, int H,
                       Error *err);
void swiglu_cache_free(SwigluCache *c);
size_t swiglu_cache_floats(int B, int T, int C, int H);
int swiglu_scratch_alloc(SwigluScratch *s, int B, int T, int C, int H,
                         Error *err);
void swiglu_scratch_free(SwigluScratch *s);
size_t swiglu_scratch_floats(int B, int T, int C, int H);

#endif
