// Exercise 5.4 - top-p (nucleus) filtering of probabilities. See
// ch5_exercises.h.
#include "ch5_exercises.h"
#include "exercise.h"

void ex_top_p(float *probs, int V, float p) {
    EXERCISE_TODO("5.4");
}
