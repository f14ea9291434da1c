#include "layernorm.h"

#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#include "mem.h"
#include "parallel.h"

#define LN_COLS 16   // columns per task in the backward column sums
#define LN_ROWS 64   // rows per block of layernorm_backward

// A row's sums are kept in double, in LN_LANES running sums side by side:
// one sum would be a chain of dependent additions that the compiler must
// do one at a time, while 8 of them fill a vector register and vectorise.
// The order of the additions is fixed, so the result is too.
#define LN_LANES 8

// sum of x[i] - m, and (if sq) of (x[i] - m)^2, over a row of C
static double row_sum(const float *x, float m, int C, bool sq) {
    double s[LN_LANES] = {0}, sum = 0;
    int i = 0;
    for (; i + LN_LANES <= C; i += LN_LANES)
        for (int j = 0; j < LN_LANES; j++) {
            double d = x[i + j] - m;
            s[j] += sq ? d * d : d;
        }
    for (int j = 0; j < LN_LANES; j++) sum += s[j];
    for (; i < C; i++) {
        double d = x[i] - m;
        sum += sq ? d * d : d;
    }
    return sum;
}

// sum of g = w[i] dy[i] over a row, or (if gx) of g xhat, xhat = (x - m) s
static double row_sum_g(const float *w, const float *dy, const float *x,
                        float m, float s, int C, bool gx) {
    double acc[LN_LANES] = {0}, sum = 0;
    int i = 0;
    for (; i + LN_LANES <= C; i += LN_LANES)
        for (int j = 0; j < LN_LANES; j++) {
            float g = w[i + j] * dy[i + j];
            acc[j] += gx ? (double)g * ((x[i + j] - m) * s) : g;
        }
    for (int j = 0; j < LN_LANES; j++) sum += acc[j];
    for (; i < C; i++) {
        float g = w[i] * dy[i];
        sum += gx ? (double)g * ((x[i] - m) * s) : g;
    }
    return sum;
}

//> layernorm-forward
void layernorm_forward(float *out, float *mean, float *rstd, const float *inp,
                       const float *weight, const float *bias, int B, int T,
                       int C) {
    assert(B >= 1 && T >= 1 && C >= 1);
    PARALLEL_FOR
    for (int r = 0; r < B * T; r++) {
        const float *x = inp + (size_t)r * C;
        float *y = out + (size_t)r * C;
        // two passes: no cancellation
        float m = (float)(row_sum(x, 0.0f, C, false) / C);
        double sq = row_sum(x, m, C, true);
        float s = (float)(1.0 / sqrt(sq / C + LAYERNORM_EPS));
        for (int i = 0; i < C; i++) {
            float xhat = (x[i] - m) * s;
            y[i] = xhat * weight[i] + (bias ? bias[i] : 0.0f);
        }
        mean[r] = m;
        rstd[r] = s;
    }
}
//< layernorm-forward

//> layernorm-backward
// The column sums of dweight and dbias, one block of LN_ROWS rows at a
// time: a block's sums are made while its rows are at hand for dinp, and
// kept here until every block is done. The calling thread's buffer,
// grown to the largest need and kept: a training step allocates nothing.
static _Thread_local double *block_sums;
static _Thread_local size_t block_sums_n;

void layernorm_backward(float *dinp, float *dweight, float *dbias,
                        const float *dout, const float *inp,
                        const float *weight, const float *mean,
                        const float *rstd, int B, int T, int C) {
    assert(B >= 1 && T >= 1 && C >= 1);
    int N = B * T, blocks = (N + LN_ROWS - 1) / LN_ROWS;
    size_t need = (size_t)blocks * 2 * C;
    if (need > block_sums_n) {
        free(block_sums);
        block_sums = xmalloc(need * sizeof *block_sums);
        block_sums_n = need;
    }
    double *sums = block_sums;
    PARALLEL_FOR
    for (int k = 0; k < blocks; k++) {
        double *dw = sums + (size_t)k * 2 * C, *db = dw + C;
        for (int i = 0; i < C; i++) dw[i] = db[i] = 0.0;
        int end = N - k * LN_ROWS < LN_ROWS ? N : (k + 1) * LN_ROWS;
        for (int r = k * LN_ROWS; r < end; r++) {   // dinp, row by row
            const float *x = inp + (size_t)r * C, *dy = dout + (size_t)r * C;
            float m = mean[r], s = rstd[r];
            double sum_g = row_sum_g(weight, dy, x, m, s, C, false);
            double sum_gx = row_sum_g(weight, dy, x, m, s, C, true);
            float a = (float)(sum_g / C), b = (float)(sum_gx / C);
            float *dx = dinp + (size_t)r * C;
            for (int i = 0; i < C; i++) {
                float xhat = (x[i] - m) * s;
                dx[i] += s * (weight[i] * dy[i] - a - xhat * b);
                dw[i] += (double)dy[i] * xhat;     // and the block's sums
                db[i] += dy[i];
            }
        }
    }
    // dweight, dbias: the blocks' sums added in block order, 16 columns
    // per task: the same results whatever the number of threads.
    PARALLEL_FOR
    for (int i0 = 0; i0 < C; i0 += LN_COLS) {
        int n = C - i0 < LN_COLS ? C - i0 : LN_COLS;
        double dw[LN_COLS] = {0}, db[LN_COLS] = {0};
        for (int k = 0; k < blocks; k++) {
            const double *w = sums + (size_t)k * 2 * C + i0, *b = w + C;
            for (int j = 0; j < n; j++) {
                dw[j] += w[j];
                db[j] += b[j];
            }
        }
        for (int j = 0; j < n; j++) {
            dweight[i0 + j] += (float)dw[j];
            if (dbias) dbias[i0 + j] += (float)db[j];
        }
    }
}
//< layernorm-backward

//> rmsnorm
void rmsnorm_forward(float *out, float *rstd, const float *inp,
                     const float *weight, int B, int T, int C) {
    assert(B >= 1 && T >= 1 && C >= 1);
    PARALLEL_FOR
    for (int r = 0; r < B * T; r++) {
        const float *x = inp + (size_t)r * C;
        double sq = 0;
        for (int i = 0; i < C; i++) sq += (double)x[i] * x[i];
        float s = (float)(1.0 / sqrt(sq / C + RMSNORM_EPS));
        for (int i = 0; i < C; i++)
            out[(size_t)r * C + i] = x[i] * s * weight[i];
        rstd[r] = s;
    }
}

void rmsnorm_backward(float *dinp, float *dweight, const float *dout,
                      const float *inp, const float *weight,
                      const float *rstd, int B, int T, int C) {
    assert(B >= 1 && T >= 1 && C >= 1);
    int N = B * T;
    PARALLEL_FOR
    for (int r = 0; r < N; r++) {
        const float *x = inp + (size_t)r * C, *dy = dout + (size_t)r * C;
        float s = rstd[r];
        double sum_gx = 0;                 // sum g xhat, g = weight * dy
        for (int i = 0; i < C; i++)
            sum_gx += (double)weight[i] * dy[i] * (x[i] * s);
        float b = (float)(sum_gx / C);
        for (int i = 0; i < C; i++)
            dinp[(size_t)r * C + i] += s * (weight[i] * dy[i]
                                            - x[i] * s * b);
    }
    PARALLEL_FOR
    for (int i0 = 0; i0 < C; i0 += LN_COLS) {   // as in layernorm_backward
        int n = C - i0 < LN_COLS ? C - i0 : LN_COLS;
        double dw[LN_COLS] = {0};
        for (int r = 0; r < N; r++)
            for (int j = 0; j < n; j++)
                dw[j] += (double)dout[(size_t)r * C + i0 + j]
                         * (inp[(size_t)r * C + i0 + j] * rstd[r]);
        for (int j = 0; j < n; j++) dweight[i0 + j] += (float)dw[j];
    }
}
//< rmsnorm
