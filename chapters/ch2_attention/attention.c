#include "attention.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gemm.h"
#include "parallel.h"

//> softmax
void softmax_forward(float *out, const float *inp, int N, int D) {
    assert(N >= 0 && D >= 0);
    if (D == 0) return;
    PARALLEL_FOR
    for (int n = 0; n < N; n++) {
        const float *x = inp + (size_t)n * D;
        float *y = out + (size_t)n * D;
        float max = x[0];                 // exp(x - max) <= 1: no overflow
        for (int i = 1; i < D; i++) max = fmaxf(max, x[i]);
        float sum = 0.0f;                 // >= 1: the max contributes exp(0)
        for (int i = 0; i < D; i++) {
            y[i] = expf(x[i] - max);
            sum += y[i];
        }
        for (int i = 0; i < D; i++) y[i] /= sum;
    }
}
//< softmax

//> softmax-backward
void softmax_backward(float *dinp, const float *dout, const float *out,
                      int N, int D) {
    assert(N >= 0 && D >= 0);
    PARALLEL_FOR
    for (int n = 0; n < N; n++) {
        const float *dy = dout + (size_t)n * D, *y = out + (size_t)n * D;
        float *dx = dinp + (size_t)n * D;
        float dot = 0.0f;                 // dy . y
        for (int i = 0; i < D; i++) dot += dy[i] * y[i];
        for (int i = 0; i < D; i++) dx[i] += y[i] * (dy[i] - dot);
    }
}
//< softmax-backward

int attention_causal_visible(bool causal, int t, int Tq, int Tk) {
    if (!causal) return Tk;
    long n = (long)t + Tk - Tq + 1;       // keys 0 .. t + Tk - Tq
    return n < 0 ? 0 : n > Tk ? Tk : (int)n;
}

//> masked-softmax
// One row of attention weights, in place: scores in, weights out. Only
// keys 0..visible-1 that key_mask (NULL: none) marks real take part; the
// others get exactly 0, and a row with no such key becomes all zeros.
static void masked_softmax_row(float *row, int Tk, int visible,
                               const int *key_mask) {
    float max = -INFINITY;
    int n = 0;                              // keys that take part
    for (int s = 0; s < visible; s++)
        if (!key_mask || key_mask[s]) {
            max = fmaxf(max, row[s]);
            n++;
        }
    float sum = 0.0f;
    for (int s = 0; s < Tk; s++) {
        bool seen = s < visible && (!key_mask || key_mask[s]);
        row[s] = seen ? expf(row[s] - max) : 0.0f;
        sum += row[s];
    }
    if (n == 0) return;                     // nothing to look at: zeros
    for (int s = 0; s < visible; s++) row[s] /= sum;
}
//< masked-softmax

static int check_sizes(int B, int NH, int Tq, int Tk, int HS, Error *err) {
    if (B < 1 || NH < 1 || Tq < 1 || Tk < 1 || HS < 1)
        return error_set(err, "attention: every size must be at least 1, "
                         "got B=%d NH=%d Tq=%d Tk=%d HS=%d", B, NH, Tq, Tk,
                         HS);
    double heads = (double)B * NH, biggest = (double)(Tq > HS ? Tq : HS)
                   * (Tk > HS ? Tk : HS);
    if (heads * biggest > (double)INT32_MAX)
        return error_set(err, "attention: B=%d NH=%d Tq=%d Tk=%d HS=%d is "
                         "too large (over 2^31 floats in one tensor)", B,
                         NH, Tq, Tk, HS);
    return 0;
}

//> attention-forward
int attention_forward(float *out, float *att, const float *q,
                      const float *k, const float *v, const int *key_mask,
                      bool causal, int B, int NH, int Tq, int Tk, int HS,
                      Error *err) {
    if (check_sizes(B, NH, Tq, Tk, HS, err) != 0) return -1;
    int Z = B * NH;                         // independent heads
    size_t qs = (size_t)Tq * HS, ks = (size_t)Tk * HS, as = (size_t)Tq * Tk;
    float scale = 1.0f / sqrtf((float)HS);
    // scores (Tq, Tk) = scale * q (Tq, HS) @ k^T (HS, Tk), head by head
    for (int z = 0; z < Z; z++)
        gemm(false, true, Tq, Tk, HS, scale, q + z * qs, HS, k + z * ks, HS,
             0.0f, att + z * as, Tk);
    // every row through the softmax, fused with both masks
    PARALLEL_FOR
    for (int r = 0; r < Z * Tq; r++) {
        int b = r / (NH * Tq), t = r % Tq;
        masked_softmax_row(att + (size_t)r * Tk, Tk,
                           attention_causal_visible(causal, t, Tq, Tk),
                           key_mask ? key_mask + (size_t)b * Tk : NULL);
    }
    // out (Tq, HS) = att (Tq, Tk) @ v (Tk, HS): a weighted sum of values
    for (int z = 0; z < Z; z++)
        gemm(false, false, Tq, HS, Tk, 1.0f, att + z * as, Tk, v + z * ks,
             HS, 0.0f, out + z * qs, HS);
    return 0;
}
//< attention-forward

//> attention-backward
void attention_backward(float *dq, float *dk, float *dv, float *datt,
                        const float *dout, const float *att, const float *q,
                        const float *k, const float *v, int B, int NH,
                        int Tq, int Tk, int HS) {
    assert(check_sizes(B, NH, Tq, Tk, HS, NULL) == 0);
    int Z = B * NH;
    size_t qs = (size_t)Tq * HS, ks = (size_t)Tk * HS, as = (size_t)Tq * Tk;
    float scale = 1.0f / sqrtf((float)HS);
    for (int z = 0; z < Z; z++) {          // through out = att @ v
        gemm(true, false, Tk, HS, Tq, 1.0f, att + z * as, Tk, dout + z * qs,
             HS, 1.0f, dv + z * ks, HS);   // dv += att^T @ dout
        gemm(false, true, Tq, Tk, HS, 1.0f, dout + z * qs, HS, v + z * ks,
             HS, 0.0f, datt + z * as, Tk); // datt = dout @ v^T
    }
    PARALLEL_FOR                           // through the softmax, in place:
    for (int r = 0; r < Z * Tq; r++) {     // datt becomes dscores
        const float *y = att + (size_t)r * Tk;
        float *d = datt + (size_t)r * Tk, dot = 0.0f;
        for (int s = 0; s < Tk; s++) dot += d[s] * y[s];
        for (int s = 0; s < Tk; s++) d[s] = y[s] * (d[s] - dot);
    }
    for (int z = 0; z < Z; z++) {          // through scores = scale q k^T
        gemm(false, false, Tq, HS, Tk, scale, datt + z * as, Tk,
             k + z * ks, HS, 1.0f, dq + z * qs, HS);  // dq += s dsc @ k
        gemm(true, false, Tk, HS, Tq, scale, datt + z * as, Tk,
             q + z * qs, HS, 1.0f, dk + z * ks, HS);  // dk += s dsc^T @ q
    }
}
//< attention-backward
