// Exercise 1.5 - a strict UTF-8 decoder. See ch1_exercises.h.
#include "ch1_exercises.h"
#include "exercise.h"

long ex_utf8_decode(const char *bytes, size_t n, uint32_t *out,
                    size_t *bad_offset) {
    EXERCISE_TODO("1.5");
}
