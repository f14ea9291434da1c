// Exercise 7.1 - reference answer: both masks look only at the KEY's id
// (and, for self-attention, at whether the key comes after the query).
#include "ch7_exercises.h"

void ex_attention_masks(int *self_mask, int *cross_mask, const int *tgt,
                        const int *src, int B, int T, int S, int pad) {
    for (int b = 0; b < B; b++) {
        const int *tg = tgt + (long)b * T, *sr = src + (long)b * S;
        for (int i = 0; i < T; i++) {
            int *sm = self_mask + ((long)b * T + i) * T;
            int *cm = cross_mask + ((long)b * T + i) * S;
            for (int j = 0; j < T; j++) sm[j] = j <= i && tg[j] != pad;
            for (int s = 0; s < S; s++) cm[s] = sr[s] != pad;
        }
    }
}
