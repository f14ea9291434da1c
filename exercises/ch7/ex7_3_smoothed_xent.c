// Exercise 7.3 - label-smoothed cross-entropy, forward and backward. See
// ch7_exercises.h.
#include "ch7_exercises.h"
#include "exercise.h"

float ex_smoothed_xent(float *dlogits, const float *logits,
                       const int *targets, int N, int V, int pad,
                       float eps) {
    EXERCISE_TODO("7.3");
}
