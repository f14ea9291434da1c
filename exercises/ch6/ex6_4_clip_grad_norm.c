// Exercise 6.4 - global gradient-norm clipping, as clip_grad_norm_. See
// ch6_exercises.h.
#include "ch6_exercises.h"
#include "exercise.h"

double ex_clip_grad_norm(float *g, size_t n, float max_norm) {
    EXERCISE_TODO("6.4");
}
