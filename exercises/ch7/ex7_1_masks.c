// Exercise 7.1 - the decoder's self-attention mask and the cross-attention
// mask of a padded batch. See ch7_exercises.h.
#include "ch7_exercises.h"
#include "exercise.h"

void ex_attention_masks(int *self_mask, int *cross_mask, const int *tgt,
                        const int *src, int B, int T, int S, int pad) {
    EXERCISE_TODO("7.1");
}
