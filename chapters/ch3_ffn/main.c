// ch3 - the feed-forward network: a small example, the parameter counts of
// the FFN against attention, GELU against ReLU, a gradient check, and the
// time of the FFN against attention as the sequence grows.
//
//   ./ch3                        the defaults, a second or two
//   ./ch3 --channels 16 --ff 40 --gelu tanh --dropout 0.2
//   ./ch3 --plot-data DIR        also the activations on [-4, 4] and the
//                                timings, as CSV
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "activation.h"
#include "dropout.h"
#include "error.h"
#include "ffn.h"
#include "flags.h"
#include "gemm.h"
#include "mem.h"
#include "mha.h"
#include "plotdata.h"
#include "rng.h"
#include "swiglu.h"
#include "testing.h"
#include "report.h"
#include "threads.h"
#include "timer.h"


static float *randn(Rng *rng, size_t n, float std) {
    float *p = alloc_floats(n);
    rng_normal_fill(rng, p, n, 0.0f, std);
    return p;
}

// One FFN layer with its input, for the demonstrations. Weights ~ N(0,
// 1/fan_in): unit-variance inputs give pre-activations of about unit
// variance, where GELU's curve matters. (Training changes them, of course.)
typedef struct {
    int B, T, C, F;
    float *x, *out, *w_fc, *b_fc, *w_proj, *b_proj;
    float *mask;           // dropout's, applied to the FFN's output
    FfnCache cache;
} Layer;

static void layer_init(Layer *l, int B, int T, int C, int F, Rng *rng) {
    Error err;
    *l = (Layer){.B = B, .T = T, .C = C, .F = F};
    if (ffn_cache_alloc(&l->cache, B, T, C, F, &err) != 0)
        die("%s", err.msg);
    size_t btc = (size_t)B * T * C;
    l->x = randn(rng, btc, 1.0f);
    l->out = alloc_floats(btc);
    l->mask = alloc_floats(btc);
    l->w_fc = randn(rng, (size_t)F * C, 1.0f / sqrtf((float)C));
    l->b_fc = randn(rng, (size_t)F, 0.1f);
    l->w_proj = randn(rng, (size_t)C * F, 1.0f / sqrtf((float)F));
    l->b_proj = randn(rng, (size_t)C, 0.1f);
}

// The floats layer_init allocates.
static size_t layer_floats(int B, int T, int C, int F) {
    size_t btc = (size_t)B * T * C;
    return ffn_cache_floats(B, T, C, F) + 3 * btc + 2 * (size_t)F * C + F
           + C;
}

static void layer_free(Layer *l) {
    free(l->x);
    free(l->out);
    free(l->mask);
    free(l->w_fc);
    free(l->b_fc);
    free(l->w_proj);
    free(l->b_proj);
    ffn_cache_free(&l->cache);
}

// The forward pass, then dropout on its output as a block applies it
// (chapter 4); with p > 0 the dropout mask comes from seed.
static void layer_forward(Layer *l, Activation act, float p, uint64_t seed) {
    Rng rng;
    rng_seed(&rng, seed);
    Error err;
    if (ffn_forward(l->out, &l->cache, l->x, l->w_fc, l->b_fc, l->w_proj,
                    l->b_proj, act, l->B, l->T, l->C, l->F, &err) != 0
        || dropout_forward(l->out, l->mask, l->out, p, &rng,
                           (size_t)l->B * l->T * l->C, &err) != 0)
        die("%s", err.msg);
}

// A label and the first values of a row (7 and "..." when there are more).
static void print_row(const char *label, const float *v, int n) {
    printf("            %-11s", label);
    for (int i = 0; i < n && i < (n > 8 ? 7 : 8); i++) printf(" %6.3f", v[i]);
    printf(n > 8 ? "  ...\n" : "\n");
}

// --- 1. a small example ----------------------------------------------------

static void show_example(int T, int C, int F, Activation act, float p,
                         uint64_t seed) {
    enum { B = 2 };
    Rng rng;
    rng_seed(&rng, seed);
    Layer l;
    layer_init(&l, B, T, C, F, &rng);
    // the last token gets the first token's vector, to show position-wise
    size_t last = (size_t)(B * T - 1) * C;
    memcpy(l.x + last, l.x, (size_t)C * sizeof *l.x);
    layer_forward(&l, act, p, seed + 1);
    printf("ffn         position-wise feed-forward network, B=%d T=%d C=%d "
           "F=%d, %s GELU,\n            dropout p=%g, random weights (seed "
           "%llu)\n", B, T, C, F, activation_name(act), (double)p,
           (unsigned long long)seed);
    printf("            inp (%d,%d,%d) -> c_fc -> h (%d,%d,%d) -> GELU -> a "
           "(%d,%d,%d) -> c_proj\n            -> dropout -> out (%d,%d,%d)"
           "\n", B, T, C, B, T, F, B, T, F, B, T, C);
    print_row("inp[0,0,:]", l.x, C);
    print_row("h[0,0,:]", l.cache.h, F);
    print_row("a[0,0,:]", l.cache.a, F);
    print_row("out[0,0,:]", l.out, C);
    double diff = 0, negative = 0;
    for (int i = 0; i < C; i++)
        diff = fmax(diff, fabs(l.out[last + i] - l.out[i]));
    for (size_t i = 0; i < (size_t)B * T * F; i++)
        negative += l.cache.h[i] < 0;
    char same[96];
    if (diff == 0) snprintf(same, sizeof same, "are identical");
    else if (diff < 1e-5)   // the BLAS may block the rows apart
        snprintf(same, sizeof same, "differ by %.2g, a rounding (the "
                 "product sums their rows in another order)", diff);
    else   // only dropout can do that
        snprintf(same, sizeof same, "differ by %.2g: dropout's masks "
                 "differ", diff);
    report_line("", "token [%d,%d] has token [0,0]'s input; their outputs %s",
                B - 1, T - 1, same);
    printf("            %.0f%% of h is < 0: GELU shrinks those towards 0, "
           "ReLU would zero them\n", 100 * negative / ((double)B * T * F));
    layer_free(&l);
}

// --- 2. parameter counts -----------------------------------------------------

// n with thousands separators: 131072 -> "131,072".
static const char *commas(size_t n, char buf[32]) {
    char digits[32];
    int len = snprintf(digits, sizeof digits, "%zu", n), j = 0;
    for (int i = 0; i < len; i++) {
        if (i > 0 && (len - i) % 3 == 0) buf[j++] = ',';
        buf[j++] = digits[i];
    }
    buf[j] = '\0';
    return buf;
}

static void param_row(const char *label, size_t n, size_t with_bias, int L) {
    char a[32], b[32], c[32];
    printf("            %-30s %10s %10s %10s\n", label, commas(n, a),
           commas(with_bias, b), commas(L * n, c));
}

static void show_params(void) {
    const int C = 128, NH = 4, F = 4 * C, L = 4, H = swiglu_hidden(F);
    size_t att = (size_t)3 * C * C + (size_t)C * C;   // c_attn, c_proj
    size_t ffn = ffn_param_count(C, F, false);
    char label[64], a[32], b[32];
    report_line("params", "the course notes' config: C=%d, NH=%d, F=4C=%d, "
                "%d layers, bias=False", C, NH, F, L);
    printf("            %-30s %10s %10s %10s\n", "", "one layer", "+ biases",
           "4 layers");
    param_row("attention (c_attn, c_proj)", att, att + 4 * C, L);
    param_row("FFN (c_fc, c_proj)", ffn, ffn_param_count(C, F, true), L);
    snprintf(label, sizeof label, "SwiGLU, H=%d (gate, up, down)", H);
    param_row(label, swiglu_param_count(C, H, false),
              swiglu_param_count(C, H, true), L);
    printf("            attention 4C^2, FFN 2CF = 8C^2: the FFN holds "
           "%.0f%% of a block's\n            matrix weights (%s of %s)\n",
           100.0 * ffn / (att + ffn), commas(ffn, a), commas(att + ffn, b));
}

// --- 3. GELU against ReLU ----------------------------------------------------

// ReLU, exact GELU and tanh GELU (y[0..2]) at the n points x, with their
// derivatives (d[0..2]) from the backward passes with dout = 1.
static void eval_activations(const float *x, int n, float *y[3],
                             float *d[3]) {
    float *ones = alloc_floats((size_t)n);
    for (int i = 0; i < n; i++) ones[i] = 1.0f;
    for (int k = 0; k < 3; k++) memset(d[k], 0, (size_t)n * sizeof *d[k]);
    relu_forward(y[0], x, n);
    relu_backward(d[0], ones, x, n);
    for (int k = 0; k < 2; k++) {
        Activation kind = k == 0 ? GELU_EXACT : GELU_TANH;
        gelu_forward(y[1 + k], x, kind, n);
        gelu_backward(d[1 + k], ones, x, kind, n);
    }
    free(ones);
}

static void show_activations(void) {
    enum { N = 13, M = 1201 };
    float x[N], ys[3][N], ds[3][N];
    float *y[3] = {ys[0], ys[1], ys[2]}, *d[3] = {ds[0], ds[1], ds[2]};
    for (int i = 0; i < N; i++) x[i] = -3.0f + 0.5f * i;
    eval_activations(x, N, y, d);
    printf("gelu        GELU(x) = x Phi(x) against ReLU(x) = max(0, x), "
           "with derivatives:\n");
    printf("            %5s %8s %7s %9s %8s %9s %8s\n", "x", "relu",
           "relu'", "gelu", "gelu'", "tanh", "tanh'");
    for (int i = 0; i < N; i++)
        printf("            %5.1f %8.4f %7.0f %9.4f %8.4f %9.4f %8.4f\n",
               x[i], y[0][i], d[0][i], y[1][i], d[1][i], y[2][i], d[2][i]);
    // how far the tanh form is from the exact one, on [-6, 6]
    float *xs = alloc_floats(M), *ge = alloc_floats(M), *gt = alloc_floats(M);
    for (int i = 0; i < M; i++) xs[i] = -6.0f + 0.01f * i;
    gelu_forward(ge, xs, GELU_EXACT, M);
    gelu_forward(gt, xs, GELU_TANH, M);
    int worst = 0;
    for (int i = 1; i < M; i++)
        if (fabsf(ge[i] - gt[i]) > fabsf(ge[worst] - gt[worst])) worst = i;
    printf("            tanh form vs exact on [-6, 6]: largest gap %.1e, at "
           "x = %.2f\n", fabsf(ge[worst] - gt[worst]),
           xs[worst]);
    free(xs);
    free(ge);
    free(gt);
}

// The three activations and their derivatives on [-4, 4] in steps of
// 0.02, for the book's figure (eval_activations).
static void write_activations_csv(const char *dir) {
    enum { N = 401 };
    float x[N], ys[3][N], ds[3][N];
    float *y[3] = {ys[0], ys[1], ys[2]}, *d[3] = {ds[0], ds[1], ds[2]};
    // (i - 200) / 50, not -4 + 0.02 i: exact at 0 whatever the compiler
    // contracts into a fused multiply-add
    for (int i = 0; i < N; i++) x[i] = (float)(i - N / 2) / 50.0f;
    eval_activations(x, N, y, d);
    Error err;
    FILE *f = plot_csv_open(dir, "activations.csv", "x,relu,relu_grad,gelu,"
                            "gelu_grad,gelu_tanh,gelu_tanh_grad", &err);
    if (!f) die("%s", err.msg);
    for (int i = 0; i < N; i++)
        fprintf(f, "%.2f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f\n", x[i], y[0][i],
                d[0][i], y[1][i], d[1][i], y[2][i], d[2][i]);
    if (plot_csv_close(f, dir, "activations.csv", &err) != 0)
        die("%s", err.msg);
    printf("plot data   %s/activations.csv\n", dir);
}

// --- 4. the backward pass against finite differences -----------------------

typedef struct {
    Layer *l;
    const float *w;        // (B,T,C) fixed random weights of the loss
    Activation act;
    float p;
} GradCtx;

// L = sum of out * w, in double; the same dropout mask every time.
static double loss_of(void *ctx) {
    GradCtx *g = ctx;
    Layer *l = g->l;
    layer_forward(l, g->act, g->p, 99);
    double sum = 0;
    for (size_t i = 0; i < (size_t)l->B * l->T * l->C; i++)
        sum += (double)l->out[i] * g->w[i];
    return sum;
}

static void show_gradcheck(Activation act, uint64_t seed) {
    enum { B = 2, T = 3, C = 6, F = 10 };
    const float p = 0.1f;
    Rng rng;
    rng_seed(&rng, seed);
    Layer l;
    layer_init(&l, B, T, C, F, &rng);
    float *w = randn(&rng, B * T * C, 1.0f);
    GradCtx g = {&l, w, act, p};
    float *grads = alloc_floats(B * T * C + 2 * F * C + F + C);
    float *dx = grads, *dwf = dx + B * T * C, *dbf = dwf + F * C;
    float *dwp = dbf + F, *dbp = dwp + C * F;
    float *dy = alloc_floats(B * T * C);
    FfnScratch s;
    Error err;
    if (ffn_scratch_alloc(&s, B, T, C, F, &err) != 0) die("%s", err.msg);
    loss_of(&g);                                    // the forward pass
    dropout_backward(dy, w, l.mask, B * T * C);     // dL/dout = w
    ffn_backward(dx, dwf, dbf, dwp, dbp, &s, dy, &l.cache, l.x, l.w_fc,
                 l.w_proj, B, T, C, F);
    const double eps = 5e-3;
    printf("gradcheck   B=%d T=%d C=%d F=%d, %s GELU, dropout p=%g: backward "
           "vs central\n            differences, max |error| / max "
           "|gradient| of each tensor:\n", B, T, C, F, activation_name(act),
           (double)p);
    printf("            inp %.1e  c_fc.weight %.1e  c_fc.bias %.1e\n",
           grad_rel_error(loss_of, &g, l.x, dx, B * T * C, eps),
           grad_rel_error(loss_of, &g, l.w_fc, dwf, F * C, eps),
           grad_rel_error(loss_of, &g, l.b_fc, dbf, F, eps));
    printf("            c_proj.weight %.1e  c_proj.bias %.1e\n",
           grad_rel_error(loss_of, &g, l.w_proj, dwp, C * F, eps),
           grad_rel_error(loss_of, &g, l.b_proj, dbp, C, eps));
    ffn_scratch_free(&s);
    free(dy);
    free(grads);
    free(w);
    layer_free(&l);
}

// --- 5. the cost: the FFN against attention ---------------------------------

// Both layers of a block at one T, forward and backward.
typedef struct {
    int B, T, C, NH, F;
    float *x, *out, *dout, *dx;
    float *wa, *wp, *dwa, *dwp;           // attention: c_attn, c_proj
    float *wf, *wo, *dwf, *dwo;           // FFN: c_fc, c_proj
    MhaCache mc;
    MhaScratch ms;
    FfnCache fc;
    FfnScratch fs;
} Bench;

static void bench_init(Bench *b, int B, int T, int C, int NH, int F,
                       Rng *rng) {
    *b = (Bench){.B = B, .T = T, .C = C, .NH = NH, .F = F};
    size_t btc = (size_t)B * T * C, cc = (size_t)C * C, fc = (size_t)F * C;
    b->x = randn(rng, btc, 1.0f);
    b->dout = randn(rng, btc, 1.0f);
    b->out = alloc_floats(btc);
    b->dx = alloc_floats(btc);
    b->wa = randn(rng, 3 * cc, 1.0f / sqrtf((float)C));
    b->wp = randn(rng, cc, 1.0f / sqrtf((float)C));
    b->wf = randn(rng, fc, 1.0f / sqrtf((float)C));
    b->wo = randn(rng, fc, 1.0f / sqrtf((float)F));
    b->dwa = alloc_floats(3 * cc);
    b->dwp = alloc_floats(cc);
    b->dwf = alloc_floats(fc);
    b->dwo = alloc_floats(fc);
    Error err;
    if (mha_cache_alloc(&b->mc, B, T, C, NH, &err) != 0
        || mha_scratch_alloc(&b->ms, B, T, C, NH, &err) != 0
        || ffn_cache_alloc(&b->fc, B, T, C, F, &err) != 0
        || ffn_scratch_alloc(&b->fs, B, T, C, F, &err) != 0)
        die("%s", err.msg);
}

// The floats bench_init allocates.
static size_t bench_floats(int B, int T, int C, int NH, int F) {
    size_t btc = (size_t)B * T * C, cc = (size_t)C * C, fc = (size_t)F * C;
    return 4 * btc + 8 * cc + 4 * fc + mha_cache_floats(B, T, C, NH)
           + mha_scratch_floats(B, T, C, NH) + ffn_cache_floats(B, T, C, F)
           + ffn_scratch_floats(B, T, C, F);
}

static void bench_free(Bench *b) {
    float *bufs[] = {b->x, b->out, b->dout, b->dx, b->wa, b->wp, b->dwa,
                     b->dwp, b->wf, b->wo, b->dwf, b->dwo};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]);
    mha_cache_free(&b->mc);
    mha_scratch_free(&b->ms);
    ffn_cache_free(&b->fc);
    ffn_scratch_free(&b->fs);
}

static void run_attention(void *p) {
    Bench *b = p;
    if (mha_forward(b->out, &b->mc, b->x, b->wa, NULL, b->wp, NULL, NULL,
                    true, b->B, b->T, b->C, b->NH, NULL) != 0)
        die("attention forward failed");
    mha_backward(b->dx, b->dwa, NULL, b->dwp, NULL, &b->ms, b->dout, &b->mc,
                 b->x, b->wa, b->wp, b->B, b->T, b->C, b->NH);
}

static void run_ffn(void *p) {
    Bench *b = p;
    if (ffn_forward(b->out, &b->fc, b->x, b->wf, NULL, b->wo, NULL,
                    GELU_EXACT, b->B, b->T, b->C, b->F, NULL) != 0)
        die("FFN forward failed");
    ffn_backward(b->dx, b->dwf, NULL, b->dwo, NULL, &b->fs, b->dout, &b->fc,
                 b->x, b->wf, b->wo, b->B, b->T, b->C, b->F);
}

// GELU alone, forward and backward, on the FFN's buffers.
static void run_gelu(void *p) {
    Bench *b = p;
    size_t n = (size_t)b->B * b->T * b->F;
    gelu_forward(b->fc.a, b->fc.h, GELU_EXACT, n);
    gelu_backward(b->fs.dh, b->fs.da, b->fc.h, GELU_EXACT, n);
}

// The timings' sizes: B sequences of T tokens, C channels, NH heads, F
// hidden units.
enum { TIME_B = 4, TIME_C = 128, TIME_NH = 4, TIME_F = 4 * TIME_C };

static void show_timing(int max_T, uint64_t seed) {
    enum { B = TIME_B, C = TIME_C, NH = TIME_NH, F = TIME_F };
    // one thread: a ratio then measures the work, not how well a small
    // problem spreads over the cores (see common/threads.h)
    ThreadCounts prev = threads_set(1);
    printf("timing      forward + backward on one thread, B=%d C=%d NH=%d "
           "F=%d, best of\n            repeats; x = time / time at half the "
           "T; GELU = its share of the\n            FFN's time; FLOPs = the "
           "FFN's / attention's\n", B, C, NH, F);
    printf("            %5s %9s %5s %8s %5s %5s %9s %6s\n", "T",
           "att. ms", "x", "FFN ms", "x", "GELU", "FFN/att.", "FLOPs");
    double prev_att = 0, prev_ffn = 0;
    for (int T = 64; T <= max_T; T *= 2) {
        Rng rng;
        rng_seed(&rng, seed);
        Bench b;
        bench_init(&b, B, T, C, NH, F, &rng);
        // the best of 3 to 200 runs over about 0.1 s (common/timer.h)
        double att = time_best_ms(run_attention, &b, 3, 200, 0.1);
        double ffn = time_best_ms(run_ffn, &b, 3, 200, 0.1);
        double gelu = time_best_ms(run_gelu, &b, 3, 200, 0.1);
        printf("            %5d %9.3f", T, att);
        if (prev_att > 0) printf(" %4.1fx", att / prev_att);
        else printf(" %5s", "");
        printf(" %8.3f", ffn);
        if (prev_ffn > 0) printf(" %4.1fx", ffn / prev_ffn);
        else printf(" %5s", "");
        // FLOPs: FFN 48 B T C^2 (at F = 4C); attention 24 B T C^2 for the
        // projections plus 12 B T^2 C for the scores and weighted sums
        printf(" %4.0f%% %9.2f %6.2f\n", 100 * gelu / ffn, ffn / att,
               4.0 * C / (2.0 * C + T));
        prev_att = att;
        prev_ffn = ffn;
        bench_free(&b);
    }
    threads_restore(prev);
}

// Attention and the FFN, forward and backward as in show_timing, at 16
// evenly spaced T up to max_T, the median CPU time of 5 runs each
// (common/timer.h), with the FLOP ratio 4C / (2C + T), for the book's
// figure: timings measured on the machine that runs it, not the same twice.
static void write_timing_csv(int max_T, uint64_t seed, const char *dir) {
    enum { B = TIME_B, C = TIME_C, NH = TIME_NH, F = TIME_F, POINTS = 16,
           REPS = 5 };
    ThreadCounts prev = threads_set(1);      // as show_timing
    Error err;
    FILE *f = plot_csv_open(dir, "timing.csv", "T,attention_ms,ffn_ms,"
                            "flops_ratio", &err);
    if (!f) die("%s", err.msg);
    for (int i = 1; i <= POINTS; i++) {
        int T = (int)((long)i * max_T / POINTS);
        Rng rng;
        rng_seed(&rng, seed);
        Bench b;
        bench_init(&b, B, T, C, NH, F, &rng);
        double att = time_median_ms(run_attention, &b, REPS);
        double ffn = time_median_ms(run_ffn, &b, REPS);
        fprintf(f, "%d,%.4f,%.4f,%.6f\n", T, att, ffn,
                4.0 * C / (2.0 * C + T));
        bench_free(&b);
    }
    if (plot_csv_close(f, dir, "timing.csv", &err) != 0) die("%s", err.msg);
    threads_restore(prev);
    printf("plot data   %s/timing.csv\n", dir);
}

// The memory of the whole run (mem.h), before any of it is allocated:
// one at a time, the example's layer (B = 2) and the timing's largest
// pair of layers. Refused with one line (exit 2).
static void check_memory(int T, int C, int F, int max_T, bool plot) {
    MemPlan p;
    mem_plan_begin(&p);
    mem_plan_phase(&p, layer_floats(2, T, C, F));
    int top = 64;                // show_timing's largest T
    while (top * 2 <= max_T) top *= 2;
    mem_plan_phase(&p, bench_floats(TIME_B, plot ? max_T : top, TIME_C,
                                    TIME_NH, TIME_F));
    Error err;
    if (mem_plan_check(&p, "lower --channels --ff --max-T", &err) != 0)
        error_exit(2, err.msg);
}

int main(int argc, char **argv) {
    error_set_progname(argv[0]);   // for an error before flags_parse
    int T = 3, C = 8, F, max_T = 512;
    const char *gelu_name = "exact", *plot_dir = "";
    float p = 0.0f;
    uint64_t seed = 1337;
    // --ff defaults to 4C: read --channels first, so that --help shows the
    // width that will really apply (a bad value is reported after parsing)
    const char *peek = flags_peek(argc, argv, "channels");
    if (peek) {
        char *end;
        long c = strtol(peek, &end, 10);
        if (*peek && !*end && c >= 1 && c <= 1024) C = (int)c;
    }
    F = 4 * C;
    Flag flags[] = {
        {"T", FLAG_INT, &T, "tokens per sequence of the example (B is 2)"},
        {"channels", FLAG_INT, &C, "channels of the example (C)"},
        {"ff", FLAG_INT, &F, "hidden width of the example (F; 4C unless "
         "given)"},
        {"gelu", FLAG_STRING, &gelu_name, "exact (erf, PyTorch's default) "
         "or tanh (GPT-2's approximation)"},
        {"dropout", FLAG_FLOAT, &p, "dropout probability of the example"},
        {"max-T", FLAG_INT, &max_T, "largest T of the timings (64, 128, "
         "...)"},
        {"seed", FLAG_U64, &seed, "random seed of inputs and weights"},
        {"plot-data", FLAG_STRING, &plot_dir, "also write ReLU, both GELUs "
         "and their derivatives on [-4, 4], and the times of the FFN and "
         "attention against T, as CSV files into this folder"},
    };
    const FlagRange ranges[] = {
        {"T", .lo = 1, .hi = 64}, {"channels", .lo = 1, .hi = 1024},
        {"ff", .lo = 1, .hi = 16384}, {"dropout", .lo = 0, .hi = 0.99},
        {"max-T", .lo = 64, .hi = 2048},
    };
    int n_flags = sizeof flags / sizeof flags[0];
    int n_ranges = sizeof ranges / sizeof ranges[0];
    flags_parse(argc, argv, flags, n_flags, ranges, n_ranges,
                "Chapter 3: runs the feed-forward network on a small "
                "example, counts its\nparameters against attention's, "
                "tabulates GELU against ReLU, checks the\nbackward pass "
                "against finite differences and times the FFN against "
                "attention.");
    Activation act = GELU_EXACT;
    if (strcmp(gelu_name, "tanh") == 0) act = GELU_TANH;
    else if (strcmp(gelu_name, "exact") != 0)
        flags_fail("--gelu must be exact or tanh, got '%s'", gelu_name);
    flags_check_ranges(flags, n_flags, ranges, n_ranges);
    Error err;
    // a folder that cannot take the CSV file fails before any work
    if (flags_given(&plot_dir) && plot_dir_check(plot_dir, &err) != 0)
        die("%s", err.msg);

    check_memory(T, C, F, max_T, *plot_dir != 0);
    double t0 = time_now();
    printf("== Chapter 3: the feed-forward network ==\n");
    show_example(T, C, F, act, p, seed);
    show_params();
    show_activations();
    if (*plot_dir) write_activations_csv(plot_dir);
    show_gradcheck(act, seed);
    show_timing(max_T, seed);
    if (*plot_dir) write_timing_csv(max_T, seed, plot_dir);
    printf("time        %.2f s (%s GEMM)\n", time_now() - t0,
           gemm_backend());
    return 0;
}
