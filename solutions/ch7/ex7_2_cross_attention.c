// Exercise 7.2 - reference answer: the three projections with chapter 2's
// linear layer, and the attention of each head written out, one query row
// at a time: scores over the real keys only, their softmax, the weighted
// sum of the values. A row with no real key keeps y = 0.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ch7_exercises.h"
#include "linear.h"
#include "mem.h"

void ex_cross_attention(float *out, const float *x, const float *memory,
                        const float *q_proj_w, const float *q_proj_b,
                        const float *kv_proj_w, const float *kv_proj_b,
                        const float *out_proj_w, const float *out_proj_b,
                        const int *src_mask, int B, int Tq, int Tk, int C,
                        int NH) {
    int HS = C / NH;
    float *q = alloc_floats((size_t)B * Tq * C);
    float *kv = alloc_floats((size_t)B * Tk * 2 * C);
    float *y = alloc_floats((size_t)B * Tq * C);
    float *att = alloc_floats((size_t)Tk);
    linear_forward(q, x, q_proj_w, q_proj_b, B * Tq, C, C);
    linear_forward(kv, memory, kv_proj_w, kv_proj_b, B * Tk, C, 2 * C);
    memset(y, 0, (size_t)B * Tq * C * sizeof *y);
    float scale = 1.0f / sqrtf((float)HS);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++)
            for (int t = 0; t < Tq; t++) {
                const float *qt = q + ((size_t)b * Tq + t) * C + h * HS;
                float mx = -INFINITY;
                for (int s = 0; s < Tk; s++) {
                    if (src_mask && !src_mask[b * Tk + s]) continue;
                    const float *ks = kv + ((size_t)b * Tk + s) * 2 * C
                                      + h * HS;
                    float dot = 0;
                    for (int i = 0; i < HS; i++) dot += qt[i] * ks[i];
                    att[s] = dot * scale;
                    if (att[s] > mx) mx = att[s];
                }
                if (mx == -INFINITY) continue;   // no real key: y stays 0
                float sum = 0;
                for (int s = 0; s < Tk; s++) {
                    if (src_mask && !src_mask[b * Tk + s]) continue;
                    att[s] = expf(att[s] - mx);
                    sum += att[s];
                }
                float *yt = y + ((size_t)b * Tq + t) * C + h * HS;
                for (int s = 0; s < Tk; s++) {
                    if (src_mask && !src_mask[b * Tk + s]) continue;
                    const float *vs = kv + ((size_t)b * Tk + s) * 2 * C + C
                                      + h * HS;
                    float a = att[s] / sum;
                    for (int i = 0; i < HS; i++) yt[i] += a * vs[i];
                }
            }
    linear_forward(out, y, out_proj_w, out_proj_b, B * Tq, C, C);
    free(q);
    free(kv);
    free(y);
    free(att);
}
