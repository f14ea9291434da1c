// Exercise 2.5 - single-head attention, backward. See ch2_exercises.h.
#include "ch2_exercises.h"
#include "exercise.h"

void ex_attention_head_backward(float *dq, float *dk, float *dv,
                                const float *dout, const float *att,
                                const float *q, const float *k,
                                const float *v, int Tq, int Tk, int HS) {
    EXERCISE_TODO("2.5");
}
