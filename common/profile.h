// profile.h - where a training step's time goes, by kind of operation.
//
// The layers wrap their main calls in PROFILE(kind, statements): with profiling
// off (the default) that is the call and one test of a flag; with it on,
// the call is timed and its seconds added to kind's total, split into the
// forward and backward passes. Chapter 6's --profile prints the totals.
// (Timings of calls that run their own threads are wall time.)
#ifndef COMMON_PROFILE_H
#define COMMON_PROFILE_H

#include <stdbool.h>

#include "timer.h"

typedef enum {
    PROF_DATA,        // drawing batches
    PROF_EMBED,       // token + position lookup and its scatter
    PROF_QKV,         // matmul: attn.c_attn
    PROF_ATTENTION,   // scores, softmax, weighted sum, head reshuffles
    PROF_ATTN_PROJ,   // matmul: attn.c_proj
    PROF_FC,          // matmul: mlp.c_fc
    PROF_GELU,
    PROF_FC_PROJ,     // matmul: mlp.c_proj
    PROF_LAYERNORM,   // ln_1, ln_2, ln_f
    PROF_RESIDUAL,    // residual adds and dropout
    PROF_HEAD,        // matmul: the LM head (wte^T)
    PROF_XENT,        // softmax + cross-entropy
    PROF_OPTIM,       // zeroing, the gradient norm and clipping, AdamW
    PROF_KINDS
} ProfKind;

extern bool prof_on;        // set to turn profiling on
extern bool prof_backward;  // which pass the timings go to

// Seconds spent in each kind, forward [0] and backward [1].
extern double prof_seconds[PROF_KINDS][2];

const char *prof_name(ProfKind k);
void prof_reset(void);

#define PROFILE(kind, ...)                                               \
    do {                                                                 \
        if (!prof_on) {                                                  \
            __VA_ARGS__;                                                 \
        } else {                                                         \
            double prof_t0_ = time_now();                                \
            __VA_ARGS__;                                                 \
            prof_seconds[kind][prof_backward] += time_now() - prof_t0_;  \
        }                                                                \
    } while (0)

#endif
