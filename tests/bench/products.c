// products.c - the floor under a training step of ./ch6: the time of the
// step's Linear matrix products alone, through the same gemm() (common/
// gemm.c) on the same threads, with nothing else in between.
//
//   products LAYERS EMBD BLOCK BATCH VOCAB THREADS [REPEATS]
//
// prints "products: X ms a step (best of REPEATS), Y GFLOP/s" where a step
// is, for each layer, the four products of the attention projections and
// the FFN (qkv, the output projection, the FFN's two) and, once, the
// language-model head: each forward (out = inp @ W^T), input gradient
// (dinp += dout @ W) and weight gradient (dW += dout^T @ inp), at the
// shapes of chapter 5's model with batch x block rows. The attention
// core's per-head products are left out (they belong to its own row of
// --profile, and are small). tests/bench/bench.py divides this by a
// measured step: the share of a step that the products could be, were all
// else free.
#include <stdio.h>
#include <stdlib.h>

#include "gemm.h"
#include "threads.h"
#include "timer.h"

static float *filled(size_t n) {
    float *p = malloc(n * sizeof *p);
    if (!p) {
        fprintf(stderr, "products: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++) p[i] = (float)((i * 7 + 3) % 11) * 0.01f;
    return p;
}

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: products LAYERS EMBD BLOCK BATCH VOCAB "
                        "THREADS [REPEATS]\n");
        return 2;
    }
    int L = atoi(argv[1]), C = atoi(argv[2]), T = atoi(argv[3]);
    int B = atoi(argv[4]), V = atoi(argv[5]), threads = atoi(argv[6]);
    int repeats = argc > 7 ? atoi(argv[7]) : 10;
    if (L < 1 || C < 1 || T < 1 || B < 1 || V < 1 || threads < 1
        || repeats < 1) {
        fprintf(stderr, "products: error: every size must be at least 1\n");
        return 2;
    }
    threads_set(threads);
    int N = B * T;
    // (out, in) of each Linear of a layer, then the head
    const int outs[5] = {3 * C, C, 4 * C, C, V}, ins[5] = {C, C, C, 4 * C, C};
    // rows of the widest product: the FFN's 4C, or the head's V (a
    // vocabulary larger than 4C, GPT-2's 50,257)
    size_t big = (size_t)N * (4 * C > V ? 4 * C : V);
    float *inp = filled(big), *dout = filled(big), *out = filled(big);
    float *dinp = filled(big);
    float *w = filled((size_t)4 * C * C + (size_t)V * C);
    float *dw = filled((size_t)4 * C * C + (size_t)V * C);
    double flops = 0, best = 1e30;
    for (int r = 0; r < repeats + 1; r++) {       // the first: a warm-up
        double t0 = time_now();
        for (int l = 0; l < L + 1; l++)
            for (int p = (l == L ? 4 : 0); p < (l == L ? 5 : 4); p++) {
                int o = outs[p], i = ins[p];
                gemm(false, true, N, o, i, 1.0f, inp, i, w, i, 0.0f, out, o);
                gemm(false, false, N, i, o, 1.0f, dout, o, w, i, 1.0f, dinp,
                     i);
                gemm(true, false, o, i, N, 1.0f, dout, o, inp, i, 1.0f, dw,
                     i);
                if (r == 0) flops += 3 * 2.0 * N * o * i;
            }
        double t = time_now() - t0;
        if (r > 0 && t < best) best = t;
    }
    printf("products: %.3f ms a step (best of %d), %.1f GFLOP/s, %d "
           "thread%s, %s\n", best * 1e3, repeats, flops / best / 1e9, threads,
           threads > 1 ? "s" : "", gemm_backend());
    free(inp), free(dout), free(out), free(dinp), free(w), free(dw);
    return 0;
}
