// Exercise 2.2 - masked, scaled attention scores. See ch2_exercises.h.
#include "ch2_exercises.h"
#include "exercise.h"

void ex_masked_scores(float *scores, const float *q, const float *k,
                      const int *key_mask, bool causal, int Tq, int Tk,
                      int HS) {
    EXERCISE_TODO("2.2");
}
