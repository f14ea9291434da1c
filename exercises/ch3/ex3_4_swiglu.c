// Exercise 3.4 - SwiGLU, forward and backward. See ch3_exercises.h.
#include "ch3_exercises.h"
#include "exercise.h"

void ex_swiglu_forward(float *out, float *gate, float *up, const float *x,
                       const float *w_gate, const float *w_up,
                       const float *w_down, int N, int C, int H) {
    EXERCISE_TODO("3.4");
}

void ex_swiglu_backward(float *dx, float *dw_gate, float *dw_up,
                        float *dw_down, const float *dout, const float *gate,
                        const float *up, const float *x, const float *w_gate,
                        const float *w_up, const float *w_down, int N, int C,
                        int H) {
    EXERCISE_TODO("3.4");
}
