// Exercise 7.7 - BLEU: the clipped n-gram matches of one sentence, and
// the corpus score from the summed statistics. See ch7_exercises.h.
#include "ch7_exercises.h"
#include "exercise.h"

void ex_bleu_ngram_stats(long counts[4], long totals[4],
                         const char *const *hyp, int nh,
                         const char *const *ref, int nr) {
    EXERCISE_TODO("7.7");
}

double ex_bleu_score(double precisions[4], double *bp, const long counts[4],
                     const long totals[4], long sys_len, long ref_len) {
    EXERCISE_TODO("7.7");
}
