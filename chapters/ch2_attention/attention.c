#include "attention.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fastexp.h"
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

// Sums with 16 running values side by side, so that the compiler can
// keep them in one vector register (the maximum is fastexp.h's
// max_fast). The last n % 16 values go into the lanes too, and the lanes
// are folded in halves, as max_fast does: added one at a time they would
// be a chain of 16 dependent additions. The order of the additions is
// fixed, so the result is too.
#define LANES 16
static float fold_lanes(float s[LANES]) {
    for (int half = LANES / 2; half > 0; half /= 2)
        for (int j = 0; j < half; j++) s[j] += s[j + half];
    return s[0];
}

static float sum_of(const float *x, int n) {
    float s[LANES] = {0};
    int i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int j = 0; j < LANES; j++) s[j] += x[i + j];
    for (int j = 0; j < n - i; j++) s[j] += x[i + j];
    return fold_lanes(s);
}

static float dot_of(const float *x, const float *y, int n) {
    float s[LANES] = {0};
    int i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int j = 0; j < LANES; j++) s[j] += x[i + j] * y[i + j];
    for (int j = 0; j < n - i; j++) s[j] += x[i + j] * y[i + j];
    return fold_lanes(s);
}

//> masked-softmax
// One row of attention weights, in place: scores in, weights out. Only
// keys 0..visible-1 that key_mask (NULL: none) marks real take part; the
// others get exactly 0, and a row with no such key becomes all zeros.
static void masked_softmax_row(float *row, int Tk, int visible,
                               const int *key_mask) {
    float max = -INFINITY;                // exp(x - max) <= 1: no overflow
    int n = visible;                      // keys that take part
    if (key_mask) {                       // the maximum of real keys only
        n = 0;
        for (int s = 0; s < visible; s++)
            if (key_mask[s]) {
                max = row[s] > max ? row[s] : max;
                n++;
            }
    } else {
        max = max_fast(row, visible);
    }
    if (n == 0) visible = 0;              // nothing to look at: zeros
    for (int s = 0; s < visible; s++) row[s] = exp_fast(row[s] - max);
    if (key_mask)
        for (int s = 0; s < visible; s++)
            if (!key_mask[s]) row[s] = 0.0f;
    for (int s = visible; s < Tk; s++) row[s] = 0.0f;
    if (visible == 0) return;
    float inv = 1.0f / sum_of(row, visible);  // >= 1: the max gave e^0
    for (int s = 0; s < visible; s++) row[s] *= inv;
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
// Query rows go through in blocks of ATT_ROWS: a block needs the scores of
// only the keys its last row can see, so under the causal mask the blocks
// skip most of the upper triangle that the mask would throw away.
#define ATT_ROWS 32

HeadsLayout heads_packed(int NH, int T, int HS) {
    return (HeadsLayout){HS, (long long)T * HS, (long long)NH * T * HS};
}

HeadsLayout heads_in_rows(int T, int ld, int HS) {
    return (HeadsLayout){ld, HS, (long long)T * ld};
}

// Where head z = b * NH + h starts in layout l.
static size_t head_start(HeadsLayout l, int z, int NH) {
    return (size_t)(z / NH) * l.batch + (size_t)(z % NH) * l.head;
}

int attention_forward_strided(float *out, HeadsLayout lo, float *att,
                              const float *q, HeadsLayout lq,
                              const float *k, const float *v,
                              HeadsLayout lkv, const int *key_mask,
                              bool causal, int B, int NH, int Tq, int Tk,
                              int HS, Error *err) {
    if (check_sizes(B, NH, Tq, Tk, HS, err) != 0) return -1;
    int Z = B * NH;                         // independent heads
    size_t as = (size_t)Tq * Tk;
    float scale = 1.0f / sqrtf((float)HS);
    PARALLEL_FOR                            // a head per thread at a time
    for (int z = 0; z < Z; z++) {
        const float *qz = q + head_start(lq, z, NH);
        const float *kz = k + head_start(lkv, z, NH);
        const float *vz = v + head_start(lkv, z, NH);
        float *oz = out + head_start(lo, z, NH);
        const int *mask = key_mask ? key_mask + (size_t)(z / NH) * Tk : NULL;
        for (int t0 = 0; t0 < Tq; t0 += ATT_ROWS) {
            int m = Tq - t0 < ATT_ROWS ? Tq - t0 : ATT_ROWS;
            int n = attention_causal_visible(causal, t0 + m - 1, Tq, Tk);
            float *a = att + z * as + (size_t)t0 * Tk;
            float *o = oz + (size_t)t0 * lo.ld;
            // scores (m, n) = scale * q rows (m, HS) @ k^T (HS, n)
            if (n > 0)
                gemm(false, true, m, n, HS, scale, qz + (size_t)t0 * lq.ld,
                     lq.ld, kz, lkv.ld, 0.0f, a, Tk);
            // each row through the softmax, fused with both masks
            for (int t = 0; t < m; t++)
                masked_softmax_row(a + (size_t)t * Tk, Tk,
                                   attention_causal_visible(causal, t0 + t,
                                                            Tq, Tk), mask);
            // out (m, HS) = att (m, n) @ v (n, HS): weighted sums of values
            if (n > 0)
                gemm(false, false, m, HS, n, 1.0f, a, Tk, vz, lkv.ld, 0.0f,
                     o, lo.ld);
            else
                for (int t = 0; t < m; t++)
                    memset(o + (size_t)t * lo.ld, 0, (size_t)HS * sizeof *o);
        }
    }
    return 0;
}

int attention_forward(float *out, float *att, const float *q,
                      const float *k, const float *v, const int *key_mask,
                      bool causal, int B, int NH, int Tq, int Tk, int HS,
                      Error *err) {
    HeadsLayout lq = heads_packed(NH, Tq, HS), lkv = heads_packed(NH, Tk, HS);
    return attention_forward_strided(out, lq, att, q, lq, k, v, lkv,
                                     key_mask, causal, B, NH, Tq, Tk, HS,
                                     err);
}
//< attention-forward

//> attention-step
int attention_step(float *out, float *att, const float *q, const float *k,
                   const float *v, const int *key_mask, int B, int NH,
                   int Tk, int T, int HS, Error *err) {
    if (check_sizes(B, NH, 1, T, HS, err) != 0) return -1;
    if (Tk < 1 || Tk > T)
        return error_set(err, "attention: %d keys in a cache of %d "
                         "positions", Tk, T);
    int Z = B * NH;
    size_t ks = (size_t)T * HS;             // heads lie T positions apart
    float scale = 1.0f / sqrtf((float)HS);
    // one parallel loop over every head: a head's work is a few thousand
    // multiply-adds, less than what starting the threads costs, so it
    // must not be a parallel loop of its own; and too little for gemm,
    // whose calls would cost as much as the sums, so they are loops here
    PARALLEL_FOR
    for (int z = 0; z < Z; z++) {
        const float *qz = q + (size_t)z * HS, *kz = k + z * ks;
        const float *vz = v + z * ks;
        const int *mask = key_mask ? key_mask + (size_t)(z / NH) * T : NULL;
        float *a = att + (size_t)z * T, *o = out + (size_t)z * HS;
        for (int s = 0; s < Tk; s++)   // scores = scale q . k_s
            a[s] = scale * dot_of(qz, kz + (size_t)s * HS, HS);
        masked_softmax_row(a, Tk, Tk, mask);
        memset(o, 0, (size_t)HS * sizeof *o);   // out = sum_s a_s v_s
        for (int s = 0; s < Tk; s++)
            for (int i = 0; i < HS; i++) o[i] += a[s] * vz[(size_t)s * HS + i];
    }
    return 0;
}
//< attention-step

// 1 + the last column in which one of the m rows of a (row stride Tk) is
// not 0: the keys past it were hidden from every one of those rows.
static int last_nonzero_column(const float *a, int m, int Tk) {
    int n = 0;
    for (int t = 0; t < m; t++) {
        const float *row = a + (size_t)t * Tk;
        int s = Tk;
        while (s > n && row[s - 1] == 0.0f) s--;
        n = s > n ? s : n;
    }
    return n;
}

//> attention-backward
// Sets the rows x HS floats of a head, rows ld apart, to 0.
static void zero_rows(float *x, int rows, int HS, int ld) {
    for (int t = 0; t < rows; t++)
        memset(x + (size_t)t * ld, 0, (size_t)HS * sizeof *x);
}

void attention_backward_strided(float *dq, float *dk, float *dv,
                                float *datt, const float *dout,
                                const float *att, const float *q,
                                const float *k, const float *v,
                                HeadsLayout lq, HeadsLayout lkv,
                                HeadsLayout lo, bool accumulate, int B,
                                int NH, int Tq, int Tk, int HS) {
    assert(check_sizes(B, NH, Tq, Tk, HS, NULL) == 0);
    int Z = B * NH;
    size_t as = (size_t)Tq * Tk;
    float scale = 1.0f / sqrtf((float)HS);
    PARALLEL_FOR
    for (int z = 0; z < Z; z++) {
        size_t zq = head_start(lq, z, NH), zkv = head_start(lkv, z, NH);
        size_t zo = head_start(lo, z, NH);
        float *dkz = dk + zkv, *dvz = dv + zkv;
        // every query block adds into dk and dv: they start from 0 (the
        // head's rows only, by the thread that then fills them)
        if (!accumulate) {
            zero_rows(dkz, Tk, HS, lkv.ld);
            zero_rows(dvz, Tk, HS, lkv.ld);
        }
        for (int t0 = 0; t0 < Tq; t0 += ATT_ROWS) {
            int m = Tq - t0 < ATT_ROWS ? Tq - t0 : ATT_ROWS;
            const float *a = att + z * as + (size_t)t0 * Tk;  // its rows
            const float *dy = dout + zo + (size_t)t0 * lo.ld;
            const float *qt = q + zq + (size_t)t0 * lq.ld;
            float *dqt = dq + zq + (size_t)t0 * lq.ld;
            float *d = datt + z * as + (size_t)t0 * Tk;
            // Columns n.. of these rows of att are 0 (hidden keys): they
            // pass back nothing, so the block's products can stop at n.
            int n = last_nonzero_column(a, m, Tk);
            if (n == 0) {
                if (!accumulate) zero_rows(dqt, m, HS, lq.ld);
                continue;
            }
            // through out = att @ v
            gemm(true, false, n, HS, m, 1.0f, a, Tk, dy, lo.ld, 1.0f, dvz,
                 lkv.ld);                   // dv += att^T @ dout
            gemm(false, true, m, n, HS, 1.0f, dy, lo.ld, v + zkv, lkv.ld,
                 0.0f, d, Tk);              // datt = dout @ v^T
            // through the softmax, in place: datt becomes dscores
            for (int t = 0; t < m; t++) {
                const float *y = a + (size_t)t * Tk;
                float *dr = d + (size_t)t * Tk, dot = dot_of(dr, y, n);
                for (int s = 0; s < n; s++) dr[s] = y[s] * (dr[s] - dot);
            }
            // through scores = scale q k^T; a block owns its rows of dq
            gemm(false, false, m, HS, n, scale, d, Tk, k + zkv, lkv.ld,
                 accumulate ? 1.0f : 0.0f, dqt, lq.ld); // dq (+)= s dS @ k
            gemm(true, false, n, HS, m, scale, d, Tk, qt, lq.ld, 1.0f, dkz,
                 lkv.ld);                   // dk += s dscores^T @ q
        }
    }
}

void attention_backward(float *dq, float *dk, float *dv, float *datt,
                        const float *dout, const float *att, const float *q,
                        const float *k, const float *v, int B, int NH,
                        int Tq, int Tk, int HS) {
    HeadsLayout lq = heads_packed(NH, Tq, HS), lkv = heads_packed(NH, Tk, HS);
    attention_backward_strided(dq, dk, dv, datt, dout, att, q, k, v, lq, lkv,
                               lq, true, B, NH, Tq, Tk, HS);
}
//< attention-backward
