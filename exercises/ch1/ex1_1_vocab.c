// Exercise 1.1 - vocabulary, encode, decode. See ch1_exercises.h.
#include "ch1_exercises.h"
#include "exercise.h"

int ex_vocab_build(Vocab *v, const uint32_t *text, size_t n) {
    EXERCISE_TODO("1.1");
}

int ex_encode(const Vocab *v, const uint32_t *text, size_t n, int *ids) {
    EXERCISE_TODO("1.1");
}

int ex_decode(const Vocab *v, const int *ids, size_t n, uint32_t *text) {
    EXERCISE_TODO("1.1");
}
