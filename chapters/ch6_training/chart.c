#include "chart.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"

void curve_add(Curve *c, int step, double train, double val) {
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->steps = xrealloc(c->steps, (size_t)c->cap * sizeof *c->steps);
        c->train = xrealloc(c->train, (size_t)c->cap * sizeof *c->train);
        c->val = xrealloc(c->val, (size_t)c->cap * sizeof *c->val);
    }
    c->steps[c->n] = step, c->train[c->n] = train, c->val[c->n] = val;
    c->n++;
}

void curve_free(Curve *c) {
    free(c->steps), free(c->train), free(c->val);
    memset(c, 0, sizeof *c);
}

void curve_draw(const Curve *c, FILE *out) {
    enum { W = 64, H = 14 };
    if (c->n < 2) return;
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < c->n; i++) {
        lo = fmin(lo, fmin(c->train[i], c->val[i]));
        hi = fmax(hi, fmax(c->train[i], c->val[i]));
    }
    if (hi - lo < 1e-9) hi = lo + 1;
    char grid[H][W + 1];
    memset(grid, ' ', sizeof grid);
    int last = c->steps[c->n - 1], first = c->steps[0];
    for (int i = 0; i < c->n; i++) {
        int col = last > first ? (int)((double)(c->steps[i] - first)
                                       / (last - first) * (W - 1)) : 0;
        for (int k = 0; k < 2; k++) {
            double y = k ? c->val[i] : c->train[i];
            int row = (int)((hi - y) / (hi - lo) * (H - 1) + 0.5);
            char *cell = &grid[row][col], mark = k ? 'o' : '*';
            *cell = (*cell == ' ' || *cell == mark) ? mark : '@';
        }
    }
    fprintf(out, "loss curve  * train  o val  @ both  (evaluations from step %d to "
            "%d)\n", first, last);
    for (int r = 0; r < H; r++) {
        grid[r][W] = 0;
        double y = hi - (hi - lo) * r / (H - 1);
        fprintf(out, "  %6.3f |%s\n", y, grid[r]);
    }
    fprintf(out, "         +");
    for (int i = 0; i < W; i++) fputc('-', out);
    fprintf(out, "\n          %-10d%*d\n", first, W - 10, last);
}
