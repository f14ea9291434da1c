// Exercise 1.3 - the train/val split. See ch1_exercises.h.
#include "ch1_exercises.h"
#include "exercise.h"

void ex_split(const int *ids, size_t n, double train_frac, Split *train,
              Split *val) {
    EXERCISE_TODO("1.3");
}
