// Exercise 7.8 - one merge step of byte-pair encoding: count the pairs,
// pick the most frequent, merge it everywhere. See ch7_exercises.h.
#include "ch7_exercises.h"
#include "exercise.h"

long ex_bpe_merge_step(int *const *syms, int *lens, const long *freqs,
                       int n_words, int new_id, int pair[2]) {
    EXERCISE_TODO("7.8");
}
