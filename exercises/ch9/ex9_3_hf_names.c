// Exercise 9.3 - Hugging Face's GPT-2 names and the Conv1D transpose.
// See ch9_exercises.h.
#include "ch9_exercises.h"
#include "exercise.h"

int ex_hf_name(char *ours, size_t size, const char *hf) {
    EXERCISE_TODO("9.3");
}

void ex_conv1d_transpose(float *out, const float *inp, int rows, int cols) {
    EXERCISE_TODO("9.3");
}
