// gemv.c - the one-row products of a decoding step, the whole of what a
// GPT-2-sized model reads per token: gemv_rows (common/gemm_tiles.c)
// against OpenBLAS's sgemv on the same matrices, and both against a
// plain read of the same bytes, the floor that memory sets.
//
//   gemv LAYERS EMBD VOCAB THREADS [REPEATS]
//
// A step is, for each layer, the four weight matrices of chapter 5's
// block (qkv 3C x C, the projection C x C, the FFN's 4C x C and C x 4C),
// then the head (VOCAB x C), each times one row, as ./ch9 does for every
// token: at GPT-2 small's shape (12 768 50257) 124M floats, 498 MB, far
// more than any cache. Prints, for each of the three, the best step of
// REPEATS (default 10) in ms and the GB/s of weights it read; and
// gemv_rows's speed over sgemv's. tests/bench/bench_gpt2.py runs it
// beside the generation it compares.
#include <stdio.h>
#include <stdlib.h>

#ifndef NO_BLAS
#include <cblas.h>
#endif

#include "gemm.h"
#include "threads.h"
#include "timer.h"

static float *filled(size_t n) {
    float *p = malloc(n * sizeof *p);
    if (!p) {
        fprintf(stderr, "gemv: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++) p[i] = (float)((i * 7 + 3) % 11) * 0.01f;
    return p;
}

enum { ROWS_GEMV, OPENBLAS, READ };

// One step's products (or reads) by way of `how`; returns a sum that the
// compiler cannot drop.
static double step(int how, int L, int C, int V, float *const *w,
                   const float *x, float *y) {
    const int outs[4] = {3 * C, C, 4 * C, C}, ins[4] = {C, C, C, 4 * C};
    double keep = 0;
    for (int m = 0; m < 4 * L + 1; m++) {
        int N = m < 4 * L ? outs[m % 4] : V, K = m < 4 * L ? ins[m % 4] : C;
        if (how == ROWS_GEMV) {
            if (!gemv_rows(N, K, 1.0f, w[m], K, x, 0.0f, y)) return -1;
        } else if (how == OPENBLAS) {
#ifdef NO_BLAS
            return -1;
#else
            cblas_sgemv(CblasRowMajor, CblasNoTrans, N, K, 1.0f, w[m], K, x,
                        1, 0.0f, y, 1);
#endif
        } else {
            y[0] = 0;
            size_t n = (size_t)N * K / 16;   // (a last few floats aside)
#pragma omp parallel
            {
                float acc[16] = {0};   // 16 sums: one vector's worth
#pragma omp for schedule(static)
                for (size_t i = 0; i < n; i++)
                    for (int j = 0; j < 16; j++) acc[j] += w[m][16 * i + j];
                float s = 0;
                for (int j = 0; j < 16; j++) s += acc[j];
#pragma omp atomic
                y[0] += s;
            }
        }
        keep += y[0];
    }
    return keep;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: gemv LAYERS EMBD VOCAB THREADS [REPEATS]\n");
        return 2;
    }
    int L = atoi(argv[1]), C = atoi(argv[2]), V = atoi(argv[3]);
    int threads = atoi(argv[4]), repeats = argc > 5 ? atoi(argv[5]) : 10;
    if (L < 1 || C < 1 || V < 1 || threads < 1 || repeats < 1) {
        fprintf(stderr, "gemv: error: every size must be at least 1\n");
        return 2;
    }
    threads_set(threads);
    float **w = malloc((size_t)(4 * L + 1) * sizeof *w);
    if (!w) return 1;
    double bytes = 0;
    for (int m = 0; m < 4 * L + 1; m++) {
        size_t n = m < 4 * L ? (size_t)(m % 4 == 1 ? 1 : m % 4 == 0 ? 3 : 4)
                               * C * C
                             : (size_t)V * C;
        w[m] = filled(n);
        bytes += 4.0 * (double)n;
    }
    int widest = 4 * C > V ? 4 * C : V;
    float *x = filled((size_t)4 * C), *y = filled((size_t)widest);
    const char *names[3] = {"gemv_rows", "OpenBLAS sgemv", "plain read"};
    double best[3] = {1e30, 1e30, 1e30}, keep = 0;
    // the three by turns, so that a machine's slower minutes fall on all
    for (int r = 0; r < repeats + 1; r++)       // the first: a warm-up
        for (int how = 0; how < 3; how++) {
            double t0 = time_now();
            double k = step(how, L, C, V, w, x, y);
            double t = time_now() - t0;
            if (k == -1) best[how] = -1;
            keep += k;
            if (r > 0 && best[how] > 0 && t < best[how]) best[how] = t;
        }
    printf("gemv: %d x %d x %d (%.0f MB of weights a step), %d thread%s, "
           "best of %d\n", L, C, V, bytes / 1e6, threads,
           threads == 1 ? "" : "s", repeats);
    for (int how = 0; how < 3; how++) {
        if (best[how] < 0)
            printf("  %-15s not in this build\n", names[how]);
        else
            printf("  %-15s %8.2f ms a step %6.1f GB/s\n", names[how],
                   1e3 * best[how], bytes / best[how] / 1e9);
    }
    if (best[0] > 0 && best[1] > 0)
        printf("  gemv_rows / sgemv: %.2fx\n", best[1] / best[0]);
    if (keep == 0.123) printf("\n");   // (keep is used)
    for (int m = 0; m < 4 * L + 1; m++) free(w[m]);
    free(w), free(x), free(y);
    return 0;
}
