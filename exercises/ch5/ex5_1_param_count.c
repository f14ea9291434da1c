// Exercise 5.1 - counting the parameters of a GPT. See ch5_exercises.h.
#include "ch5_exercises.h"
#include "exercise.h"

size_t ex_gpt_param_count(const GptConfig *cfg) {
    EXERCISE_TODO("5.1");
}
