// ch4 - the Transformer block: one Pre-LN block's forward pass with every
// intermediate tensor, then the experiment that motivates Pre-LN: how much
// gradient reaches the bottom of a deep stack of Pre-LN and of Post-LN
// blocks at initialisation.
//
//   ./ch4                        the defaults, a second or two
//   ./ch4 --channels 128 --depths 2,12,48 --seed 7
//   ./ch4 --plot-data DIR        also the deepest stack's gradients, block
//                                by block, as CSV
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block.h"
#include "error.h"
#include "flags.h"
#include "gemm.h"
#include "layernorm.h"
#include "mem.h"
#include "plotdata.h"
#include "rng.h"
#include "threads.h"
#include "timer.h"

#define MAX_DEPTHS 8

// The initialisation of one block. GPT-2's: every matrix N(0, 0.02^2),
// except the two projections into the residual stream (attn.c_proj,
// mlp.c_proj), N(0, (0.02 / sqrt(2 L))^2) for a stack of L blocks. The
// 2017 Transformer's scale (Xavier-like): every matrix N(0, 1/fan_in), so
// a sub-layer's output is as large as its input. Both: biases 0, LayerNorm
// weights 1 and biases 0.
typedef enum { INIT_GPT2, INIT_FAN_IN } Init;

static void block_init(const BlockWeights *w, int C, int F, int L,
                       Init init, Rng *rng) {
    BlockTensor t[BLOCK_MAX_TENSORS];
    int n = block_tensors(t, w, C, F);
    for (int i = 0; i < n; i++) {
        size_t len = (size_t)t[i].shape[0]
                     * (t[i].ndim == 2 ? t[i].shape[1] : 1);
        bool ln_weight = strncmp(t[i].name, "ln_", 3) == 0
                         && strstr(t[i].name, "weight") != NULL;
        if (t[i].ndim == 1) {
            for (size_t j = 0; j < len; j++) t[i].data[j] = ln_weight;
            continue;
        }
        float std = 1.0f / sqrtf((float)t[i].shape[1]);
        if (init == INIT_GPT2)
            std = strstr(t[i].name, "c_proj.weight") ? 0.02f / sqrtf(2.0f * L)
                                                     : 0.02f;
        rng_normal_fill(rng, t[i].data, len, 0.0f, std);
    }
}

// A label, a shape, what the tensor holds, and its first values.
static void show_tensor(const char *name, const char *shape,
                        const char *what, const float *v) {
    printf("            %-9s %-9s %-26s", name, shape, what);
    for (int i = 0; i < 3; i++) printf(" %6.3f", v[i]);
    printf("\n");
}

// --- 1. one block, every intermediate --------------------------------------

static void show_block(uint64_t seed) {
    enum { B = 2, T = 4, C = 8, NH = 2, F = 32 };
    Rng rng;
    rng_seed(&rng, seed);
    float *params = alloc_floats(block_param_count(C, F, true));
    BlockWeights w;
    block_weights_point(&w, params, C, F, true);
    block_init(&w, C, F, 1, INIT_GPT2, &rng);
    float *x = alloc_floats(B * T * C), *out = alloc_floats(B * T * C);
    rng_normal_fill(&rng, x, B * T * C, 0.0f, 1.0f);
    BlockCache c;
    Error err;
    if (block_cache_alloc(&c, B, T, C, NH, F, &err) != 0
        || block_forward(out, &c, x, &w, NULL, true, GELU_EXACT, 0.0f, NULL,
                         B, T, C, NH, F, &err))
        die("%s", err.msg);
    printf("block       one Pre-LN block, B=%d T=%d C=%d NH=%d F=%d, GPT-2 "
           "init (seed %llu),\n            %zu parameters; the first values "
           "of token [0,0]\n"
           "            (for att: head 0, token 3's weights on tokens "
           "0..2):\n", B, T, C, NH, F,
           (unsigned long long)seed, block_param_count(C, F, true));
    show_tensor("inp", "(2,4,8)", "residual stream, N(0,1)", x);
    show_tensor("ln_1", "(2,4,8)", "LN(inp): mean 0, var 1", c.sa.norm);
    show_tensor("ln_1 rstd", "(2,4)", "1/sqrt(var+eps) per token",
                c.sa.rstd);
    show_tensor("c_attn", "(2,4,24)", "[q k v] = ln_1 c_attn_w^T",
                c.attn.qkv);
    show_tensor("att[3,:]", "(2,2,4,4)", "softmax(q k^T / sqrt(HS))",
                c.attn.att + 3 * T);
    show_tensor("heads", "(2,4,8)", "att v, heads side by side", c.attn.y);
    show_tensor("res1", "(2,4,8)", "inp + c_proj(heads)", c.res1);
    show_tensor("ln_2", "(2,4,8)", "LayerNorm(res1)", c.ff.norm);
    show_tensor("c_fc", "(2,4,32)", "h = ln_2 c_fc_w^T + c_fc_b",
                c.mlp.h);
    show_tensor("gelu", "(2,4,32)", "GELU(h)", c.mlp.a);
    show_tensor("out", "(2,4,8)", "res1 + c_proj(GELU(h))", out);
    double dmax = 0;
    for (int i = 0; i < B * T * C; i++) dmax = fmax(dmax, fabs(out[i] - x[i]));
    printf("            out - inp: at most %.4f; with weights of 0.02 a "
           "block only nudges\n            the stream\n", dmax);
    block_cache_free(&c);
    free(params), free(x), free(out);
}

// --- 2. Pre-LN against Post-LN in deep stacks ------------------------------

// L blocks with their parameters and gradients in one buffer each (as
// chapter 5 will keep them), a cache per block, one scratch, and the
// residual stream at every depth: acts[l] is block l's input.
typedef struct {
    int L, B, T, C, NH, F;
    bool post;
    size_t per;                  // parameters per block
    float *params, *grads;
    BlockWeights *w, *g;
    BlockCache *cache;
    BlockScratch scratch;
    float *acts;                 // (L+1, B, T, C)
    float *d[2];                 // (B, T, C) gradient, ping-pong
    float *lnf, lnf_mean[1024], lnf_rstd[1024], *lnf_w, *lnf_g;
} Stack;

static void stack_init(Stack *s, int L, bool post, Init init, int B,
                       int T, int C, int NH, uint64_t seed) {
    int F = 4 * C;
    *s = (Stack){.L = L, .B = B, .T = T, .C = C, .NH = NH, .F = F,
                 .post = post, .per = block_param_count(C, F, true)};
    s->params = alloc_floats(L * s->per);
    s->grads = alloc_floats(L * s->per);
    s->w = xcalloc(L, sizeof *s->w);
    s->g = xcalloc(L, sizeof *s->g);
    s->cache = xcalloc(L, sizeof *s->cache);
    Rng rng;
    rng_seed(&rng, seed);        // the same weights for Pre- and Post-LN
    Error err;
    for (int l = 0; l < L; l++) {
        block_weights_point(&s->w[l], s->params + l * s->per, C, F, true);
        block_weights_point(&s->g[l], s->grads + l * s->per, C, F, true);
        block_init(&s->w[l], C, F, L, init, &rng);
        if (block_cache_alloc(&s->cache[l], B, T, C, NH, F, &err) != 0)
            die("%s", err.msg);
    }
    if (block_scratch_alloc(&s->scratch, B, T, C, NH, F, &err) != 0)
        die("%s", err.msg);
    size_t btc = (size_t)B * T * C;
    s->acts = alloc_floats((L + 1) * btc);
    s->d[0] = alloc_floats(btc);
    s->d[1] = alloc_floats(btc);
    s->lnf = alloc_floats(btc);
    s->lnf_w = alloc_floats(C);
    s->lnf_g = alloc_floats(C);
    for (int i = 0; i < C; i++) s->lnf_w[i] = 1.0f;
}

// The floats' worth stack_init allocates.
static size_t stack_floats(int L, int B, int T, int C, int NH) {
    Stack s;
    int F = 4 * C;
    size_t btc = (size_t)B * T * C, n = L;
    return 2 * n * block_param_count(C, F, true)
           + mem_floats(n * (2 * sizeof *s.w + sizeof *s.cache))
           + n * block_cache_floats(B, T, C, NH, F, false)
           + block_scratch_floats(B, T, C, NH, F) + (n + 4) * btc + 2 * C;
}

static void stack_free(Stack *s) {
    for (int l = 0; l < s->L; l++) block_cache_free(&s->cache[l]);
    block_scratch_free(&s->scratch);
    free(s->params), free(s->grads), free(s->w), free(s->g);
    free(s->cache), free(s->acts), free(s->d[0]), free(s->d[1]);
    free(s->lnf), free(s->lnf_w), free(s->lnf_g);
}

static double norm2(const float *v, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)v[i] * v[i];
    return sqrt(s);
}

// Forward and backward of L = mean over tokens of sum(y * r), with y the
// last block's output (Post-LN) or its final LayerNorm ln_f (Pre-LN, as
// GPT-2 has). Leaves dL/dinp in s->d[result] and returns result. With
// stream not NULL, stream[l] = |dL/d acts[l]|, the norm of the gradient
// of block l's input (stream[0] that of x).
static int stack_grad(Stack *s, const float *x, const float *r,
                      double *stream) {
    int B = s->B, T = s->T, C = s->C, NH = s->NH, F = s->F, L = s->L;
    size_t btc = (size_t)B * T * C;
    Error err;
    memcpy(s->acts, x, btc * sizeof *x);
    for (int l = 0; l < L; l++) {
        float *in = s->acts + l * btc, *out = in + btc;
        int rc = s->post
            ? block_postln_forward(out, &s->cache[l], in, &s->w[l], NULL,
                                   true, GELU_EXACT, 0.0f, NULL, B, T, C,
                                   NH, F, &err)
            : block_forward(out, &s->cache[l], in, &s->w[l], NULL, true,
                            GELU_EXACT, 0.0f, NULL, B, T, C, NH, F, &err);
        if (rc != 0) die("%s", err.msg);
    }
    memset(s->grads, 0, L * s->per * sizeof *s->grads);
    float *top = s->acts + L * btc, *dy = s->d[0];
    for (size_t i = 0; i < btc; i++) dy[i] = r[i] / (B * T);
    if (!s->post) {              // y = ln_f(top)
        layernorm_forward(s->lnf, s->lnf_mean, s->lnf_rstd, top, s->lnf_w,
                          NULL, B, T, C);
        memset(s->d[1], 0, btc * sizeof *dy);
        layernorm_backward(s->d[1], s->lnf_g, NULL, dy, top, s->lnf_w,
                           s->lnf_mean, s->lnf_rstd, B, T, C);
        memcpy(dy, s->d[1], btc * sizeof *dy);
    }
    int cur = 0;
    for (int l = L - 1; l >= 0; l--) {
        float *dinp = s->d[1 - cur];
        memset(dinp, 0, btc * sizeof *dinp);
        (s->post ? block_postln_backward : block_backward)(
            dinp, &s->g[l], &s->scratch, s->d[cur], &s->cache[l],
            s->acts + l * btc, &s->w[l], B, T, C, NH, F);
        if (stream) stream[l] = norm2(dinp, btc);
        cur = 1 - cur;
    }
    return cur;
}

// One row per block of the stack s for the book's figure: its
// parameters' gradient norm and that of its input (stream, of stack_grad).
static void write_depth_rows(FILE *f, const Stack *s, Init init,
                             const double *stream) {
    for (int l = 0; l < s->L; l++)
        fprintf(f, "%s,%s,%d,%.6f,%.6f\n",
                init == INIT_GPT2 ? "gpt2" : "2017",
                s->post ? "post" : "pre", l + 1,
                norm2(s->grads + l * s->per, s->per), stream[l]);
}

// The table of one initialisation; with plot not NULL, also the rows of
// write_depth_rows for the first stack of plot_L blocks.
// The depth experiment's batch: B sequences of T tokens.
enum { DEPTH_B = 4, DEPTH_T = 16 };

static void show_depths(const int *depths, int n_depths, int C, int NH,
                        Init init, uint64_t seed, FILE *plot, int plot_L) {
    enum { B = DEPTH_B, T = DEPTH_T };
    size_t btc = (size_t)B * T * C;
    Rng rng;
    rng_seed(&rng, seed + 1);
    float *x = alloc_floats(btc), *r = alloc_floats(btc);
    rng_normal_fill(&rng, x, btc, 0.0f, 1.0f);
    rng_normal_fill(&rng, r, btc, 0.0f, 1.0f);
    printf("            %s:\n", init == INIT_GPT2
           ? "GPT-2 init (matrices 0.02, c_proj 0.02/sqrt(2L))"
           : "2017 init (matrices 1/sqrt(fan_in), no depth scaling)");
    printf("                    |dL/dx|      |dL/d block 1|    |dL/d "
           "block L|   block L:\n");
    printf("                L  Pre-LN Post-LN   Pre-LN Post-LN   Pre-LN "
           "Post-LN   Post/Pre\n");
    double *stream = plot ? xcalloc(plot_L, sizeof *stream) : NULL;
    for (int k = 0; k < n_depths; k++) {
        double dx[2], first[2], last[2];
        bool rows = plot && depths[k] == plot_L;
        for (int post = 0; post < 2; post++) {
            Stack s;
            stack_init(&s, depths[k], post, init, B, T, C, NH, seed + 2);
            int res = stack_grad(&s, x, r, rows ? stream : NULL);
            dx[post] = norm2(s.d[res], btc);
            first[post] = norm2(s.grads, s.per);
            last[post] = norm2(s.grads + (s.L - 1) * s.per, s.per);
            if (rows) write_depth_rows(plot, &s, init, stream);
            stack_free(&s);
        }
        if (rows) plot = NULL;       // a depth given twice: one set of rows
        printf("            %5d %7.3f %7.3f  %7.3f %7.3f  %7.3f %7.3f  %9.2f\n",
               depths[k], dx[0], dx[1], first[0], first[1], last[0],
               last[1], last[1] / last[0]);
    }
    free(x), free(r), free(stream);
}

// "2,6,12,24" -> {2, 6, 12, 24}; each in 1..256.
static int parse_depths(const char *text, int *out) {
    int n = 0;
    const char *p = text;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > 256 || n == MAX_DEPTHS)
            flags_fail("--depths takes up to %d numbers in [1, 256] with "
                       "commas, got '%s'", MAX_DEPTHS, text);
        out[n++] = (int)v;
        p = end;
        if (*p == ',') p++;
        else if (*p) flags_fail("--depths: unexpected '%c' in %s", *p, text);
    }
    if (n == 0) flags_fail("--depths is empty");
    return n;
}

int main(int argc, char **argv) {
    int C = 64, NH = 4;
    const char *depths_text = "2,6,12,24", *plot_dir = "";
    uint64_t seed = 1337;
    Flag flags[] = {
        {"channels", FLAG_INT, &C, "channels of the depth experiment (C)"},
        {"heads", FLAG_INT, &NH, "attention heads of the depth experiment"},
        {"depths", FLAG_STRING, &depths_text, "stack depths to compare, "
         "comma-separated: up to 8, each in [1, 256]"},
        {"seed", FLAG_U64, &seed, "random seed of inputs and weights"},
        {"plot-data", FLAG_STRING, &plot_dir, "also write the gradient norms "
         "of each block of the deepest stack, and of its input, as a CSV "
         "file into this folder"},
    };
    const FlagRange ranges[] = {
        {"channels", .lo = 1, .hi = 1024}, {"heads", .lo = 1, .hi = 1024},
    };
    int n_flags = sizeof flags / sizeof flags[0];
    int n_ranges = sizeof ranges / sizeof ranges[0];
    flags_parse(argc, argv, flags, n_flags, ranges, n_ranges,
                "Chapter 4: runs one Pre-LN Transformer block on a small "
                "example, showing\nevery intermediate tensor, then compares "
                "the gradients that reach the\nbottom of deep Pre-LN and "
                "Post-LN stacks at initialisation.");
    flags_check_ranges(flags, n_flags, ranges, n_ranges);
    if (C % NH != 0)
        flags_fail("--heads must divide --channels (%d), got %d", C, NH);
    int depths[MAX_DEPTHS];
    int n_depths = parse_depths(depths_text, depths);
    // The work grows as layers x C^2 (four stacks per depth): refuse what
    // would run for minutes rather than seem to hang.
    long layers = 0;
    for (int k = 0; k < n_depths; k++) layers += depths[k];
    const long budget = 1L << 22;   // the defaults use 180,224
    if (layers * C * C > budget)
        flags_fail("--depths: %ld layers, too long: layers x channels^2 > "
                   "%ld", layers, budget);
    Error err;
    // a folder that cannot take the CSV file fails before any work
    if (flags_given(&plot_dir) && plot_dir_check(plot_dir, &err) != 0)
        die("%s", err.msg);
    int plot_L = 0;                          // the deepest stack
    for (int k = 0; k < n_depths; k++)
        if (depths[k] > plot_L) plot_L = depths[k];
    // The memory (mem.h), before any of it is allocated: the deepest
    // stack, its input and the loss's weights. Refused with one line.
    MemPlan mp;
    mem_plan_begin(&mp);
    mem_plan_phase(&mp, stack_floats(plot_L, DEPTH_B, DEPTH_T, C, NH)
                        + 2 * (size_t)DEPTH_B * DEPTH_T * C
                        + mem_floats((size_t)plot_L * sizeof(double)));
    if (mem_plan_check(&mp, "lower --channels --depths", &err) != 0)
        error_exit(2, err.msg);
    FILE *plot = NULL;
    if (*plot_dir) {
        plot = plot_csv_open(plot_dir, "depth.csv", "init,norm,block,"
                             "param_grad,input_grad", &err);
        if (!plot) die("%s", err.msg);
    }

    double t0 = time_now();
    ThreadCounts prev = threads_set(1);    // tiny matrices: one thread
    printf("== Chapter 4: the Transformer block ==\n");
    show_block(seed);
    printf("depth       gradient norms at initialisation, B=4 T=16 C=%d "
           "NH=%d F=4C,\n            x ~ N(0,1), loss = mean over tokens of "
           "sum(y * r), r ~ N(0,1) fixed,\n            y = ln_f(stack(x)) "
           "for Pre-LN (as GPT-2), y = stack(x) for Post-LN\n", C, NH);
    show_depths(depths, n_depths, C, NH, INIT_GPT2, seed, plot, plot_L);
    show_depths(depths, n_depths, C, NH, INIT_FAN_IN, seed, plot, plot_L);
    threads_restore(prev);
    if (plot) {
        if (plot_csv_close(plot, plot_dir, "depth.csv", &err) != 0)
            die("%s", err.msg);
        printf("plot data   %s/depth.csv\n", plot_dir);
    }
    printf("time        %.2f s (%s GEMM)\n", time_now() - t0,
           gemm_backend());
    return 0;
}
