// Exercise 2.4 - reference answer.
#include "ch2_exercises.h"

void ex_split_qkv(float *q, float *k, float *v, const float *qkv, int B,
                  int T, int C, int NH) {
    int HS = C / NH;
    float *dst[3] = {q, k, v};
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int c = 0; c < 3 * C; c++) {
                int which = c / C, h = c % C / HS, i = c % HS;
                dst[which][((b * NH + h) * T + t) * HS + i] =
                    qkv[(b * T + t) * 3 * C + c];
            }
}

void ex_merge_heads(float *y, const float *yh, int B, int T, int C, int NH) {
    int HS = C / NH;
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++)
            for (int t = 0; t < T; t++)
                for (int i = 0; i < HS; i++)
                    y[(b * T + t) * C + h * HS + i] =
                        yh[((b * NH + h) * T + t) * HS + i];
}
