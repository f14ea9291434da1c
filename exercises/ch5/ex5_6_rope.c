// Exercise 5.6 - rotary position embedding (RoPE). See ch5_exercises.h.
#include "ch5_exercises.h"
#include "exercise.h"

void ex_rope(float *x, int B, int NH, int T, int HS, int pos0) {
    EXERCISE_TODO("5.6");
}
