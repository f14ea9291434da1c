// Exercise 9.1 - GPT-2's bytes-to-unicode table. See ch9_exercises.h.
#include "ch9_exercises.h"
#include "exercise.h"

void ex_bytes_to_unicode(uint32_t cp[256]) {
    EXERCISE_TODO("9.1");
}
