// Exercise 7.6 - beam search, with the exact contract of beam_decode.
// See ch7_exercises.h.
#include "ch7_exercises.h"
#include "exercise.h"

int ex_beam_decode(const Seq2Seq *m, Seq2SeqState *st, const int *src,
                   int B, int S, const DecodeConfig *dc, int *out,
                   int max_out, int *len, bool *done, float *score,
                   Error *err) {
    EXERCISE_TODO("7.6");
}
