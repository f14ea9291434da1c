// Exercise 7.2 - multi-head cross-attention, forward. See
// ch7_exercises.h.
#include "ch7_exercises.h"
#include "exercise.h"

void ex_cross_attention(float *out, const float *x, const float *memory,
                        const float *q_proj_w, const float *q_proj_b,
                        const float *kv_proj_w, const float *kv_proj_b,
                        const float *out_proj_w, const float *out_proj_b,
                        const int *src_mask, int B, int Tq, int Tk, int C,
                        int NH) {
    EXERCISE_TODO("7.2");
}
