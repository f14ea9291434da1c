// Exercise 1.2 - a random batch. See ch1_exercises.h.
#include "ch1_exercises.h"
#include "exercise.h"

void ex_get_batch(int *x, int *y, const int *ids, size_t n, int B, int T,
                  Rng *rng) {
    EXERCISE_TODO("1.2");
}
