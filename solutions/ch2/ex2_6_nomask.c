// Exercise 2.6 - reference answer.
#include <stdlib.h>

#include "ch2_exercises.h"

void ex_self_attention(float *out, const float *x, const float *w_qkv,
                       bool causal, int T, int C) {
    float *qkv = malloc((size_t)3 * T * C * sizeof *qkv);
    float *q = malloc((size_t)3 * T * C * sizeof *q), *k = q + T * C;
    float *v = k + T * C, *att = malloc((size_t)T * T * sizeof *att);
    for (int t = 0; t < T; t++)                  // qkv = x @ w_qkv^T
        for (int o = 0; o < 3 * C; o++) {
            double sum = 0;
            for (int i = 0; i < C; i++)
                sum += (double)x[t * C + i] * w_qkv[o * C + i];
            qkv[t * 3 * C + o] = (float)sum;
        }
    ex_split_qkv(q, k, v, qkv, 1, T, C, 1);      // exercise 2.4
    // The only difference between a decoder and an encoder: the flag.
    ex_attention_head(out, att, q, k, v, NULL, causal, T, T, C);
    free(qkv);
    free(q);
    free(att);
}
