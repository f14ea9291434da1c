// Exercise 2.1 - a numerically stable softmax. See ch2_exercises.h.
#include "ch2_exercises.h"
#include "exercise.h"

void ex_softmax(float *out, const float *inp, int N, int D) {
    EXERCISE_TODO("2.1");
}
