// Exercise 6.3 - warmup then cosine decay, nanoGPT's get_lr. See
// ch6_exercises.h.
#include "ch6_exercises.h"
#include "exercise.h"

float ex_lr_schedule(int it, int warmup, int decay_steps, float lr_max,
                     float lr_min) {
    EXERCISE_TODO("6.3");
}
