// Exercise 5.5 - the embedding's backward pass with a tied LM head. See
// ch5_exercises.h.
#include "ch5_exercises.h"
#include "exercise.h"

void ex_embedding_backward(float *dwte, float *dwpe, const float *dx,
                           const int *idx, const float *dlogits,
                           const float *h, int B, int T, int C, int V) {
    EXERCISE_TODO("5.5");
}
