// Exercise 2.3 - single-head attention, forward. See ch2_exercises.h.
#include "ch2_exercises.h"
#include "exercise.h"

void ex_attention_head(float *out, float *att, const float *q,
                       const float *k, const float *v, const int *key_mask,
                       bool causal, int Tq, int Tk, int HS) {
    EXERCISE_TODO("2.3");
}
