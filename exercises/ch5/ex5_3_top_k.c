// Exercise 5.3 - top-k filtering of logits. See ch5_exercises.h.
#include "ch5_exercises.h"
#include "exercise.h"

void ex_top_k(float *logits, int V, int k) {
    EXERCISE_TODO("5.3");
}
