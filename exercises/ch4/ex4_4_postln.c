// Exercise 4.4 - the Post-LN block's forward pass. See ch4_exercises.h.
#include "ch4_exercises.h"
#include "exercise.h"

void ex_postln_block_forward(float *out, const float *inp,
                             const BlockWeights *w, int B, int T, int C,
                             int NH, int F) {
    EXERCISE_TODO("4.4");
}
