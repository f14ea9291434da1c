// Exercise 5.2 - the sinusoidal position table. See ch5_exercises.h.
#include "ch5_exercises.h"
#include "exercise.h"

void ex_sinusoidal_table(float *pe, int T, int C) {
    EXERCISE_TODO("5.2");
}
