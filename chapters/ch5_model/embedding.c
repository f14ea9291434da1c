#include "embedding.h"

#include "parallel.h"

void embedding_forward(float *out, const int *idx, const float *wte,
                       float scale, const float *pos, int B, int T, int C) {
    PARALLEL_FOR
    for (long r = 0; r < (long)B * T; r++) {
        const float *e = wte + (long)idx[r] * C;
        const float *p = pos + (r % T) * C;
        float *o = out + r * C;
        for (int c = 0; c < C; c++) o[c] = scale * e[c] + p[c];
    }
}

//> embedding-backward
void embedding_backward(float *dwte, float *dwpos, const float *dout,
                        const int *idx, float scale, int B, int T,
                        int C) {
    // Rows are visited in order: two positions with the same id add into
    // the same row of dwte, so this loop stays sequential.
    for (long r = 0; r < (long)B * T; r++) {
        float *d = dwte + (long)idx[r] * C;
        const float *g = dout + r * C;
        for (int c = 0; c < C; c++) d[c] += scale * g[c];
    }
    if (!dwpos) return;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            float *d = dwpos + (long)t * C;
            const float *g = dout + ((long)b * T + t) * C;
            for (int c = 0; c < C; c++) d[c] += g[c];
        }
}
//< embedding-backward
