// Exercise 7.4 - the Pre-LN decoder layer's forward pass, wired from
// the earlier chapters' pieces. See ch7_exercises.h.
#include "ch7_exercises.h"
#include "exercise.h"

int ex_decoder_forward(float *out, DecoderCache *cache, const float *x,
                       const float *memory, const DecoderWeights *w,
                       const int *tgt_mask, const int *src_mask,
                       Activation act, int B, int T, int Tk, int C, int NH,
                       int F, Error *err) {
    EXERCISE_TODO("7.4");
}
