// ch2 - attention: the weights of a small causal example, why scores are
// scaled by 1/sqrt(d_k), a gradient check and the quadratic cost.
//
//   ./ch2                        the defaults, about a second
//   ./ch2 --T 6 --heads 2 --pad 2 --seed 7
//   ./ch2 --plot-data DIR        also the example's weights, the saturation
//                                and the timings, as CSV
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "error.h"
#include "flags.h"
#include "gemm.h"
#include "mem.h"
#include "mha.h"
#include "plotdata.h"
#include "rng.h"
#include "testing.h"
#include "report.h"
#include "threads.h"
#include "timer.h"
#include "utf8.h"


// Everything a multi-head attention layer needs, for the demonstrations.
typedef struct {
    int B, T, C, NH;
    float *x, *out, *w_attn, *b_attn, *w_proj, *b_proj;   // (B,T,C) ...
    MhaCache cache;
} Layer;

// Weights ~ N(0, 1/C): with unit-variance inputs, q, k and v then have
// about unit variance too, and the attention pattern is neither flat nor
// one-hot. (A trained model's weights are not random, of course.)
static void layer_init(Layer *l, int B, int T, int C, int NH, bool bias,
                       Rng *rng) {
    Error err;
    *l = (Layer){.B = B, .T = T, .C = C, .NH = NH};
    if (mha_cache_alloc(&l->cache, B, T, C, NH, &err) != 0)
        die("%s", err.msg);
    size_t btc = (size_t)B * T * C;
    float std = 1.0f / sqrtf((float)C);
    l->x = alloc_floats(btc);
    l->out = alloc_floats(btc);
    l->w_attn = alloc_floats((size_t)3 * C * C);
    l->w_proj = alloc_floats((size_t)C * C);
    // The weights first, then the inputs, token by token: a longer T only
    // appends tokens, so the first rows of the example do not change.
    rng_normal_fill(rng, l->w_attn, (size_t)3 * C * C, 0.0f, std);
    rng_normal_fill(rng, l->w_proj, (size_t)C * C, 0.0f, std);
    if (bias) {
        l->b_attn = alloc_floats((size_t)3 * C);
        l->b_proj = alloc_floats((size_t)C);
        rng_normal_fill(rng, l->b_attn, (size_t)3 * C, 0.0f, 0.1f);
        rng_normal_fill(rng, l->b_proj, (size_t)C, 0.0f, 0.1f);
    }
    rng_normal_fill(rng, l->x, btc, 0.0f, 1.0f);
}

// The floats layer_init allocates.
static size_t layer_floats(int B, int T, int C, int NH, bool bias) {
    size_t btc = (size_t)B * T * C;
    return mha_cache_floats(B, T, C, NH) + 2 * btc
           + (size_t)4 * C * C + (bias ? (size_t)4 * C : 0);
}

static void layer_free(Layer *l) {
    free(l->x);
    free(l->out);
    free(l->w_attn);
    free(l->b_attn);
    free(l->w_proj);
    free(l->b_proj);
    mha_cache_free(&l->cache);
}

static void layer_forward(Layer *l, const int *key_mask, bool causal) {
    Error err;
    if (mha_forward(l->out, &l->cache, l->x, l->w_attn, l->b_attn,
                    l->w_proj, l->b_proj, key_mask, causal, l->B, l->T, l->C,
                    l->NH, &err) != 0)
        die("%s", err.msg);
}

// A character as a grid label: space as '_', newline as '/', any other
// control character as '?'.
static void print_label(uint32_t cp, int width) {
    char buf[5] = {0};
    if (cp == ' ') cp = '_';
    if (cp == '\n') cp = '/';
    if (cp < ' ' || cp == 0x7f) cp = '?';
    buf[utf8_encode(cp, buf)] = '\0';
    printf("%*s%s", width - 1, "", buf);
}

// --- 1. the attention weights of a small example ----------------------------

// The example's weights of head 0 for the book's figures, causal (as
// printed) and unmasked: the same layer run again without the causal
// mask. One row per (query, key) pair, with their characters.
static void write_attention_csv(Layer *l, const uint32_t *text, const int *mask,
                            const char *dir) {
    int T = l->T;
    float *causal = alloc_floats((size_t)T * T);
    memcpy(causal, l->cache.att, (size_t)T * T * sizeof *causal);
    layer_forward(l, mask, false);
    Error err;
    FILE *f = plot_csv_open(dir, "attention.csv",
                            "query,key,query_char,key_char,causal,unmasked",
                            &err);
    if (!f) die("%s", err.msg);
    for (int t = 0; t < T; t++)
        for (int s = 0; s < T; s++) {
            fprintf(f, "%d,%d,", t, s);
            plot_csv_label(f, text[t]);
            fputc(',', f);
            plot_csv_label(f, text[s]);
            fprintf(f, ",%.6f,%.6f\n", causal[(size_t)t * T + s],
                    l->cache.att[(size_t)t * T + s]);
        }
    if (plot_csv_close(f, dir, "attention.csv", &err) != 0)
        die("%s", err.msg);
    printf("plot data   %s/attention.csv\n", dir);
    free(causal);
}

static void show_example(const uint32_t *text, int T, int C, int NH,
                         int pad, uint64_t seed, const char *plot_dir) {
    Rng rng;
    rng_seed(&rng, seed);
    Layer l;
    layer_init(&l, 1, T, C, NH, false, &rng);
    // The same character gets the same input vector (a stand-in for the
    // embeddings of chapter 5): row t copies the row of its first use.
    for (int t = 0; t < T; t++)
        for (int u = 0; u < t; u++)
            if (text[u] == text[t]) {
                memcpy(l.x + (size_t)t * C, l.x + (size_t)u * C,
                       (size_t)C * sizeof *l.x);
                break;
            }
    int *mask = xmalloc((size_t)T * sizeof *mask);
    for (int t = 0; t < T; t++) mask[t] = t < T - pad;
    layer_forward(&l, pad ? mask : NULL, true);
    printf("example     causal self-attention, T=%d C=%d NH=%d, random "
           "weights (seed %llu)", T, C, NH, (unsigned long long)seed);
    if (pad) printf(", the last %d tokens padding", pad);
    printf("\n            weights of head 0: row = query t, column = key s, "
           "\".\" = exactly 0\n            ");
    for (int s = 0; s < T; s++) print_label(text[s], 6);
    printf("\n");
    double worst = 0;
    for (int t = 0; t < T; t++) {
        const float *row = l.cache.att + (size_t)t * T;   // head 0
        double sum = 0;
        printf("          ");
        print_label(text[t], 2);
        for (int s = 0; s < T; s++) {
            sum += row[s];
            if (row[s] == 0.0f) printf("     .");
            else printf(" %5.3f", row[s]);
        }
        printf("\n");
        if (sum != 0 && fabs(sum - 1) > worst) worst = fabs(sum - 1);
    }
    report_line("", "each row sums to 1 (largest error %.1e), or is all 0 "
                "when no key is visible", worst);
    if (*plot_dir) write_attention_csv(&l, text, pad ? mask : NULL, plot_dir);
    free(mask);
    layer_free(&l);
}

// --- 2. saturation: why the scores are divided by sqrt(d_k) -----------------

// Sums over rows of the largest weight, the entropy -sum p ln p, and
// 1 - sum p^2, the trace of the softmax's Jacobian diag(p) - p p^T: how
// much a change of the scores can still move the weights.
static void row_stats(const float *p, int rows, int n, double stats[3]) {
    for (int r = 0; r < rows; r++) {
        const float *row = p + (size_t)r * n;
        double m = 0, h = 0, sq = 0;
        for (int s = 0; s < n; s++) {
            if (row[s] > m) m = row[s];
            if (row[s] > 0) h -= row[s] * log(row[s]);
            sq += (double)row[s] * row[s];
        }
        stats[0] += m;
        stats[1] += h;
        stats[2] += 1 - sq;
    }
}

// The softmax of q.k over KEYS random keys for SAT_ROWS random queries,
// q and k ~ N(0, 1) with d_k components, scores scaled by 1/sqrt(d_k) or
// not: stats = the scores' standard deviation, then the means over rows
// of the largest weight, the entropy and 1 - sum p^2. The generator is
// seeded from seed and d_k alone, so both scalings see the same q and k.
enum { KEYS = 128, ROWS = 64, ROUNDS = 16, SAT_ROWS = ROWS * ROUNDS };

static void saturation_stats(int dk, bool scaled, uint64_t seed,
                             double stats[4]) {
    Rng rng;
    rng_seed(&rng, seed + (uint64_t)dk);
    float *q = alloc_floats((size_t)ROWS * dk);
    float *k = alloc_floats((size_t)KEYS * dk);
    float *p = alloc_floats((size_t)ROWS * KEYS);
    float alpha = scaled ? 1.0f / sqrtf((float)dk) : 1.0f;
    double rs[3] = {0, 0, 0}, var = 0;
    for (int round = 0; round < ROUNDS; round++) {
        rng_normal_fill(&rng, q, (size_t)ROWS * dk, 0.0f, 1.0f);
        rng_normal_fill(&rng, k, (size_t)KEYS * dk, 0.0f, 1.0f);
        gemm(false, true, ROWS, KEYS, dk, alpha, q, dk, k, dk, 0.0f, p,
             KEYS);                                      // the scores
        for (int j = 0; j < ROWS * KEYS; j++) var += (double)p[j] * p[j];
        softmax_forward(p, p, ROWS, KEYS);
        row_stats(p, ROWS, KEYS, rs);
    }
    stats[0] = sqrt(var / ((double)SAT_ROWS * KEYS));
    for (int i = 0; i < 3; i++) stats[1 + i] = rs[i] / SAT_ROWS;
    free(q);
    free(k);
    free(p);
}

static void show_saturation(uint64_t seed) {
    report_line("saturation", "softmax of q.k over %d keys, q and k random "
                "with unit variance,\nthe mean of %d rows; uniform weights "
                "would have max %.4f,\nentropy %.2f and 1 - sum p^2 %.3f",
                KEYS, SAT_ROWS, 1.0 / KEYS, log(KEYS), 1 - 1.0 / KEYS);
    printf("            %5s  %-12s %9s %11s %9s %12s\n", "d_k", "scale",
           "score std", "max weight", "entropy", "1 - sum p^2");
    const int dks[2] = {32, 128};
    for (int i = 0; i < 4; i++) {
        int dk = dks[i / 2];
        bool scaled = i % 2 == 0;
        double st[4];
        saturation_stats(dk, scaled, seed, st);
        char label[32];
        snprintf(label, sizeof label, scaled ? "1/sqrt(%d)" : "none", dk);
        printf("            %5d  %-12s %9.2f %11.4f %9.2f %12.3f\n", dk,
               label, st[0], st[1], st[2], st[3]);
    }
}

// The same statistics for d_k = 1, 2, 4, ..., 512, scaled and not, for
// the book's figure: one row per (d_k, scaling).
static void write_saturation_csv(uint64_t seed, const char *dir) {
    Error err;
    FILE *f = plot_csv_open(dir, "saturation.csv", "d_k,scaled,score_std,"
                            "max_weight,entropy,one_minus_sum_p2", &err);
    if (!f) die("%s", err.msg);
    for (int dk = 1; dk <= 512; dk *= 2)
        for (int scaled = 1; scaled >= 0; scaled--) {
            double st[4];
            saturation_stats(dk, scaled, seed, st);
            fprintf(f, "%d,%d,%.6f,%.6f,%.6f,%.6f\n", dk, scaled, st[0],
                    st[1], st[2], st[3]);
        }
    if (plot_csv_close(f, dir, "saturation.csv", &err) != 0)
        die("%s", err.msg);
    printf("plot data   %s/saturation.csv\n", dir);
}

// --- 3. the backward pass against finite differences -------------------------

typedef struct {
    Layer *l;
    const float *w;      // (B,T,C) fixed random weights of the loss
    const int *mask;
} GradCtx;

// L = sum of out * w, reduced in double (a LossFn of common/testing.h).
static double loss_of(void *ctx) {
    const GradCtx *g = ctx;
    Layer *l = g->l;
    layer_forward(l, g->mask, true);
    double sum = 0;
    for (size_t i = 0; i < (size_t)l->B * l->T * l->C; i++)
        sum += (double)l->out[i] * g->w[i];
    return sum;
}

// max |analytic - numeric| / max |numeric| over the n elements of param.
static double check_param(GradCtx *g, float *param, const float *grad,
                          size_t n) {
    return grad_rel_error(loss_of, g, param, grad, n, 1e-2);
}

static void show_gradcheck(uint64_t seed) {
    enum { B = 2, T = 5, C = 6, NH = 3 };
    Rng rng;
    rng_seed(&rng, seed);
    Layer l;
    layer_init(&l, B, T, C, NH, true, &rng);
    float w[B * T * C];
    rng_normal_fill(&rng, w, B * T * C, 0.0f, 1.0f);
    const int mask[B * T] = {1, 1, 1, 1, 1, 1, 1, 1, 0, 0};
    GradCtx g = {&l, w, mask};
    float *grads = alloc_floats((size_t)B * T * C + 4 * C * C + 4 * C);
    float *dx = grads, *dwa = dx + B * T * C, *dba = dwa + 3 * C * C;
    float *dwp = dba + 3 * C, *dbp = dwp + C * C;
    MhaScratch s;
    Error err;
    if (mha_scratch_alloc(&s, B, T, C, NH, &err) != 0) die("%s", err.msg);
    loss_of(&g);                                    // the forward pass
    mha_backward(dx, dwa, dba, dwp, dbp, &s, w, &l.cache, l.x, l.w_attn,
                 l.w_proj, B, T, C, NH);            // dL/dout = w
    report_line("gradcheck", "B=%d T=%d C=%d NH=%d, causal, 2 padding "
                "tokens: backward vs central differences, max |error| / max "
                "|gradient| of each tensor:", B, T, C, NH);
    report_line("", "inp %.1e  c_attn.weight %.1e  c_attn.bias %.1e\n"
                "c_proj.weight %.1e  c_proj.bias %.1e",
                check_param(&g, l.x, dx, B * T * C),
                check_param(&g, l.w_attn, dwa, 3 * C * C),
                check_param(&g, l.b_attn, dba, 3 * C),
                check_param(&g, l.w_proj, dwp, C * C),
                check_param(&g, l.b_proj, dbp, C));
    mha_scratch_free(&s);
    free(grads);
    layer_free(&l);
}

// --- 4. the cost: quadratic in T ---------------------------------------------

// The timings' layer: B sequences of T tokens, C channels, NH heads.
enum { TIME_B = 4, TIME_C = 128, TIME_NH = 4 };

static void run_layer(void *l) { layer_forward(l, NULL, true); }

// The attention core alone, on the heads the layer's cache already holds
// in the rows of qkv.
static void run_core(void *p) {
    Layer *l = p;
    MhaCache *c = &l->cache;
    int C = l->C, HS = C / l->NH;
    HeadsLayout lqkv = heads_in_rows(l->T, 3 * C, HS);
    attention_forward_strided(c->y, heads_in_rows(l->T, C, HS), c->att,
                              c->qkv, lqkv, c->qkv + C, c->qkv + 2 * C, lqkv,
                              NULL, true, l->B, l->NH, l->T, l->T, HS, NULL);
}

static void show_timing(int max_T, uint64_t seed) {
    enum { B = TIME_B, C = TIME_C, NH = TIME_NH };
    // one thread: a ratio then measures the work, not how well a small
    // problem spreads over the cores (see common/threads.h)
    ThreadCounts prev = threads_set(1);
    printf("timing      forward pass on one thread, B=%d C=%d NH=%d (best "
           "of repeats;\n            ratio = time / time at half the T)\n",
           B, C, NH);
    printf("            %5s %11s %6s %15s %6s %6s\n", "T", "layer ms",
           "ratio", "att. core ms", "ratio", "share");
    double prev_layer = 0, prev_core = 0;
    for (int T = 64; T <= max_T; T *= 2) {
        Rng rng;
        rng_seed(&rng, seed);
        Layer l;
        layer_init(&l, B, T, C, NH, false, &rng);
        // the best of 3 to 200 runs over about 0.1 s (common/timer.h)
        double layer_ms = time_best_ms(run_layer, &l, 3, 200, 0.1);
        double core_ms = time_best_ms(run_core, &l, 3, 200, 0.1);
        printf("            %5d %11.3f", T, layer_ms);
        if (prev_layer > 0) printf(" %5.1fx", layer_ms / prev_layer);
        else printf(" %6s", "");
        printf(" %15.3f", core_ms);
        if (prev_core > 0) printf(" %5.1fx", core_ms / prev_core);
        else printf(" %6s", "");
        printf(" %5.0f%%\n", 100 * core_ms / layer_ms);
        prev_layer = layer_ms;
        prev_core = core_ms;
        layer_free(&l);
    }
    threads_restore(prev);
}

// The layer and its core at 16 evenly spaced T up to max_T, the median
// CPU time of 5 runs each (common/timer.h), for the book's figure:
// timings measured on the machine that runs it, not the same twice.
static void write_timing_csv(int max_T, uint64_t seed, const char *dir) {
    enum { B = TIME_B, C = TIME_C, NH = TIME_NH, POINTS = 16, REPS = 5 };
    ThreadCounts prev = threads_set(1);      // as show_timing
    Error err;
    FILE *f = plot_csv_open(dir, "timing.csv", "T,layer_ms,core_ms", &err);
    if (!f) die("%s", err.msg);
    for (int i = 1; i <= POINTS; i++) {
        int T = (int)((long)i * max_T / POINTS);
        Rng rng;
        rng_seed(&rng, seed);
        Layer l;
        layer_init(&l, B, T, C, NH, false, &rng);
        double layer_ms = time_median_ms(run_layer, &l, REPS);
        double core_ms = time_median_ms(run_core, &l, REPS);
        fprintf(f, "%d,%.4f,%.4f\n", T, layer_ms, core_ms);
        layer_free(&l);
    }
    if (plot_csv_close(f, dir, "timing.csv", &err) != 0) die("%s", err.msg);
    threads_restore(prev);
    printf("plot data   %s/timing.csv\n", dir);
}

// The memory of the whole run (mem.h), before any of it is allocated:
// one at a time, the example's layer (with its causal weights kept for
// the CSV), the saturation's scores and the timing's largest layer.
// Refused with one line (exit 2).
static void check_memory(int T, int C, int NH, int max_T, bool plot) {
    MemPlan p;
    mem_plan_begin(&p);
    mem_plan_phase(&p, layer_floats(1, T, C, NH, false)
                       + (plot ? (size_t)T * T : 0) + T);
    int dk = plot ? 512 : 128;
    mem_plan_phase(&p, (size_t)(ROWS + KEYS) * dk + ROWS * KEYS);
    int top = 64;                // show_timing's largest T
    while (top * 2 <= max_T) top *= 2;
    mem_plan_phase(&p, layer_floats(TIME_B, plot ? max_T : top, TIME_C,
                                    TIME_NH, false));
    Error err;
    if (mem_plan_check(&p, "lower --max-T", &err) != 0)
        error_exit(2, err.msg);
}

// The characters of text, its line ends read as a file's (utf8.h),
// decoded; -1 with a message on bad UTF-8.
static long decode_text(const char *text, uint32_t **cps, Error *err) {
    size_t bytes;
    char *t = text_copy(text, &bytes);
    *cps = xmalloc((bytes + 1) * sizeof **cps);
    long n = utf8_decode(t, bytes, *cps, err);
    free(t);
    return n;
}

int main(int argc, char **argv) {
    enum { MAX_EXAMPLE = 32 };   // the grid's columns fit a terminal
    error_set_progname(argv[0]);   // for an error before flags_parse
    const char *text = "To be or not to be", *plot_dir = "";
    int T = 8, C = 32, NH = 4, pad = 0, max_T = 512;
    uint64_t seed = 1337;
    // A --text shorter than 8 characters makes its length the default T,
    // so that --help shows the T that will really apply.
    const char *peek = flags_peek(argc, argv, "text");
    if (peek) {
        uint32_t *tmp;
        Error ignored;   // a bad --text is reported after parsing
        long len = decode_text(peek, &tmp, &ignored);
        if (len >= 1 && len < T) T = (int)len;
        free(tmp);
    }
    Flag flags[] = {
        {"T", FLAG_INT, &T, "tokens in the example (the first T characters "
         "of --text)"},
        {"text", FLAG_STRING, &text, "the example's tokens (equal characters "
         "get equal input vectors)"},
        {"channels", FLAG_INT, &C, "channels of the example (C)"},
        {"heads", FLAG_INT, &NH, "heads of the example (NH, divides C)"},
        {"pad", FLAG_INT, &pad, "mark the example's last N tokens as "
         "padding"},
        {"max-T", FLAG_INT, &max_T, "largest T of the timings (64, 128, "
         "...)"},
        {"seed", FLAG_U64, &seed, "random seed of inputs and weights"},
        {"plot-data", FLAG_STRING, &plot_dir, "also write the example's "
         "weights of head 0 (causal and unmasked), the saturation against "
         "d_k and the forward pass's time against T as CSV files into this "
         "folder"},
    };
    const FlagRange ranges[] = {
        {"T", .lo = 1, .hi = MAX_EXAMPLE}, {"channels", .lo = 1, .hi = 1024},
        {"heads", .lo = 1, .hi = 1024}, {"pad", .lo = 0, .hi_flag = "T"},
        {"max-T", .lo = 64, .hi = 4096},
    };
    int n_flags = sizeof flags / sizeof flags[0];
    int n_ranges = sizeof ranges / sizeof ranges[0];
    flags_parse(argc, argv, flags, n_flags, ranges, n_ranges,
                "Chapter 2: prints the causal attention weights of a small "
                "example, shows why\nscores are scaled by 1/sqrt(d_k), "
                "checks the backward pass against finite\ndifferences and "
                "times the forward pass as the sequence grows.");
    flags_check_ranges(flags, n_flags, ranges, n_ranges);
    uint32_t *cps;
    Error err;
    long n = decode_text(text, &cps, &err);
    if (n < 0) flags_fail("--text: %s", err.msg);
    if (n == 0) flags_fail("--text is empty: give at least one character");
    if (T > n)
        flags_fail("--text has %ld character%s, too few for --T %d", n,
                   n == 1 ? "" : "s", T);
    if (C % NH != 0)
        flags_fail("--heads must divide --channels %d, got %d", C, NH);
    // a folder that cannot take the CSV file fails before any work
    if (flags_given(&plot_dir) && plot_dir_check(plot_dir, &err) != 0)
        die("%s", err.msg);

    check_memory(T, C, NH, max_T, *plot_dir != 0);
    double t0 = time_now();
    printf("== Chapter 2: attention ==\n");
    show_example(cps, T, C, NH, pad, seed, plot_dir);
    show_saturation(seed);
    if (*plot_dir) write_saturation_csv(seed, plot_dir);
    show_gradcheck(seed);
    show_timing(max_T, seed);
    if (*plot_dir) write_timing_csv(max_T, seed, plot_dir);
    printf("time        %.2f s (%s GEMM)\n", time_now() - t0,
           gemm_backend());
    free(cps);
    return 0;
}
