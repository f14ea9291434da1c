// Exercise 2.4 - splitting and merging heads. See ch2_exercises.h.
#include "ch2_exercises.h"
#include "exercise.h"

void ex_split_qkv(float *q, float *k, float *v, const float *qkv, int B,
                  int T, int C, int NH) {
    EXERCISE_TODO("2.4");
}

void ex_merge_heads(float *y, const float *yh, int B, int T, int C, int NH) {
    EXERCISE_TODO("2.4");
}
