// Exercise 9.2 - BPE merges of one pre-token by rank. See
// ch9_exercises.h.
#include "ch9_exercises.h"
#include "exercise.h"

int ex_bpe_merge(const Gpt2Tokenizer *t, int *ids, int n) {
    EXERCISE_TODO("9.2");
}
