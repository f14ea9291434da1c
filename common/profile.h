// profile.h - where a training step's time goes, by kind of operation.
//
// A layer wraps single calls: PROFILE(kind, call) in a forward pass,
// PROFILE_BW(kind, call) in a backward pass. With profiling off (the
// default) that is the call and one test of a flag; with it on, the call
// is timed and its seconds added to kind's total for that pass. Chapter
// 6's --profile prints the totals. The kinds are kinds of work, not parts
// of one model, so a new model needs nothing new here. (Calls that run
// their own threads are timed as wall time.)
#ifndef COMMON_PROFILE_H
#define COMMON_PROFILE_H

#include <stdbool.h>

#include "timer.h"

typedef enum {
    PROF_DATA,         // drawing batches
    PROF_EMBED,        // embedding lookups and their scatter
    PROF_MATMUL,       // every Linear layer's matrix product
    PROF_ATTENTION,    // attention core: scores, softmax, sum, heads
    PROF_NORM,         // LayerNorm, RMSNorm
    PROF_ELEMENTWISE,  // activations, residual adds, dropout
    PROF_LOSS,         // softmax + cross-entropy
    PROF_OPTIM,        // zeroing, the gradient norm and clipping, AdamW
    PROF_KINDS
} ProfKind;

extern bool prof_on;        // set to turn profiling on

// Seconds spent in each kind, forward [0] and backward [1].
extern double prof_seconds[PROF_KINDS][2];

const char *prof_name(ProfKind k);
void prof_reset(void);

#define PROFILE_PASS_(kind, pass, ...)                                  \
    do {                                                                 \
        if (!prof_on) {                                                  \
            __VA_ARGS__;                                                 \
        } else {                                                         \
            double prof_t0_ = time_now();                                \
            __VA_ARGS__;                                                 \
            prof_seconds[kind][pass] += time_now() - prof_t0_;           \
        }                                                                \
    } while (0)
#define PROFILE(kind, ...) PROFILE_PASS_(kind, 0, __VA_ARGS__)
#define PROFILE_BW(kind, ...) PROFILE_PASS_(kind, 1, __VA_ARGS__)

#endif
