// Exercise 7.5 - greedy decoding with the cache. See ch7_exercises.h.
#include "ch7_exercises.h"
#include "exercise.h"

int ex_greedy_decode(const Seq2Seq *m, Seq2SeqState *st, const int *src,
                     int B, int S, const DecodeConfig *dc, int *out,
                     int max_out, int *len, bool *done, Error *err) {
    EXERCISE_TODO("7.5");
}
