#include "smoothing.h"

#include "crossentropy.h"
#include "parallel.h"

// The mean of a row of logits, summed in double in 8 running sums side by
// side (a vector register's worth; the order is fixed, so is the result).
static double row_mean(const float *row, int V) {
    double s[8] = {0}, sum = 0;
    int v = 0;
    for (; v + 8 <= V; v += 8)
        for (int j = 0; j < 8; j++) s[j] += row[v + j];
    for (int j = 0; j < 8; j++) sum += s[j];
    for (; v < V; v++) sum += row[v];
    return sum / V;
}

#define XENT_ROWS 64   // rows whose losses are worked out side by side

//> smooth-forward
float smoothed_xent_forward(const float *logits, const int *targets, int N,
                            int V, int pad, float eps, SmoothedLoss *out) {
    double nll = 0, smooth = 0;
    int count = 0;
    // The rows go through in blocks: a block's rows in parallel, each into
    // its own slot, then their sums in row order, so the totals are the
    // same on any number of threads.
    for (int n0 = 0; n0 < N; n0 += XENT_ROWS) {
        int m = N - n0 < XENT_ROWS ? N - n0 : XENT_ROWS;
        double row_nll[XENT_ROWS], row_smooth[XENT_ROWS];
        PARALLEL_FOR
        for (int i = 0; i < m; i++) {
            int y = targets[n0 + i];
            if (y == pad) continue;
            const float *row = logits + (long)(n0 + i) * V;
            // chapter 5's loss of this one row: lse - z_y
            row_nll[i] = crossentropy_forward(row, &y, 1, V, NULL);
            row_smooth[i] = row_nll[i] + eps * (row[y] - row_mean(row, V));
        }
        for (int i = 0; i < m; i++) {
            if (targets[n0 + i] == pad) continue;
            nll += row_nll[i];
            smooth += row_smooth[i];
            count++;
        }
    }
    SmoothedLoss r = {0, 0, count};
    if (count) {
        r.loss = (float)(smooth / count);
        r.nll = (float)(nll / count);
    }
    if (out) *out = r;
    return r.loss;
}
//< smooth-forward

//> smooth-backward
void smoothed_xent_backward(float *dlogits, const float *logits,
                            const int *targets, int N, int V, int pad,
                            float eps, float scale) {
    float spread = scale * eps / V;   // q's share of every class
    PARALLEL_FOR
    for (int n = 0; n < N; n++) {
        float *d = dlogits + (long)n * V;
        int y = targets[n] == pad ? -1 : targets[n];
        // scale * (softmax - onehot), or zeros when y is -1 ...
        crossentropy_backward(d, logits + (long)n * V, &y, 1, V, scale);
        if (y < 0) continue;
        // ... plus scale * (onehot - q) = scale * eps * (onehot - 1/V)
        for (int v = 0; v < V; v++) d[v] -= spread;
        d[y] += scale * eps;
    }
}
//< smooth-backward

//> pad-mask
int pad_mask(int *mask, const int *tokens, int B, int T, int pad) {
    int count = 0;
    for (long i = 0; i < (long)B * T; i++) {
        mask[i] = tokens[i] != pad;
        count += mask[i];
    }
    return count;
}
//< pad-mask

static void print_grid_row(FILE *f, const int *keys, int Tk, int upto,
                           int pad) {
    for (int k = 0; k < Tk; k++)
        fputc(k <= upto && keys[k] != pad ? '1' : '.', f);
    fputc('\n', f);
}

void print_attention_masks(FILE *f, const int *tgt, int Tq, const int *src,
                           int Tk, int pad) {
    fprintf(f, "decoder self-attention (%d x %d): causal and key padding\n",
            Tq, Tq);
    for (int i = 0; i < Tq; i++) print_grid_row(f, tgt, Tq, i, pad);
    fprintf(f, "cross-attention (%d x %d): source key padding\n", Tq, Tk);
    for (int i = 0; i < Tq; i++) print_grid_row(f, src, Tk, Tk - 1, pad);
}
