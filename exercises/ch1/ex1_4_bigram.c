// Exercise 1.4 - the bigram baseline. See ch1_exercises.h.
#include "ch1_exercises.h"
#include "exercise.h"

void ex_bigram_count(long *counts, const int *ids, size_t n, int V) {
    EXERCISE_TODO("1.4");
}

double ex_bigram_loss(const long *counts, int V, const int *ids, size_t n,
                      double alpha) {
    EXERCISE_TODO("1.4");
}
