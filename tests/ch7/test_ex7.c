// Tests of the chapter 7 exercises. Expected values come from hand
// computation, the definitions evaluated in double inside the test (and
// finite differences of them), the PyTorch fixtures (ch7_ex.txt of
// tests/reference/gen_ch7_ex.py, ch7_loss.txt, ch7_decoder.txt) and
// chapter 7's own code (print_attention_masks, xattn_forward,
// smoothed_xent_*, decoder_forward and decoder_backward, greedy_decode,
// beam_decode, bleu_corpus and bleu_compute, bpe_learn), and sacreBLEU
// 2.6.0's numbers (tests/reference/ch7_bleu.json of gen_bleu.py, and
// the course's vectors when `make data` found them), never from the
// reference solutions.
//
// The wrong versions each exercise's tests are meant to catch (each was
// tried as a change of the reference solution, graded with `make check
// EXERCISES=<that copy>`, and scored below full marks):
//   7.1  a mask on the query's id instead of the key's; j < i instead of
//        j <= i; no causal part; a causal cross mask; the padding left out
//        of either mask; the mask transposed (i <= j); the pad treated as
//        an end of sentence (the keys after the first pad all masked).
//   7.2  keys and values taken from the wrong halves of kv_proj; a scale
//        of 1/sqrt(C) instead of 1/sqrt(HS); the source mask ignored; the
//        heads cut from interleaved channels; a source of padding only
//        giving NaN (masked scores set to -inf, then a softmax) or a
//        softmax over its pads; the kv or the output bias dropped.
//   7.3  eps/(V-1) on the other classes; no smoothing mass on the pad
//        class (the Annotated Transformer's target); the sum instead of
//        the mean; the mean over every row; pad rows' gradient not zeroed,
//        or given softmax - q; dlogits accumulated; no maximum taken out
//        (+-1000 overflows).
//   7.4  memory and the target stream swapped in the cross-attention; the
//        target mask, or a causal mask, in the cross-attention; a residual
//        forgotten (any of the three); the LayerNorms in the wrong places
//        (no ln_2, ln_1's weights for ln_2, ln_2 on the memory too, a
//        Post-LN cross-attention sub-layer).
//   7.5  the wrong token fed back (<bos> every time, or row 0's token for
//        every row); <eos> not stopping the sentence; <eos> appended to
//        the output (counted in len, or only written past it); the limit
//        off by one or taken from S instead of the real source length;
//        the argmax taking the last of equal maxima.
//   7.6  |y| without the <eos>; the stop bound at the current length
//        instead of the limit; the search stopped at the first finished
//        hypothesis; the state not reordered; the histories not carried
//        to the new beams; a hypothesis cut at the limit marked as ended
//        by <eos>; ties ranked by the higher row; an equal score
//        replacing the best.
//   7.7  unclipped counts (every hypothesis n-gram found in the reference
//        counted); each occurrence of a repeated n-gram clipped again;
//        the hypothesis's count, or the reference's, instead of the
//        smaller; totals of len - n, or the last n-gram of a sentence
//        missed; BP applied as exp(1 - c/r) when c > r too; BP with r/c
//        swapped (exp(1 - c/r) when c < r); BP 1 for an empty corpus; the
//        arithmetic mean of the precisions; no smoothing (a 0 precision
//        kept); 1/(k+1) instead of 1/2^k; an order without n-grams not
//        ending the loop (100 / 0); no early 0 when nothing matches.
//   7.8  an overlapping merge (5 5 5 -> two merges, or i += 1 after a
//        merge); the word frequencies ignored, or only one word's counted;
//        ties to the largest pair, or ordered by b before a; pairs
//        counted across word boundaries; only the first occurrence in a
//        word merged; overlapping pairs counted once (5 5 5 holding
//        (5, 5) once); the length of a merged word not updated.
// Not caught, knowingly: a log-sum-exp kept in float (7.3, 7.6), which is
// within the tolerances; and in 7.6 an <eos> taken from ranks k .. 2k-1,
// or candidates walked past the first 2k, neither of which can change
// the answer (an earlier <eos> of the same length scores at least as
// well, and at most k of the 2k are <eos>: one per live beam).
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpe.h"
#include "ch4/ch4_util.h"
#include "bleu.h"
#include "bleu_cases.h"
#include "ch7_exercises.h"
#include "decode.h"
#include "decoder.h"
#include "rng.h"
#include "seq2seq.h"
#include "smoothing.h"
#include "xattn.h"

// ---- 7.1 the masks of a batch -----------------------------------------------

// The definition, for comparison: both masks from the keys' ids.
static void masks_def(int *sm, int *cm, const int *tgt, const int *src,
                      int B, int T, int S, int pad) {
    for (int b = 0; b < B; b++)
        for (int i = 0; i < T; i++) {
            for (int j = 0; j < T; j++)
                sm[(b * T + i) * T + j] = j <= i && tgt[b * T + j] != pad;
            for (int s = 0; s < S; s++)
                cm[(b * T + i) * S + s] = src[b * S + s] != pad;
        }
}

// Runs the exercise on masks prefilled with 7 (every entry must be
// written) and compares both with the definition.
static void masks_case(const char *what, const int *tgt, const int *src,
                       int B, int T, int S, int pad) {
    size_t ns = (size_t)B * T * T, nc = (size_t)B * T * S;
    int *sm = xmalloc(ns * sizeof *sm), *cm = xmalloc(nc * sizeof *cm);
    int *ws = xmalloc(ns * sizeof *ws), *wc = xmalloc(nc * sizeof *wc);
    for (size_t i = 0; i < ns; i++) sm[i] = 7;
    for (size_t i = 0; i < nc; i++) cm[i] = 7;
    ex_attention_masks(sm, cm, tgt, src, B, T, S, pad);
    masks_def(ws, wc, tgt, src, B, T, S, pad);
    for (size_t i = 0; i < ns; i++) {
        int b = (int)(i / ((size_t)T * T)), q = (int)(i / T % T);
        ck_assert_msg(sm[i] == ws[i], "%s: self_mask[%d][%d][%d] = %d, want "
                      "%d (target key id %d, pad %d)", what, b, q,
                      (int)(i % T), sm[i], ws[i], tgt[b * T + i % T], pad);
    }
    for (size_t i = 0; i < nc; i++) {
        int b = (int)(i / ((size_t)T * S)), q = (int)(i / S % T);
        ck_assert_msg(cm[i] == wc[i], "%s: cross_mask[%d][%d][%d] = %d, "
                      "want %d (source key id %d, pad %d)", what, b, q,
                      (int)(i % S), cm[i], wc[i], src[b * S + i % S], pad);
    }
    free(sm), free(cm), free(ws), free(wc);
}

START_TEST(ex7_1_by_hand) {
    // pad 0. Target 0: 3 real then a pad; target 1: a pad in the middle.
    // Source 0: one real token; source 1: no padding.
    enum { B = 2, T = 4, S = 3 };
    const int tgt[B * T] = {5, 3, 7, 0, 4, 0, 6, 0};
    const int src[B * S] = {8, 0, 0, 2, 9, 4};
    const int want_self[B * T * T] = {
        1, 0, 0, 0,  1, 1, 0, 0,  1, 1, 1, 0,  1, 1, 1, 0,   // key 3 pad
        1, 0, 0, 0,  1, 0, 0, 0,  1, 0, 1, 0,  1, 0, 1, 0,   // keys 1, 3
    };
    const int want_cross[B * T * S] = {
        1, 0, 0,  1, 0, 0,  1, 0, 0,  1, 0, 0,
        1, 1, 1,  1, 1, 1,  1, 1, 1,  1, 1, 1,
    };
    int sm[B * T * T], cm[B * T * S];
    for (int i = 0; i < B * T * T; i++) sm[i] = 7;
    for (int i = 0; i < B * T * S; i++) cm[i] = 7;
    ex_attention_masks(sm, cm, tgt, src, B, T, S, 0);
    for (int i = 0; i < B * T * T; i++)
        ck_assert_msg(sm[i] == want_self[i], "self_mask[%d][%d][%d] = %d, "
                      "want %d", i / (T * T), i / T % T, i % T, sm[i],
                      want_self[i]);
    for (int i = 0; i < B * T * S; i++)
        ck_assert_msg(cm[i] == want_cross[i], "cross_mask[%d][%d][%d] = %d, "
                      "want %d", i / (T * S), i / S % T, i % S, cm[i],
                      want_cross[i]);
}
END_TEST

START_TEST(ex7_1_pad_ids_and_shapes) {
    // pad -1, and pad 3 (then 0 is a real token); T > S and T < S; a
    // sentence that is all padding on either side
    enum { B = 3, T = 5, S = 2 };
    const int tgt[B * T] = {1, -1, 2, 0, -1, 3, 3, 3, 3, 3, 0, 4, 3, 0, 1};
    const int src[B * S] = {-1, 5, 3, 3, 0, -1};
    masks_case("pad -1, T 5, S 2", tgt, src, B, T, S, -1);
    masks_case("pad 3, T 5, S 2", tgt, src, B, T, S, 3);
    masks_case("pad 0, T 2, S 5 (the same ids read as (3, 2), (3, 5))", src,
               tgt, B, 2, 5, 0);
    // random ids in [0, 4) with pad 0, one batch of 4 x (6, 7)
    Rng rng;
    rng_seed(&rng, 71);
    int rt[4 * 6], rs[4 * 7];
    for (int i = 0; i < 4 * 6; i++) rt[i] = (int)rng_below(&rng, 4);
    for (int i = 0; i < 4 * 7; i++) rs[i] = (int)rng_below(&rng, 4);
    masks_case("random ids in [0, 4), pad 0", rt, rs, 4, 6, 7, 0);
}
END_TEST

START_TEST(ex7_1_matches_printed_masks) {
    // chapter 7's print_attention_masks draws the same two grids for one
    // sentence pair: '1' where the exercise has 1, '.' where it has 0
    enum { B = 2, T = 5, S = 4 };
    const int tgt[B * T] = {1, 6, 0, 9, 0, 1, 4, 4, 2, 2};
    const int src[B * S] = {7, 7, 0, 0, 0, 3, 0, 5};
    int sm[B * T * T], cm[B * T * S];
    ex_attention_masks(sm, cm, tgt, src, B, T, S, 0);
    for (int b = 0; b < B; b++) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        ck_assert_ptr_nonnull(f);
        print_attention_masks(f, tgt + b * T, T, src + b * S, S, 0);
        fclose(f);
        // the grids without their two title lines
        char want[2 * T * 8] = {0}, got[2 * T * 8] = {0};
        int n = 0;
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
            if (line[0] == '1' || line[0] == '.')
                n += snprintf(want + n, sizeof want - n, "%s/", line);
        n = 0;
        for (int i = 0; i < T; i++) {
            for (int j = 0; j < T; j++)
                got[n++] = sm[(b * T + i) * T + j] ? '1' : '.';
            got[n++] = '/';
        }
        for (int i = 0; i < T; i++) {
            for (int s = 0; s < S; s++)
                got[n++] = cm[(b * T + i) * S + s] ? '1' : '.';
            got[n++] = '/';
        }
        ck_assert_msg(strcmp(got, want) == 0, "sentence %d: the masks read "
                      "%s, print_attention_masks draws %s (rows split by "
                      "'/', the self-attention's %d rows first)", b, got,
                      want, T);
        free(text);
    }
}
END_TEST

TCase *ex7_1_tcase(void) {
    TCase *tc = tcase_new("ex7.1", "ch7 exercises");
    tcase_add_test(tc, ex7_1_by_hand);
    tcase_add_test(tc, ex7_1_pad_ids_and_shapes);
    tcase_add_test(tc, ex7_1_matches_printed_masks);
    return tc;
}

// ---- 7.2 cross-attention ----------------------------------------------------

typedef struct {
    const char *name;
    int B, Tq, Tk, C, NH;
    bool bias;
    const int *src_mask;   // (B, Tk) or NULL
} XaCase;

// The six weights, in xattn_forward's order; the biases NULL without.
typedef struct {
    float *x, *mem, *w[6];
} XaData;

static XaData xa_random(const XaCase *c, uint64_t seed) {
    XaData d;
    size_t C = (size_t)c->C;
    const size_t lens[6] = {C * C, C, 2 * C * C, 2 * C, C * C, C};
    d.x = randn_floats((size_t)c->B * c->Tq * C, 1.0f, seed);
    d.mem = randn_floats((size_t)c->B * c->Tk * C, 1.0f, seed + 1);
    for (int i = 0; i < 6; i++)
        d.w[i] = i % 2 && !c->bias ? NULL
                 : randn_floats(lens[i], i % 2 ? 0.1f : 1.0f / sqrtf(c->C),
                                seed + 2 + i);
    return d;
}

static void xa_free(XaData *d) {
    free(d->x), free(d->mem);
    for (int i = 0; i < 6; i++) free(d->w[i]);
}

// chapter 7's xattn_forward on the same data
static float *xa_reference(const XaCase *c, const XaData *d) {
    float *out = alloc_floats((size_t)c->B * c->Tq * c->C);
    XattnCache cache;
    Error err;
    ck_assert_msg(xattn_cache_alloc(&cache, c->B, c->Tq, c->Tk, c->C, c->NH,
                                    &err) == 0, "%s", err.msg);
    ck_assert_msg(xattn_forward(out, &cache, d->x, d->mem, d->w[0], d->w[1],
                                d->w[2], d->w[3], d->w[4], d->w[5],
                                c->src_mask, c->B, c->Tq, c->Tk, c->C, c->NH,
                                &err) == 0, "%s", err.msg);
    xattn_cache_free(&cache);
    return out;
}

// The exercise's output, written over NaNs
static float *xa_run(const XaCase *c, const XaData *d) {
    size_t n = (size_t)c->B * c->Tq * c->C;
    float *out = alloc_floats(n);
    for (size_t i = 0; i < n; i++) out[i] = NAN;
    ex_cross_attention(out, d->x, d->mem, d->w[0], d->w[1], d->w[2],
                       d->w[3], d->w[4], d->w[5], c->src_mask, c->B, c->Tq,
                       c->Tk, c->C, c->NH);
    return out;
}

static const int SRC_2x5[10] = {1, 1, 1, 0, 0, 1, 1, 1, 1, 1};
static const int SRC_3x4[12] = {1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0};
static const int SRC_2x3_EMPTY[6] = {1, 0, 0, 0, 0, 0};

static const XaCase XA_CASES[] = {
    {"padded, Tq 3 < Tk 5, 2 heads", 2, 3, 5, 8, 2, true, SRC_2x5},
    {"Tq 6 > Tk 2, 3 heads, no bias, no mask", 1, 6, 2, 6, 3, false, NULL},
    {"one head, one query", 2, 1, 5, 5, 1, true, SRC_2x5},
    {"a pad inside the source, 4 heads", 3, 2, 4, 8, 4, true, SRC_3x4},
    {"Tq = Tk = 4, one wide head", 1, 4, 4, 12, 1, true, NULL},
};

START_TEST(ex7_2_matches_xattn_forward) {
    for (size_t k = 0; k < sizeof XA_CASES / sizeof *XA_CASES; k++) {
        const XaCase *c = &XA_CASES[k];
        XaData d = xa_random(c, 720 + 10 * k);
        float *got = xa_run(c, &d), *want = xa_reference(c, &d);
        ck_assert_close_f(c->name, got, want,
                          (size_t)c->B * c->Tq * c->C, 1e-5, 1e-4);
        free(got), free(want);
        xa_free(&d);
    }
}
END_TEST

START_TEST(ex7_2_matches_pytorch) {
    Fixture *f = fixture_open("ch7_ex.txt");
    const XaCase cases[2] = {
        {"xa", 2, 3, 5, 8, 2, true, NULL},
        {"xa_empty", 2, 4, 3, 6, 3, false, NULL},
    };
    const char *names[6] = {"q_proj.weight", "q_proj.bias",
                            "kv_proj.weight", "kv_proj.bias",
                            "out_proj.weight", "out_proj.bias"};
    for (int k = 0; k < 2; k++) {
        XaCase c = cases[k];
        int C = c.C;
        const int sx[3] = {c.B, c.Tq, C}, sm[3] = {c.B, c.Tk, C};
        const int shapes[6][2] = {{C, C}, {C, 0}, {2 * C, C}, {2 * C, 0},
                                  {C, C}, {C, 0}};
        XaData d;
        char key[96];
        snprintf(key, sizeof key, "%s.x", c.name);
        d.x = fx_copy(f, key, sx, 3);
        snprintf(key, sizeof key, "%s.memory", c.name);
        d.mem = fx_copy(f, key, sm, 3);
        snprintf(key, sizeof key, "%s.src_mask", c.name);
        int *mask = fx_mask(f, key, c.B, c.Tk);
        c.src_mask = mask;
        for (int i = 0; i < 6; i++) {
            d.w[i] = NULL;
            if (i % 2 && !c.bias) continue;
            snprintf(key, sizeof key, "%s.%s", c.name, names[i]);
            d.w[i] = fx_copy(f, key, shapes[i], i % 2 ? 1 : 2);
        }
        float *got = xa_run(&c, &d);
        char what[64];
        snprintf(what, sizeof what, "%s: out vs PyTorch", c.name);
        ck_assert_close_f(what, got, fx_get2(f, c.name, "out", sx, 3),
                          (size_t)c.B * c.Tq * C, 1e-5, 1e-4);
        free(got), free(mask);
        xa_free(&d);
    }
    fixture_free(f);
}
END_TEST

START_TEST(ex7_2_source_of_padding_only) {
    // Sentence 1's source is all padding: its rows are out_proj's bias
    // exactly (zero attention output), or exactly 0 without bias; never
    // NaN, and not an average of the padded values.
    for (int bias = 0; bias < 2; bias++) {
        XaCase c = {"empty source", 2, 3, 3, 6, 3, bias, SRC_2x3_EMPTY};
        XaData d = xa_random(&c, 740 + bias);
        float *got = xa_run(&c, &d);
        for (int t = 0; t < c.Tq; t++)
            for (int i = 0; i < c.C; i++) {
                float v = got[(size_t)(c.Tq + t) * c.C + i];
                float want = bias ? d.w[5][i] : 0.0f;
                ck_assert_msg(v == want, "%s: out[1][%d][%d] = %g for a "
                              "source of padding only, want %g (%s)",
                              bias ? "bias" : "no bias", t, i, v, want,
                              bias ? "out_proj_b" : "0");
            }
        float *want = xa_reference(&c, &d);
        ck_assert_close_f("the sentence with one real source token", got,
                          want, (size_t)c.Tq * c.C, 1e-5, 1e-4);
        free(got), free(want);
        xa_free(&d);
    }
}
END_TEST

START_TEST(ex7_2_padded_memory_is_not_read) {
    // The memory at padded source positions changed to huge values: the
    // output must not move.
    const XaCase *c = &XA_CASES[0];
    XaData d = xa_random(c, 750);
    float *before = xa_run(c, &d);
    for (int b = 0; b < c->B; b++)
        for (int s = 0; s < c->Tk; s++)
            if (!c->src_mask[b * c->Tk + s])
                for (int i = 0; i < c->C; i++)
                    d.mem[((size_t)b * c->Tk + s) * c->C + i] = 1e4f * (i - 3);
    float *after = xa_run(c, &d);
    ck_assert_close_f("output after the padded memory changed", after,
                      before, (size_t)c->B * c->Tq * c->C, 0, 0);
    free(before), free(after);
    xa_free(&d);
}
END_TEST

TCase *ex7_2_tcase(void) {
    TCase *tc = tcase_new("ex7.2", "ch7 exercises");
    tcase_add_test(tc, ex7_2_matches_xattn_forward);
    tcase_add_test(tc, ex7_2_matches_pytorch);
    tcase_add_test(tc, ex7_2_source_of_padding_only);
    tcase_add_test(tc, ex7_2_padded_memory_is_not_read);
    return tc;
}

// ---- 7.3 label-smoothed cross-entropy ---------------------------------------

// The definition in double: -sum_j q_j log p_j over the rows whose target
// is not pad, averaged, and (when dl is not NULL) its gradient
// (softmax - q) / n_valid, 0 on pad rows. q_j = eps/V + (1-eps)[j = y].
static double smooth_def(double *dl, const float *logits, const int *targets,
                         int N, int V, int pad, double eps) {
    int valid = 0;
    for (int n = 0; n < N; n++) valid += targets[n] != pad;
    double total = 0;
    for (int n = 0; n < N; n++) {
        const float *z = logits + (size_t)n * V;
        int y = targets[n];
        double mx = z[0], sum = 0;
        for (int v = 1; v < V; v++) mx = fmax(mx, z[v]);
        for (int v = 0; v < V; v++) sum += exp(z[v] - mx);
        double lse = mx + log(sum);
        for (int v = 0; v < V; v++) {
            double q = y == pad ? 0 : eps / V + (v == y) * (1 - eps);
            total += q * (lse - z[v]);
            if (dl)
                dl[(size_t)n * V + v] = y == pad ? 0
                                        : (exp(z[v] - lse) - q) / valid;
        }
    }
    return valid ? total / valid : 0;
}

// The exercise on dlogits prefilled with 7s against the definition
static void smooth_case(const char *what, const float *logits,
                        const int *targets, int N, int V, int pad,
                        float eps) {
    size_t n = (size_t)N * V;
    float *dl = alloc_floats(n);
    double *want = xmalloc(n * sizeof *want);
    for (size_t i = 0; i < n; i++) dl[i] = 7.0f;
    float loss = ex_smoothed_xent(dl, logits, targets, N, V, pad, eps);
    double wl = smooth_def(want, logits, targets, N, V, pad, eps);
    ck_assert_msg(fabs(loss - wl) <= 1e-6 * (1 + fabs(wl)), "%s: loss %.9g, "
                  "want %.9g", what, loss, wl);
    char msg[128];
    snprintf(msg, sizeof msg, "%s: dlogits", what);
    ck_assert_close(msg, dl, want, n, 1e-7, 1e-5);
    free(dl), free(want);
}

START_TEST(ex7_3_by_hand) {
    // 4 equal logits, target 1, eps 0.2: the loss is ln 4 (the smoothing
    // term eps * (z_y - mean z) is 0), q = (0.05, 0.85, 0.05, 0.05), so
    // the gradient is 0.25 - q = (0.2, -0.6, 0.2, 0.2).
    const float z[4] = {0.5f, 0.5f, 0.5f, 0.5f};
    const int y = 1;
    float d[4] = {7, 7, 7, 7};
    float loss = ex_smoothed_xent(d, z, &y, 1, 4, -1, 0.2f);
    ck_assert_msg(fabs(loss - log(4.0)) < 1e-6, "loss of 4 equal logits: "
                  "%.9g, want ln 4", loss);
    const double w[4] = {0.2, -0.6, 0.2, 0.2};
    ck_assert_close("dlogits of 4 equal logits, eps 0.2", d, w, 4, 1e-7, 0);
    // (1000, 0, -1000), target 0, eps 0.3: -log p_y is 0, the smoothing
    // adds 0.3 * (1000 - 0) = 300; softmax (1, 0, 0) - q (0.8, 0.1, 0.1).
    // Without the maximum taken out, exp(1000) is inf.
    const float big[3] = {1000, 0, -1000};
    const int y0 = 0;
    float d3[3] = {7, 7, 7};
    loss = ex_smoothed_xent(d3, big, &y0, 1, 3, -1, 0.3f);
    ck_assert_msg(fabs(loss - 300) < 1e-3, "loss of (1000, 0, -1000), eps "
                  "0.3: %.9g, want 300", loss);
    const double w3[3] = {0.2, -0.1, -0.1};
    ck_assert_close("dlogits of (1000, 0, -1000), eps 0.3", d3, w3, 3, 1e-6,
                    0);
}
END_TEST

START_TEST(ex7_3_pad_rows) {
    // Pad rows add nothing, are not counted in the mean, and get a zero
    // gradient (the 7s put there must go); the pad class still gets its
    // eps/V in the other rows. All rows pad: loss 0, gradient 0.
    enum { N = 5, V = 6 };
    float *z = randn_floats(N * V, 2.0f, 730);
    const int t[N] = {2, 0, 5, 0, 0};   // pad 0: rows 1, 3, 4
    smooth_case("pad 0, 3 of 5 rows pad", z, t, N, V, 0, 0.1f);
    float d[N * V];
    for (int i = 0; i < N * V; i++) d[i] = 7;
    ex_smoothed_xent(d, z, t, N, V, 0, 0.1f);
    for (int v = 0; v < V; v++)
        ck_assert_msg(d[V + v] == 0 && d[4 * V + v] == 0, "a pad row's "
                      "gradient is not 0: dlogits[1][%d] = %g, "
                      "dlogits[4][%d] = %g", v, d[V + v], v, d[4 * V + v]);
    const int all[N] = {3, 3, 3, 3, 3};
    for (int i = 0; i < N * V; i++) d[i] = 7;
    float loss = ex_smoothed_xent(d, z, all, N, V, 3, 0.1f);
    ck_assert_msg(loss == 0, "every target pad: loss %g, want 0", loss);
    for (int i = 0; i < N * V; i++)
        ck_assert_msg(d[i] == 0, "every target pad: dlogits[%d] = %g", i,
                      d[i]);
    // pad -1 (no class is pad) and eps 0 and 1
    const int t2[N] = {2, -1, 5, 0, 1};
    smooth_case("pad -1, eps 0", z, t2, N, V, -1, 0.0f);
    smooth_case("pad -1, eps 1", z, t2, N, V, -1, 1.0f);
    smooth_case("pad 0 with eps 0.4", z, t, N, V, 0, 0.4f);
    free(z);
}
END_TEST

static const char *LOSS_CASES[] = {"plain", "smooth", "large", "nopad",
                                   "tiny"};

START_TEST(ex7_3_matches_pytorch) {
    // F.cross_entropy(..., ignore_index=pad, label_smoothing=eps) and
    // autograd, the five cases of chapter 7's own loss tests
    Fixture *f = fixture_open("ch7_loss.txt");
    for (int c = 0; c < 5; c++) {
        const char *name = LOSS_CASES[c];
        char key[64];
        int dims[FIXTURE_MAX_DIMS];
        snprintf(key, sizeof key, "%s.logits", name);
        ck_assert_int_eq(fixture_dims(f, key, dims), 2);
        int N = dims[0], V = dims[1];
        const float *z = fixture_get(f, key, dims, 2);
        snprintf(key, sizeof key, "%s.targets", name);
        const float *ft = fixture_get(f, key, dims, 1);
        int *t = xmalloc((size_t)N * sizeof *t);
        for (int n = 0; n < N; n++) t[n] = (int)ft[n];
        int pad = (int)*fx_get2(f, name, "pad", NULL, 0);
        float eps = *fx_get2(f, name, "eps", NULL, 0);
        double want = *fx_get2(f, name, "loss", NULL, 0);
        float *d = alloc_floats((size_t)N * V);
        float loss = ex_smoothed_xent(d, z, t, N, V, pad, eps);
        ck_assert_msg(fabs(loss - want) <= 1e-6 * fabs(want), "%s: loss "
                      "%.9g, PyTorch %.9g", name, loss, want);
        char what[64];
        snprintf(what, sizeof what, "%s: dlogits vs autograd", name);
        ck_assert_close_f(what, d, fx_get2(f, name, "dlogits", dims, 2),
                          (size_t)N * V, 1e-6, 0);
        free(t), free(d);
    }
    fixture_free(f);
}
END_TEST

START_TEST(ex7_3_matches_chapter) {
    // chapter 7's smoothed_xent_forward and _backward (scale 1 / n_valid)
    enum { N = 9, V = 13 };
    float *z = randn_floats(N * V, 3.0f, 731);
    const int t[N] = {4, 12, 0, 0, 7, 1, 0, 11, 2};
    const float eps[3] = {0.0f, 0.1f, 0.25f};
    const int pads[3] = {0, 7, -1};
    for (int k = 0; k < 3; k++) {
        SmoothedLoss s;
        float want = smoothed_xent_forward(z, t, N, V, pads[k], eps[k], &s);
        float wd[N * V], d[N * V];
        smoothed_xent_backward(wd, z, t, N, V, pads[k], eps[k],
                               1.0f / s.n_valid);
        float loss = ex_smoothed_xent(d, z, t, N, V, pads[k], eps[k]);
        ck_assert_msg(fabsf(loss - want) <= 1e-6f * fabsf(want), "pad %d, "
                      "eps %g: loss %.9g, smoothed_xent_forward %.9g",
                      pads[k], eps[k], loss, want);
        char what[64];
        snprintf(what, sizeof what, "pad %d, eps %g: dlogits", pads[k],
                 eps[k]);
        ck_assert_close_f(what, d, wd, N * V, 1e-7, 1e-5);
    }
    free(z);
}
END_TEST

typedef struct {
    float *z;
    const int *t;
    int N, V, pad;
    float eps;
} SmoothCtx;

static double smooth_loss(void *ctx) {
    const SmoothCtx *c = ctx;
    return smooth_def(NULL, c->z, c->t, c->N, c->V, c->pad, c->eps);
}

START_TEST(ex7_3_finite_differences) {
    enum { N = 4, V = 7 };
    float *z = randn_floats(N * V, 1.5f, 732);
    const int t[N] = {6, 2, 2, 0};   // pad 2: rows 1 and 2
    float d[N * V];
    ex_smoothed_xent(d, z, t, N, V, 2, 0.15f);
    SmoothCtx c = {z, t, N, V, 2, 0.15f};
    ck_assert_grad("dlogits vs finite differences of the mean loss",
                   smooth_loss, &c, z, d, N * V, 1e-3, 1e-6, 1e-4);
    free(z);
}
END_TEST

TCase *ex7_3_tcase(void) {
    TCase *tc = tcase_new("ex7.3", "ch7 exercises");
    tcase_add_test(tc, ex7_3_by_hand);
    tcase_add_test(tc, ex7_3_pad_rows);
    tcase_add_test(tc, ex7_3_matches_pytorch);
    tcase_add_test(tc, ex7_3_matches_chapter);
    tcase_add_test(tc, ex7_3_finite_differences);
    return tc;
}

// ---- 7.4 the decoder layer's forward pass -----------------------------------

typedef struct {
    const char *name;
    int B, T, Tk, C, NH, F;
    bool bias;
    Activation act;
    const int *tgt_mask, *src_mask;   // NULL: all real
} DlCase;

typedef struct {
    DlCase c;
    float *x, *mem, *params;
    DecoderWeights w;
    int *tgt, *src;                   // masks read from a fixture
} DlData;

static void dl_params(DlData *d) {
    const DlCase *c = &d->c;
    size_t n = decoder_param_count(c->C, c->F, c->bias);
    d->params = alloc_floats(n);
    decoder_weights_point(&d->w, d->params, c->C, c->F, c->bias);
}

// Weights as tests/reference/gen_ch7.py draws them: LayerNorm weights
// 1 + N(0, 0.2^2), biases N(0, 0.1^2), matrices N(0, 1/fan_in): with
// LayerNorms that are not the identity, a misplaced one shows.
static DlData dl_random(const DlCase *c, uint64_t seed) {
    DlData d = {.c = *c};
    d.x = randn_floats((size_t)c->B * c->T * c->C, 1.0f, seed);
    d.mem = randn_floats((size_t)c->B * c->Tk * c->C, 1.0f, seed + 1);
    dl_params(&d);
    BlockTensor t[DECODER_MAX_TENSORS];
    int nt = decoder_tensors(t, &d.w, c->C, c->F);
    Rng rng;
    rng_seed(&rng, seed + 2);
    for (int i = 0; i < nt; i++) {
        bool mat = t[i].ndim == 2, ln = strncmp(t[i].name, "ln_", 3) == 0;
        bool bias = strstr(t[i].name, "bias") != NULL;
        size_t len = (size_t)t[i].shape[0] * (mat ? t[i].shape[1] : 1);
        float std = mat ? 1.0f / sqrtf((float)t[i].shape[1])
                        : bias ? 0.1f : 0.2f;
        rng_normal_fill(&rng, t[i].data, len, ln && !bias ? 1.0f : 0.0f,
                        std);
    }
    return d;
}

static DlData dl_fixture(const Fixture *f, const DlCase *c) {
    DlData d = {.c = *c};
    const int sx[3] = {c->B, c->T, c->C}, sm[3] = {c->B, c->Tk, c->C};
    char key[96];
    snprintf(key, sizeof key, "%s.x", c->name);
    d.x = fx_copy(f, key, sx, 3);
    snprintf(key, sizeof key, "%s.memory", c->name);
    d.mem = fx_copy(f, key, sm, 3);
    snprintf(key, sizeof key, "%s.tgt_mask", c->name);
    d.c.tgt_mask = d.tgt = fx_mask(f, key, c->B, c->T);
    snprintf(key, sizeof key, "%s.src_mask", c->name);
    d.c.src_mask = d.src = fx_mask(f, key, c->B, c->Tk);
    dl_params(&d);
    BlockTensor t[DECODER_MAX_TENSORS];
    int nt = decoder_tensors(t, &d.w, c->C, c->F);
    for (int i = 0; i < nt; i++) {
        size_t len = (size_t)t[i].shape[0]
                     * (t[i].ndim == 2 ? t[i].shape[1] : 1);
        memcpy(t[i].data, fx_get2(f, c->name, t[i].name, t[i].shape,
                                  t[i].ndim), len * sizeof(float));
    }
    return d;
}

static void dl_free(DlData *d) {
    free(d->x), free(d->mem), free(d->params), free(d->tgt), free(d->src);
}

// The exercise's output (written over NaNs) with its cache, which the
// caller frees
static float *dl_run(const DlData *d, DecoderCache *cache) {
    const DlCase *c = &d->c;
    size_t n = (size_t)c->B * c->T * c->C;
    float *out = alloc_floats(n);
    for (size_t i = 0; i < n; i++) out[i] = NAN;
    Error err = {0};
    ck_assert_msg(decoder_cache_alloc(cache, c->B, c->T, c->Tk, c->C, c->NH,
                                      c->F, &err) == 0, "%s", err.msg);
    int rc = ex_decoder_forward(out, cache, d->x, d->mem, &d->w, c->tgt_mask,
                                c->src_mask, c->act, c->B, c->T, c->Tk, c->C,
                                c->NH, c->F, &err);
    ck_assert_msg(rc == 0, "%s: ex_decoder_forward returned %d (%s)",
                  c->name, rc, err.msg);
    return out;
}

static float *dl_reference(const DlData *d, DecoderCache *cache) {
    const DlCase *c = &d->c;
    float *out = alloc_floats((size_t)c->B * c->T * c->C);
    Error err;
    ck_assert_msg(decoder_cache_alloc(cache, c->B, c->T, c->Tk, c->C, c->NH,
                                      c->F, &err) == 0, "%s", err.msg);
    ck_assert_msg(decoder_forward(out, cache, d->x, d->mem, &d->w,
                                  c->tgt_mask, c->src_mask, c->act, 0.0f,
                                  NULL, c->B, c->T, c->Tk, c->C, c->NH, c->F,
                                  &err) == 0, "%s", err.msg);
    return out;
}

// Target padding differs from the source's, so that one mask used for
// the other shows; T = Tk in some cases, so that swapped streams still
// have the right shapes.
static const int TGT_2x4[8] = {1, 1, 1, 1, 1, 1, 0, 0};
static const int SRC_2x4[8] = {1, 1, 0, 0, 1, 1, 1, 1};
static const int TGT_2x3[6] = {1, 1, 0, 1, 1, 1};
static const int SRC_2x6[12] = {1, 1, 1, 1, 0, 0, 1, 0, 1, 1, 1, 1};
static const int SRC_2x3_NONE[6] = {1, 1, 1, 0, 0, 0};

static const DlCase DL_CASES[] = {
    {"T = Tk = 4, both padded", 2, 4, 4, 8, 2, 16, true, RELU, TGT_2x4,
     SRC_2x4},
    {"T 3 < Tk 6, GELU, no bias", 2, 3, 6, 6, 3, 12, false, GELU_EXACT,
     TGT_2x3, SRC_2x6},
    {"T = Tk = 3, one source of padding only", 2, 3, 3, 6, 2, 10, true,
     RELU, TGT_2x3, SRC_2x3_NONE},
    {"T 5 > Tk 2, no masks", 1, 5, 2, 4, 1, 8, true, RELU, NULL, NULL},
};

START_TEST(ex7_4_matches_decoder_forward) {
    for (size_t k = 0; k < sizeof DL_CASES / sizeof *DL_CASES; k++) {
        DlData d = dl_random(&DL_CASES[k], 760 + 10 * k);
        DecoderCache c1, c2;
        float *got = dl_run(&d, &c1), *want = dl_reference(&d, &c2);
        ck_assert_close_f(DL_CASES[k].name, got, want,
                          (size_t)d.c.B * d.c.T * d.c.C, 1e-5, 1e-5);
        free(got), free(want);
        decoder_cache_free(&c1), decoder_cache_free(&c2);
        dl_free(&d);
    }
}
END_TEST

START_TEST(ex7_4_matches_pytorch) {
    // tests/reference/gen_ch7.py's two layers (ch7_decoder.txt)
    Fixture *f = fixture_open("ch7_decoder.txt");
    const DlCase cases[2] = {
        {"relu", 2, 4, 5, 8, 2, 20, true, RELU, NULL, NULL},
        {"gelu_nobias", 2, 3, 6, 6, 3, 12, false, GELU_EXACT, NULL, NULL},
    };
    for (int k = 0; k < 2; k++) {
        DlData d = dl_fixture(f, &cases[k]);
        DecoderCache cache;
        float *got = dl_run(&d, &cache);
        const int sx[3] = {d.c.B, d.c.T, d.c.C};
        char what[64];
        snprintf(what, sizeof what, "%s: out vs PyTorch", d.c.name);
        ck_assert_close_f(what, got, fx_get2(f, d.c.name, "out", sx, 3),
                          (size_t)d.c.B * d.c.T * d.c.C, 1e-5, 1e-5);
        free(got);
        decoder_cache_free(&cache);
        dl_free(&d);
    }
    fixture_free(f);
}
END_TEST

START_TEST(ex7_4_backward_after_it) {
    // decoder_backward after the exercise's forward pass gives the
    // gradients it gives after decoder_forward: the cache holds what the
    // contract says.
    for (size_t k = 0; k < 2; k++) {
        const DlCase *c = &DL_CASES[k];
        DlData d = dl_random(c, 780 + 10 * k);
        size_t nx = (size_t)c->B * c->T * c->C, nm = (size_t)c->B * c->Tk
                                                     * c->C;
        size_t np = decoder_param_count(c->C, c->F, c->bias);
        float *dout = randn_floats(nx, 1.0f, 790 + k);
        float *dx[2], *dm[2], *g[2];
        for (int r = 0; r < 2; r++) {
            DecoderCache cache;
            float *out = r ? dl_reference(&d, &cache) : dl_run(&d, &cache);
            dx[r] = alloc_floats(nx), dm[r] = alloc_floats(nm);
            g[r] = alloc_floats(np);
            memset(dx[r], 0, nx * sizeof(float));
            memset(dm[r], 0, nm * sizeof(float));
            memset(g[r], 0, np * sizeof(float));
            DecoderWeights gw;
            decoder_weights_point(&gw, g[r], c->C, c->F, c->bias);
            DecoderScratch s;
            Error err;
            ck_assert_msg(decoder_scratch_alloc(&s, c->B, c->T, c->Tk, c->C,
                                                c->NH, c->F, &err) == 0, "%s",
                          err.msg);
            decoder_backward(dx[r], dm[r], &gw, &s, dout, &cache, d.x, d.mem,
                             &d.w, c->B, c->T, c->Tk, c->C, c->NH, c->F);
            decoder_scratch_free(&s);
            decoder_cache_free(&cache);
            free(out);
        }
        ck_assert_close_f("dx from decoder_backward after your forward",
                          dx[0], dx[1], nx, 1e-5, 1e-4);
        ck_assert_close_f("dmemory from decoder_backward after your forward",
                          dm[0], dm[1], nm, 1e-5, 1e-4);
        ck_assert_close_f("weight gradients after your forward", g[0], g[1],
                          np, 1e-5, 1e-4);
        for (int r = 0; r < 2; r++) free(dx[r]), free(dm[r]), free(g[r]);
        free(dout);
        dl_free(&d);
    }
}
END_TEST

TCase *ex7_4_tcase(void) {
    TCase *tc = tcase_new("ex7.4", "ch7 exercises");
    tcase_add_test(tc, ex7_4_matches_decoder_forward);
    tcase_add_test(tc, ex7_4_matches_pytorch);
    tcase_add_test(tc, ex7_4_backward_after_it);
    return tc;
}

// ---- 7.5 and 7.6: decoding a small random model -----------------------------

enum { DV = 7, DPAD = 0, DBOS = 1, DEOS = 2, DMAXLEN = 16 };

// A small untrained model: vocabulary 7 (pad 0, <bos> 1, <eos> 2), C 16,
// one encoder and two decoder layers, weights drawn by seq2seq_init, and
// <eos>'s logit raised by push (through the decoder's final LayerNorm
// bias), so that the sentences end at different steps, some at the
// length limit (push 0: greedy decoding never picks <eos>; 6: always at
// once).
static void model_new(Seq2Seq *m, uint64_t seed, float push) {
    Seq2SeqConfig cfg = seq2seq_config_default(DV, DMAXLEN);
    cfg.n_embd = 16, cfg.n_head = 2, cfg.n_ffn = 32;
    cfg.n_enc = 1, cfg.n_dec = 2;
    Error err;
    ck_assert_msg(seq2seq_create(m, &cfg, &err) == 0, "%s", err.msg);
    Rng rng;
    rng_seed(&rng, seed);
    seq2seq_init(m, &rng);
    // the final LayerNorm's bias moved along <eos>'s embedding: + push on
    // <eos>'s logit
    const float *e = m->w.generator + (size_t)DEOS * cfg.n_embd;
    double n2 = 0;
    for (int i = 0; i < cfg.n_embd; i++) n2 += (double)e[i] * e[i];
    for (int i = 0; i < cfg.n_embd; i++)
        m->w.dec_ln_b[i] += (float)(push * e[i] / n2);
}

// B random sources of S ids in [3, 7), each with its own real length
// (0 to S), padded after it
static int *sources(int B, int S, uint64_t seed) {
    Rng rng;
    rng_seed(&rng, seed);
    int *src = xmalloc((size_t)B * S * sizeof *src);
    for (int b = 0; b < B; b++) {
        int n = b == 0 ? S : (int)rng_below(&rng, (uint32_t)S + 1);
        for (int s = 0; s < S; s++)
            src[b * S + s] = s < n ? 3 + (int)rng_below(&rng, 4) : DPAD;
    }
    return src;
}

typedef struct {
    int *out, *len;
    bool *done;
    float *score;
} Decoded;

static Decoded decoded_new(int B, int max_out) {
    Decoded d;
    d.out = xmalloc((size_t)B * max_out * sizeof *d.out);
    for (int i = 0; i < B * max_out; i++) d.out[i] = -7;   // untouched
    d.len = xmalloc((size_t)B * sizeof *d.len);
    d.done = xmalloc((size_t)B * sizeof *d.done);
    d.score = xmalloc((size_t)B * sizeof *d.score);
    for (int b = 0; b < B; b++)
        d.len[b] = -1, d.done[b] = !b, d.score[b] = NAN;
    return d;
}

static void decoded_free(Decoded *d) {
    free(d->out), free(d->len), free(d->done), free(d->score);
}

// What: 0 the exercise, 1 the chapter's. beam 0: greedy decoding.
static Decoded decode(int what, const Seq2Seq *m, const int *src, int B,
                      int S, int T_state, int beam, float alpha, int extra,
                      int max_out, bool with_done) {
    DecodeConfig dc = decode_config_default();
    dc.bos = DBOS, dc.eos = DEOS, dc.extra = extra;
    dc.beam = beam ? beam : 1, dc.alpha = alpha;
    Seq2SeqState st;
    Error err = {0};
    ck_assert_msg(seq2seq_state_alloc(&st, &m->cfg, B, S, T_state, dc.beam,
                                      &err) == 0, "%s", err.msg);
    Decoded d = decoded_new(B, max_out);
    bool *done = with_done ? d.done : NULL;
    int rc;
    if (beam == 0)
        rc = what == 0 ? ex_greedy_decode(m, &st, src, B, S, &dc, d.out,
                                          max_out, d.len, done, &err)
                       : greedy_decode(m, &st, src, B, S, &dc, d.out,
                                       max_out, d.len, done, &err);
    else
        rc = what == 0 ? ex_beam_decode(m, &st, src, B, S, &dc, d.out,
                                        max_out, d.len, done,
                                        with_done ? d.score : NULL, &err)
                       : beam_decode(m, &st, src, B, S, &dc, d.out, max_out,
                                     d.len, done, with_done ? d.score : NULL,
                                     &err);
    ck_assert_msg(rc == 0, "%s decoding returned %d: %s", what == 0 ?
                  "your" : "the chapter's", rc, err.msg);
    seq2seq_state_free(&st, &m->cfg);
    return d;
}

// "3 5 4 | <eos>" for messages
static const char *sentence(char *buf, size_t size, const Decoded *d, int b,
                            int max_out) {
    int n = 0;
    buf[0] = 0;
    for (int i = 0; i < d->len[b] && i < max_out && n < (int)size - 8; i++)
        n += snprintf(buf + n, size - n, "%d ", d->out[b * max_out + i]);
    snprintf(buf + n, size - n, "(len %d%s)", d->len[b],
             d->done[b] ? ", <eos>" : "");
    return buf;
}

// Every row the same: tokens (the whole row of out, the untouched -7s
// after len included), len, done and (scores) the score to rtol 1e-6.
static void same_decoding(const char *what, const Decoded *got,
                          const Decoded *want, int B, int max_out,
                          bool scores) {
    for (int b = 0; b < B; b++) {
        char g[256], w[256], sc[64];
        bool same = got->len[b] == want->len[b]
                    && got->done[b] == want->done[b]
                    && memcmp(got->out + b * max_out, want->out + b * max_out,
                              (size_t)max_out * sizeof *got->out) == 0;
        if (same && scores)
            same = isinf(want->score[b])
                   ? got->score[b] == want->score[b]
                   : fabsf(got->score[b] - want->score[b])
                     <= 1e-6f * fabsf(want->score[b]);
        if (same) continue;
        int bad = -1;
        for (int i = 0; i < max_out && bad < 0; i++)
            if (got->out[b * max_out + i] != want->out[b * max_out + i])
                bad = i;
        ck_assert_msg(same, "%s, sentence %d: got %s, want %s%s%s%s",
                      what, b, sentence(g, sizeof g, got, b, max_out),
                      sentence(w, sizeof w, want, b, max_out),
                      bad >= got->len[b] && bad >= 0
                      ? " (out written past len)" : "",
                      scores ? "; scores " : "",
                      scores ? (snprintf(sc, sizeof sc, "%.7g vs %.7g",
                                         got->score[b], want->score[b]), sc)
                             : "");
    }
}

// What a set of greedy decodings covered, so that a test can show it
// tried what it claims to.
typedef struct {
    int eos, eos_first, limit, lens[DMAXLEN + 1];
} Coverage;

static void cover(Coverage *c, const Decoded *d, int B) {
    for (int b = 0; b < B; b++) {
        if (d->done[b]) c->eos++, c->eos_first += d->len[b] == 0;
        else c->limit++;
        if (d->done[b] && d->len[b] <= DMAXLEN) c->lens[d->len[b]] = 1;
    }
}

enum { GB = 6, GS = 5 };

START_TEST(ex7_5_matches_greedy_decode) {
    // 4 models x 3 extra lengths, 6 sources each; the coverage is checked
    // at the end: sentences that end with <eos> at 3 or more different
    // lengths, and sentences stopped by the limit.
    Coverage cov = {0};
    const int extras[3] = {0, 2, 6};
    for (int s = 0; s < 4; s++) {
        Seq2Seq m;
        model_new(&m, 7500 + s, 2.0f);
        int *src = sources(GB, GS, 7600 + s);
        for (int e = 0; e < 3; e++) {
            Decoded got = decode(0, &m, src, GB, GS, DMAXLEN, 0, 0,
                                 extras[e], DMAXLEN, true);
            Decoded want = decode(1, &m, src, GB, GS, DMAXLEN, 0, 0,
                                  extras[e], DMAXLEN, true);
            char what[64];
            snprintf(what, sizeof what, "model %d, extra %d", s, extras[e]);
            same_decoding(what, &got, &want, GB, DMAXLEN, false);
            cover(&cov, &want, GB);
            decoded_free(&got), decoded_free(&want);
        }
        free(src);
        seq2seq_free(&m);
    }
    int lens = 0;
    for (int i = 0; i <= DMAXLEN; i++) lens += cov.lens[i];
    ck_assert_msg(cov.eos >= 6 && lens >= 3 && cov.limit >= 6, "the cases "
                  "cover too little: %d sentences end with <eos> at %d "
                  "lengths, %d at the limit", cov.eos, lens, cov.limit);
}
END_TEST

START_TEST(ex7_5_length_limits) {
    // The limit is the real source length + extra, cut to the state's T
    // and to max_out; a source of padding only with extra 0 gets nothing
    Seq2Seq m;
    model_new(&m, 7510, 2.0f);
    int *src = sources(GB, GS, 7610);
    for (int i = 0; i < GS; i++) src[1 * GS + i] = DPAD;
    const struct { int T_state, extra, max_out; } cs[4] = {
        {DMAXLEN, 0, DMAXLEN}, {4, 6, DMAXLEN}, {DMAXLEN, 6, 3},
        {6, 1, 5}};
    for (int k = 0; k < 4; k++) {
        Decoded got = decode(0, &m, src, GB, GS, cs[k].T_state, 0, 0,
                             cs[k].extra, cs[k].max_out, true);
        Decoded want = decode(1, &m, src, GB, GS, cs[k].T_state, 0, 0,
                              cs[k].extra, cs[k].max_out, true);
        char what[96];
        snprintf(what, sizeof what, "state T %d, extra %d, max_out %d",
                 cs[k].T_state, cs[k].extra, cs[k].max_out);
        same_decoding(what, &got, &want, GB, cs[k].max_out, false);
        if (k == 0)
            ck_assert_msg(got.len[1] == 0 && !got.done[1], "a source of "
                          "padding only with extra 0: len %d, done %d, want "
                          "0 and false", got.len[1], got.done[1]);
        decoded_free(&got), decoded_free(&want);
    }
    // done may be NULL
    Decoded got = decode(0, &m, src, GB, GS, DMAXLEN, 0, 0, 3, DMAXLEN,
                         false);
    Decoded want = decode(1, &m, src, GB, GS, DMAXLEN, 0, 0, 3, DMAXLEN,
                          true);
    for (int b = 0; b < GB; b++) got.done[b] = want.done[b];
    same_decoding("done NULL", &got, &want, GB, DMAXLEN, false);
    decoded_free(&got), decoded_free(&want);
    free(src);
    seq2seq_free(&m);
}
END_TEST

START_TEST(ex7_5_ties_take_the_lowest_id) {
    // A model whose parameters are all 0 gives equal logits everywhere:
    // the argmax is id 0 at every step, up to the limit (with <eos> 2),
    // and with <eos> 0 every sentence ends at once.
    Seq2SeqConfig cfg = seq2seq_config_default(DV, DMAXLEN);
    cfg.n_embd = 8, cfg.n_head = 2, cfg.n_ffn = 8, cfg.n_enc = 1;
    cfg.n_dec = 1;
    Seq2Seq m;
    Error err;
    ck_assert_msg(seq2seq_create(&m, &cfg, &err) == 0, "%s", err.msg);
    const int src[2 * 3] = {3, 4, 0, 5, 5, 5};
    for (int eos = 2; eos >= 0; eos -= 2) {
        DecodeConfig dc = decode_config_default();
        dc.bos = DBOS, dc.eos = eos, dc.extra = 1;
        Seq2SeqState st;
        ck_assert_msg(seq2seq_state_alloc(&st, &cfg, 2, 3, 8, 1, &err) == 0,
                      "%s", err.msg);
        int out[2 * 8], len[2];
        bool done[2];
        for (int i = 0; i < 16; i++) out[i] = -7;
        ck_assert_int_eq(ex_greedy_decode(&m, &st, src, 2, 3, &dc, out, 8,
                                          len, done, &err), 0);
        for (int b = 0; b < 2; b++) {
            int want = eos == 0 ? 0 : (b == 0 ? 3 : 4);
            ck_assert_msg(len[b] == want && done[b] == (eos == 0),
                          "equal logits, <eos> %d, sentence %d: len %d done "
                          "%d, want len %d done %d", eos, b, len[b], done[b],
                          want, eos == 0);
            for (int i = 0; i < len[b]; i++)
                ck_assert_msg(out[b * 8 + i] == 0, "equal logits: token %d "
                              "of sentence %d is %d, want 0 (the lowest id "
                              "among equal maxima)", i, b, out[b * 8 + i]);
        }
        seq2seq_state_free(&st, &cfg);
    }
    seq2seq_free(&m);
}
END_TEST

TCase *ex7_5_tcase(void) {
    TCase *tc = tcase_new("ex7.5", "ch7 exercises");
    tcase_add_test(tc, ex7_5_matches_greedy_decode);
    tcase_add_test(tc, ex7_5_length_limits);
    tcase_add_test(tc, ex7_5_ties_take_the_lowest_id);
    return tc;
}

// ---- 7.6 beam search --------------------------------------------------------

START_TEST(ex7_6_matches_beam_decode) {
    // 3 models, beams 2 to 5, alpha 0 to 2; coverage: the best hypothesis
    // differs from greedy decoding's in some sentences, alpha changes it
    // in some, and some end with <eos> and some at the limit.
    int beats_greedy = 0, alpha_matters = 0, eos = 0;
    const float alphas[4] = {0.0f, 0.6f, 1.0f, 2.0f};
    for (int s = 0; s < 3; s++) {
        Seq2Seq m;
        model_new(&m, 7700 + s, 1.0f);
        int *src = sources(GB, GS, 7800 + s);
        Decoded greedy = decode(1, &m, src, GB, GS, DMAXLEN, 0, 0, 3,
                                DMAXLEN, true);
        for (int k = 2; k <= 5; k++) {
            Decoded prev = {0};
            for (int a = 0; a < 4; a++) {
                Decoded got = decode(0, &m, src, GB, GS, DMAXLEN, k,
                                     alphas[a], 3, DMAXLEN, true);
                Decoded want = decode(1, &m, src, GB, GS, DMAXLEN, k,
                                      alphas[a], 3, DMAXLEN, true);
                char what[64];
                snprintf(what, sizeof what, "model %d, beam %d, alpha %g", s,
                         k, alphas[a]);
                same_decoding(what, &got, &want, GB, DMAXLEN, true);
                for (int b = 0; b < GB; b++) {
                    eos += want.done[b];
                    size_t o = (size_t)b * DMAXLEN;
                    beats_greedy += want.len[b] != greedy.len[b]
                        || memcmp(want.out + o, greedy.out + o,
                                  DMAXLEN * sizeof(int)) != 0;
                    if (a > 0)
                        alpha_matters += want.len[b] != prev.len[b]
                            || memcmp(want.out + o, prev.out + o,
                                      DMAXLEN * sizeof(int)) != 0;
                }
                decoded_free(&got);
                if (a > 0) decoded_free(&prev);
                prev = want;
            }
            decoded_free(&prev);
        }
        decoded_free(&greedy);
        free(src);
        seq2seq_free(&m);
    }
    ck_assert_msg(beats_greedy >= 20 && alpha_matters >= 20 && eos >= 50
                  && eos <= 250, "the cases cover too little: %d answers "
                  "differ from greedy decoding's, %d change with alpha, %d "
                  "of 288 end with <eos>", beats_greedy, alpha_matters, eos);
}
END_TEST

START_TEST(ex7_6_beam_one_alpha_zero_is_greedy) {
    // Beam 1 with alpha 0 keeps the single best token at each step and
    // stops at the first <eos>: greedy decoding, with its log P as score
    for (int s = 0; s < 3; s++) {
        Seq2Seq m;
        model_new(&m, 7900 + s, 2.0f);
        int *src = sources(GB, GS, 7950 + s);
        Decoded got = decode(0, &m, src, GB, GS, DMAXLEN, 1, 0.0f, 3,
                             DMAXLEN, true);
        Decoded want = decode(1, &m, src, GB, GS, DMAXLEN, 0, 0.0f, 3,
                              DMAXLEN, true);
        char what[64];
        snprintf(what, sizeof what, "model %d, beam 1, alpha 0 vs greedy",
                 s);
        same_decoding(what, &got, &want, GB, DMAXLEN, false);
        Decoded ref = decode(1, &m, src, GB, GS, DMAXLEN, 1, 0.0f, 3,
                             DMAXLEN, true);
        snprintf(what, sizeof what, "model %d, beam 1, alpha 0", s);
        same_decoding(what, &got, &ref, GB, DMAXLEN, true);
        decoded_free(&got), decoded_free(&want), decoded_free(&ref);
        free(src);
        seq2seq_free(&m);
    }
}
END_TEST

START_TEST(ex7_6_limits_and_nulls) {
    // Short limits (state T, max_out, extra 0 with a source of padding
    // only: len 0, score -inf), beam 1 with alpha 1, and done and score
    // NULL
    Seq2Seq m;
    model_new(&m, 7990, 2.0f);
    int *src = sources(GB, GS, 7991);
    for (int i = 0; i < GS; i++) src[2 * GS + i] = DPAD;
    const struct { int T_state, extra, max_out, beam; float alpha; } cs[4] = {
        {DMAXLEN, 0, DMAXLEN, 3, 1.0f}, {4, 6, DMAXLEN, 2, 0.5f},
        {DMAXLEN, 6, 3, 4, 1.0f}, {DMAXLEN, 2, DMAXLEN, 1, 1.0f}};
    for (int k = 0; k < 4; k++) {
        Decoded got = decode(0, &m, src, GB, GS, cs[k].T_state, cs[k].beam,
                             cs[k].alpha, cs[k].extra, cs[k].max_out, true);
        Decoded want = decode(1, &m, src, GB, GS, cs[k].T_state, cs[k].beam,
                              cs[k].alpha, cs[k].extra, cs[k].max_out, true);
        char what[96];
        snprintf(what, sizeof what, "state T %d, extra %d, max_out %d, beam "
                 "%d, alpha %g", cs[k].T_state, cs[k].extra, cs[k].max_out,
                 cs[k].beam, cs[k].alpha);
        same_decoding(what, &got, &want, GB, cs[k].max_out, true);
        if (k == 0)
            ck_assert_msg(got.len[2] == 0 && !got.done[2]
                          && isinf(got.score[2]) && got.score[2] < 0,
                          "a source of padding only with extra 0: len %d, "
                          "done %d, score %g; want 0, false, -inf",
                          got.len[2], got.done[2], got.score[2]);
        decoded_free(&got), decoded_free(&want);
    }
    Decoded got = decode(0, &m, src, GB, GS, DMAXLEN, 3, 1.0f, 3, DMAXLEN,
                         false);
    Decoded want = decode(1, &m, src, GB, GS, DMAXLEN, 3, 1.0f, 3, DMAXLEN,
                          true);
    for (int b = 0; b < GB; b++) got.done[b] = want.done[b];
    same_decoding("done and score NULL", &got, &want, GB, DMAXLEN, false);
    decoded_free(&got), decoded_free(&want);
    free(src);
    seq2seq_free(&m);
}
END_TEST

START_TEST(ex7_6_ties) {
    // A model whose parameters are all 0 gives equal logits everywhere:
    // every candidate ties with others, so the order (lower row, then
    // lower token) and "strictly greater replaces the best" decide every
    // beam and the answer. <eos> 2 (chosen late or never) and 0 (the
    // first candidate of all).
    Seq2SeqConfig cfg = seq2seq_config_default(DV, DMAXLEN);
    cfg.n_embd = 8, cfg.n_head = 2, cfg.n_ffn = 8, cfg.n_enc = 1;
    cfg.n_dec = 1;
    Seq2Seq m;
    Error err;
    ck_assert_msg(seq2seq_create(&m, &cfg, &err) == 0, "%s", err.msg);
    const int src[2 * 3] = {3, 4, 0, 5, 5, 5};
    for (int eos = 2; eos >= 0; eos -= 2)
        for (int k = 2; k <= 3; k++)
            for (int a = 0; a <= 1; a++) {
                Decoded d[2];
                for (int what = 0; what < 2; what++) {
                    DecodeConfig dc = decode_config_default();
                    dc.bos = DBOS, dc.eos = eos, dc.extra = 2;
                    dc.beam = k, dc.alpha = (float)a;
                    Seq2SeqState st;
                    ck_assert_msg(seq2seq_state_alloc(&st, &cfg, 2, 3, 8, k,
                                                      &err) == 0, "%s",
                                  err.msg);
                    d[what] = decoded_new(2, 8);
                    int rc = what == 0
                        ? ex_beam_decode(&m, &st, src, 2, 3, &dc, d[0].out,
                                         8, d[0].len, d[0].done, d[0].score,
                                         &err)
                        : beam_decode(&m, &st, src, 2, 3, &dc, d[1].out, 8,
                                      d[1].len, d[1].done, d[1].score, &err);
                    ck_assert_msg(rc == 0, "%s", err.msg);
                    seq2seq_state_free(&st, &cfg);
                }
                char what[64];
                snprintf(what, sizeof what, "equal logits, <eos> %d, beam "
                         "%d, alpha %d", eos, k, a);
                same_decoding(what, &d[0], &d[1], 2, 8, true);
                decoded_free(&d[0]), decoded_free(&d[1]);
            }
    seq2seq_free(&m);
}
END_TEST

TCase *ex7_6_tcase(void) {
    TCase *tc = tcase_new("ex7.6", "ch7 exercises");
    tcase_add_test(tc, ex7_6_matches_beam_decode);
    tcase_add_test(tc, ex7_6_beam_one_alpha_zero_is_greedy);
    tcase_add_test(tc, ex7_6_limits_and_nulls);
    tcase_add_test(tc, ex7_6_ties);
    return tc;
}

// ---- 7.7 BLEU ---------------------------------------------------------------

// Splits a 13a line (words joined by single spaces) into words, in place.
static int split_words(char *line, const char **w, int cap) {
    int n = 0;
    for (char *t = strtok(line, " "); t; t = strtok(NULL, " ")) {
        ck_assert(n < cap);
        w[n++] = t;
    }
    return n;
}

static void ex7_7_stats_case(const char *what, const char *hyp,
                             const char *ref, const long want_c[4],
                             const long want_t[4]) {
    char h[256], r[256];
    const char *hw[64], *rw[64];
    snprintf(h, sizeof h, "%s", hyp);
    snprintf(r, sizeof r, "%s", ref);
    int nh = split_words(h, hw, 64), nr = split_words(r, rw, 64);
    long c[4] = {77, 77, 77, 77}, t[4] = {77, 77, 77, 77};
    ex_bleu_ngram_stats(c, t, hw, nh, rw, nr);
    for (int n = 0; n < 4; n++)
        ck_assert_msg(c[n] == want_c[n] && t[n] == want_t[n], "%s: '%s' "
                      "against '%s': %d-grams: %ld of %ld match, want %ld "
                      "of %ld", what, hyp, ref, n + 1, c[n], t[n],
                      want_c[n], want_t[n]);
}

START_TEST(ex7_7_stats_by_hand) {
    // Papineni et al.'s example: 7 "the", the reference holds 2
    ex7_7_stats_case("clipping", "the the the the the the the",
                     "the cat is on the mat", (long[]){2, 0, 0, 0},
                     (long[]){7, 6, 5, 4});
    // a b: hyp 2, ref 1 -> 1; "a b" hyp 2, ref 1 -> 1; "b a" 1
    ex7_7_stats_case("repeats", "a b a b", "a b a c", (long[]){3, 2, 1, 0},
                     (long[]){4, 3, 2, 1});
    ex7_7_stats_case("reference repeats more", "x y x", "x x x y x y",
                     (long[]){3, 2, 1, 0}, (long[]){3, 2, 1, 0});
    ex7_7_stats_case("two words", "x y", "y x", (long[]){2, 0, 0, 0},
                     (long[]){2, 1, 0, 0});
    ex7_7_stats_case("empty hypothesis", "", "a b c", (long[]){0, 0, 0, 0},
                     (long[]){0, 0, 0, 0});
    ex7_7_stats_case("empty reference", "a b c", "", (long[]){0, 0, 0, 0},
                     (long[]){3, 2, 1, 0});
    ex7_7_stats_case("words are compared whole", "ab c abc", "a bc ab c",
                     (long[]){2, 1, 0, 0}, (long[]){3, 2, 1, 0});
}
END_TEST

// Every sentence of a file of cases: the exercise's statistics against
// bleu_corpus on that sentence alone, and their sums against sacreBLEU's.
static void ex7_7_stats_file(const char *path, bool optional) {
    Json *root;
    const Json *cases = bleu_cases_load(path, optional, &root);
    if (!cases) return;
    for (int i = 0; i < cases->n; i++) {
        BleuCase bc;
        bleu_case_get(&bc, cases, i);
        long sum_c[4] = {0}, sum_t[4] = {0};
        for (int k = 0; k < bc.n; k++) {
            // sacreBLEU's words, lowercased when the case is
            BleuResult one;
            Error err;
            ck_assert(bleu_corpus(&one, &bc.hyps[k], &bc.refs[k], 1,
                                  bc.lowercase, &err) == 0);
            char *h = bleu_tokenize_13a(bc.hyps[k], strlen(bc.hyps[k]),
                                        bc.lowercase, &err);
            char *r = bleu_tokenize_13a(bc.refs[k], strlen(bc.refs[k]),
                                        bc.lowercase, &err);
            const char *hw[256], *rw[256];
            int nh = split_words(h, hw, 256), nr = split_words(r, rw, 256);
            long c[4], t[4];
            ex_bleu_ngram_stats(c, t, hw, nh, rw, nr);
            for (int n = 0; n < 4; n++) {
                ck_assert_msg(c[n] == one.counts[n] && t[n] == one.totals[n],
                              "case %s, sentence %d: %d-grams: %ld of %ld "
                              "match, bleu_corpus says %ld of %ld", bc.name,
                              k + 1, n + 1, c[n], t[n], one.counts[n],
                              one.totals[n]);
                sum_c[n] += c[n], sum_t[n] += t[n];
            }
            free(h), free(r);
        }
        for (int n = 0; n < 4; n++)
            ck_assert_msg(sum_c[n] == (long)bleu_case_num(&bc, "counts", n)
                          && sum_t[n] == (long)bleu_case_num(&bc, "totals",
                                                             n),
                          "case %s: %d-grams: %ld of %ld match, sacreBLEU "
                          "%.0f of %.0f", bc.name, n + 1, sum_c[n], sum_t[n],
                          bleu_case_num(&bc, "counts", n),
                          bleu_case_num(&bc, "totals", n));
        bleu_case_free(&bc);
    }
    json_free(root);
}

START_TEST(ex7_7_stats_sacrebleu) {
    ex7_7_stats_file(BLEU_FIXTURE, false);
    ex7_7_stats_file(BLEU_VECTORS, true);
}
END_TEST

static void ex7_7_score_case(const char *what, const long c[4],
                             const long t[4], long sys_len, long ref_len,
                             double want, const double want_p[4],
                             double want_bp) {
    double p[4] = {-1, -1, -1, -1}, bp = -1;
    double s = ex_bleu_score(p, &bp, c, t, sys_len, ref_len);
    ck_assert_msg(fabs(bp - want_bp) <= 1e-12 * want_bp, "%s: bp %.17g, want "
                  "%.17g (hyp_len %ld, ref_len %ld)", what, bp, want_bp,
                  sys_len, ref_len);
    for (int n = 0; n < 4; n++)
        ck_assert_msg(fabs(p[n] - want_p[n]) <= 1e-12 * want_p[n], "%s: "
                      "precision %d is %.17g, want %.17g (%ld of %ld)", what,
                      n + 1, p[n], want_p[n], c[n], t[n]);
    ck_assert_msg(fabs(s - want) <= 1e-9 * want, "%s: score %.17g, want "
                  "%.17g", what, s, want);
}

// Every case of a file: its statistics through the exercise, against
// sacreBLEU's numbers and bleu_compute's.
static void ex7_7_score_file(const char *path, bool optional) {
    Json *root;
    const Json *cases = bleu_cases_load(path, optional, &root);
    if (!cases) return;
    for (int i = 0; i < cases->n; i++) {
        BleuCase bc;
        bleu_case_get(&bc, cases, i);
        BleuResult r = {0};
        double p[4];
        for (int n = 0; n < 4; n++) {
            r.counts[n] = (long)bleu_case_num(&bc, "counts", n);
            r.totals[n] = (long)bleu_case_num(&bc, "totals", n);
            p[n] = bleu_case_num(&bc, "precisions", n);
        }
        r.sys_len = (long)bleu_case_num(&bc, "sys_len", -1);
        r.ref_len = (long)bleu_case_num(&bc, "ref_len", -1);
        char what[128];
        snprintf(what, sizeof what, "case %s (sacreBLEU)", bc.name);
        ex7_7_score_case(what, r.counts, r.totals, r.sys_len, r.ref_len,
                         bleu_case_num(&bc, "score", -1), p,
                         bleu_case_num(&bc, "bp", -1));
        bleu_compute(&r);
        snprintf(what, sizeof what, "case %s (bleu_compute)", bc.name);
        ex7_7_score_case(what, r.counts, r.totals, r.sys_len, r.ref_len,
                         r.score, r.precisions, r.bp);
        bleu_case_free(&bc);
    }
    json_free(root);
}

START_TEST(ex7_7_score_sacrebleu) {
    ex7_7_score_file(BLEU_FIXTURE, false);
    ex7_7_score_file(BLEU_VECTORS, true);
}
END_TEST

START_TEST(ex7_7_score_by_hand) {
    // all four orders match: the geometric mean of 80, 50, 25, 10 is
    // 100 * (0.8 * 0.5 * 0.25 * 0.1)^(1/4), times exp(1 - 12/10)
    ex7_7_score_case("short", (long[]){8, 4, 2, 1}, (long[]){10, 8, 8, 10},
                     10, 12, exp(1 - 1.2) * 100 * pow(0.01, 0.25),
                     (double[]){80, 50, 25, 10}, exp(1 - 1.2));
    // longer than the reference: no penalty, whatever the ratio
    ex7_7_score_case("long", (long[]){8, 4, 2, 1}, (long[]){10, 8, 8, 10},
                     30, 12, 100 * pow(0.01, 0.25),
                     (double[]){80, 50, 25, 10}, 1.0);
    // orders 2 and 4 without a match: 1/2, then 1/4 of a match
    ex7_7_score_case("smoothed", (long[]){5, 0, 1, 0}, (long[]){10, 9, 8, 7},
                     10, 10, 100 * pow(0.5 / 18 * 1 / 8 * 1 / 28, 0.25),
                     (double[]){50, 100.0 / 18, 12.5, 100.0 / 28}, 1.0);
    // no 4-gram at all (every hypothesis shorter than 4 words): 0
    ex7_7_score_case("no 4-grams", (long[]){3, 1, 1, 0}, (long[]){3, 2, 1, 0},
                     3, 3, 0, (double[]){100, 50, 100, 0}, 1.0);
    // nothing matches: 0, every precision 0
    ex7_7_score_case("no match", (long[]){0, 0, 0, 0}, (long[]){4, 3, 2, 1},
                     4, 5, 0, (double[]){0, 0, 0, 0}, exp(1 - 5.0 / 4));
    ex7_7_score_case("empty", (long[]){0, 0, 0, 0}, (long[]){0, 0, 0, 0},
                     0, 5, 0, (double[]){0, 0, 0, 0}, 0);
}
END_TEST

TCase *ex7_7_tcase(void) {
    TCase *tc = tcase_new("ex7.7", "ch7 exercises");
    tcase_add_test(tc, ex7_7_stats_by_hand);
    tcase_add_test(tc, ex7_7_stats_sacrebleu);
    tcase_add_test(tc, ex7_7_score_by_hand);
    tcase_add_test(tc, ex7_7_score_sacrebleu);
    return tc;
}

// ---- 7.8 one BPE merge step -------------------------------------------------

// Words for a test: up to 8 words of up to 16 symbols.
typedef struct {
    int n;
    int sym[8][16];
    int len[8];
    long freq[8];
} Words;

static Words words_of(int n, const int *const *w, const int *len,
                      const long *freq) {
    Words x = {.n = n};
    for (int k = 0; k < n; k++) {
        x.len[k] = len[k], x.freq[k] = freq[k];
        memcpy(x.sym[k], w[k], (size_t)len[k] * sizeof(int));
    }
    return x;
}

static long merge_step(Words *x, int new_id, int pair[2]) {
    int *rows[8];
    for (int k = 0; k < 8; k++) rows[k] = x->sym[k];
    return ex_bpe_merge_step(rows, x->len, x->freq, x->n, new_id, pair);
}

// The definition: every pair of every word (inside the word, at every
// position) with its word's freq, the largest count, ties to the smallest
// (a, b); then a left-to-right rewrite. Returns the count.
static long merge_def(Words *x, int new_id, int pair[2]) {
    long best = 0;
    int ba = 0, bb = 0;
    for (int v = 0; v < x->n; v++)
        for (int j = 0; j + 1 < x->len[v]; j++) {
            int a = x->sym[v][j], b = x->sym[v][j + 1];
            long c = 0;
            for (int w = 0; w < x->n; w++)
                for (int i = 0; i + 1 < x->len[w]; i++)
                    c += (x->sym[w][i] == a && x->sym[w][i + 1] == b)
                         * x->freq[w];
            if (c > best || (c == best && (a < ba || (a == ba && b < bb))))
                best = c, ba = a, bb = b;
        }
    if (best == 0) return 0;
    pair[0] = ba, pair[1] = bb;
    for (int w = 0; w < x->n; w++) {
        int j = 0, *s = x->sym[w];
        for (int i = 0; i < x->len[w]; j++)
            if (i + 1 < x->len[w] && s[i] == ba && s[i + 1] == bb)
                s[j] = new_id, i += 2;
            else s[j] = s[i++];
        x->len[w] = j;
    }
    return best;
}

static void words_str(const Words *x, char *buf, size_t size) {
    size_t at = 0;
    buf[0] = '\0';
    for (int w = 0; w < x->n && at + 16 < size; w++) {
        at += (size_t)snprintf(buf + at, size - at, "%s[", w ? " " : "");
        for (int i = 0; i < x->len[w] && at + 16 < size; i++)
            at += (size_t)snprintf(buf + at, size - at, "%s%d", i ? " " : "",
                                   x->sym[w][i]);
        at += (size_t)snprintf(buf + at, size - at, "]x%ld", x->freq[w]);
    }
}

// One step of the exercise against the definition on a copy.
static void merge_case(const char *what, Words *x, int new_id) {
    Words want = *x;
    char before[512], got_s[512], want_s[512];
    words_str(x, before, sizeof before);
    int gp[2] = {-5, -5}, wp[2] = {-5, -5};
    long wc = merge_def(&want, new_id, wp);
    long gc = merge_step(x, new_id, gp);
    words_str(x, got_s, sizeof got_s);
    words_str(&want, want_s, sizeof want_s);
    ck_assert_msg(gc == wc && gp[0] == wp[0] && gp[1] == wp[1],
                  "%s: words %s: count %ld pair (%d, %d), want count %ld "
                  "pair (%d, %d)", what, before, gc, gp[0], gp[1], wc, wp[0],
                  wp[1]);
    ck_assert_msg(strcmp(got_s, want_s) == 0, "%s: words %s merged into "
                  "%s, want %s", what, before, got_s, want_s);
}

START_TEST(ex7_8_by_hand) {
    struct {
        const char *what;
        int n;
        int len[4];
        int sym[4][8];
        long freq[4];
        long count;
        int a, b;
        int out_len[4];
        int out[4][8];
    } cs[] = {
        {"overlap: 5 5 5 holds (5, 5) twice, and merges once", 2, {3, 2},
         {{5, 5, 5}, {6, 7}}, {3, 5}, 6, 5, 5, {2, 2}, {{20, 5}, {6, 7}}},
        {"overlap: 5 5 5 5 is two merges", 2, {4, 2}, {{5, 5, 5, 5}, {6, 7}},
         {1, 1}, 3, 5, 5, {2, 2}, {{20, 20}, {6, 7}}},
        {"frequencies count", 2, {4, 2}, {{1, 2, 1, 2}, {3, 4}}, {1, 3}, 3, 3,
         4, {4, 1}, {{1, 2, 1, 2}, {20}}},
        {"tie: the smallest a, then b (first seen is not it)", 3,
         {2, 2, 2}, {{3, 1}, {2, 9}, {2, 8}}, {2, 2, 2}, 2, 2, 8, {2, 2, 1},
         {{3, 1}, {2, 9}, {20}}},
        {"tie: the smallest a, then b (last seen is not it)", 3,
         {2, 2, 2}, {{2, 8}, {3, 1}, {2, 9}}, {2, 2, 2}, 2, 2, 8, {1, 2, 2},
         {{20}, {3, 1}, {2, 9}}},
        {"no pair across words", 3, {2, 1, 2}, {{9, 1}, {4}, {2, 9}},
         {3, 3, 3}, 3, 2, 9, {2, 1, 1}, {{9, 1}, {4}, {20}}},
        {"no pair across words (one-symbol words between)", 4,
         {1, 1, 2, 1}, {{1}, {2}, {3, 4}, {2}}, {2, 2, 1, 1}, 1, 3, 4,
         {1, 1, 1, 1}, {{1}, {2}, {20}, {2}}},
        {"every occurrence in a word", 2, {6, 3}, {{1, 2, 1, 2, 1, 2},
         {2, 1, 2}}, {1, 1}, 4, 1, 2, {3, 2}, {{20, 20, 20}, {2, 20}}},
    };
    for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
        int new_id = 20;
        const int *rows[4] = {cs[k].sym[0], cs[k].sym[1], cs[k].sym[2],
                              cs[k].sym[3]};
        Words x = words_of(cs[k].n, rows, cs[k].len, cs[k].freq);
        int pair[2] = {-1, -1};
        long c = merge_step(&x, new_id, pair);
        ck_assert_msg(c == cs[k].count && pair[0] == cs[k].a
                      && pair[1] == cs[k].b, "%s: count %ld pair (%d, %d), "
                      "want %ld (%d, %d)", cs[k].what, c, pair[0], pair[1],
                      cs[k].count, cs[k].a, cs[k].b);
        for (int w = 0; w < cs[k].n; w++) {
            bool same = x.len[w] == cs[k].out_len[w];
            for (int i = 0; same && i < x.len[w]; i++)
                same = x.sym[w][i] == cs[k].out[w][i];
            char got[512];
            words_str(&x, got, sizeof got);
            ck_assert_msg(same, "%s: word %d wrong after the merge: %s",
                          cs[k].what, w, got);
        }
    }
    // nothing to merge: 0, and nothing changes
    const int w0[1] = {4}, w2[1] = {7};
    const int *rows[3] = {w0, w0, w2};
    const int len[3] = {1, 0, 1};
    const long freq[3] = {2, 1, 2};
    Words x = words_of(3, rows, len, freq), y = x;
    int pair[2] = {-1, -1};
    ck_assert_int_eq(merge_step(&x, 9, pair), 0);
    ck_assert_msg(memcmp(&x, &y, sizeof x) == 0 && pair[0] == -1
                  && pair[1] == -1, "no pair: the words or pair changed");
    x.n = 0;   // no word at all
    ck_assert_int_eq(merge_step(&x, 9, pair), 0);
}
END_TEST

START_TEST(ex7_8_random_words) {
    // small alphabets (ties are common), merges one after another
    Rng rng;
    rng_seed(&rng, 78);
    for (int trial = 0; trial < 300; trial++) {
        Words x = {.n = 1 + (int)(rng_u32(&rng) % 8)};
        int K = 2 + (int)(rng_u32(&rng) % 4);
        for (int w = 0; w < x.n; w++) {
            x.len[w] = (int)(rng_u32(&rng) % 9);
            x.freq[w] = 1 + (long)(rng_u32(&rng) % 5);
            for (int i = 0; i < x.len[w]; i++)
                x.sym[w][i] = (int)(rng_u32(&rng) % (uint32_t)K);
        }
        for (int step = 0; step < 4; step++) {
            char what[64];
            snprintf(what, sizeof what, "random words %d, merge %d", trial,
                     step + 1);
            merge_case(what, &x, K + step);
        }
    }
}
END_TEST

START_TEST(ex7_8_learns_what_bpe_learns) {
    // Steps repeated on the words of a small text, stopped where bpe.c
    // stops (no pair seen twice), give the chapter's merges: the same
    // counting, the same tie rule, the same ids.
    const char *text = "the cat sat on the mat\nthe dog sat on the log\n"
                       "a cat and a dog  met a rat\nthat hat, the hat\n";
    size_t n = strlen(text);
    Bpe bpe;
    Error err;
    ck_assert_msg(bpe_learn(&bpe, &text, &n, 1, 100, &err) == 0, "%s",
                  err.msg);
    // the distinct words as bpe.h cuts them (a space starts a word), each
    // character as its id in bpe's alphabet
    const char *word[8 * 8];
    int wlen[8 * 8], W = 0;
    Words more[8];   // 64 words in 8 blocks of 8
    memset(more, 0, sizeof more);
    for (size_t i = 0; i < n;) {
        if (text[i] == '\n') { i++; continue; }
        size_t e = i + (text[i] == ' ');
        while (e < n && text[e] != ' ' && text[e] != '\n') e++;
        int L = (int)(e - i), w = 0;
        while (w < W && !(wlen[w] == L && memcmp(word[w], text + i, L) == 0))
            w++;
        if (w == W) {
            ck_assert_int_lt(W, 64);
            word[W] = text + i, wlen[W++] = L;
            Words *blk = &more[w / 8];
            blk->n = w % 8 + 1, blk->len[w % 8] = L;
            for (int k = 0; k < L; k++) {
                int id = 0;
                while (id < bpe.n_chars
                       && bpe.chars[id] != (uint32_t)text[i + k]) id++;
                blk->sym[w % 8][k] = BPE_ALPHA + id;
            }
        }
        more[w / 8].freq[w % 8]++;
        i = e;
    }
    // all the words in one call: rows and arrays across the blocks
    int *rows[64], lens[64];
    long freq[64];
    for (int w = 0; w < W; w++) {
        rows[w] = more[w / 8].sym[w % 8];
        lens[w] = more[w / 8].len[w % 8];
        freq[w] = more[w / 8].freq[w % 8];
    }
    int m = 0;
    for (;; m++) {
        int pair[2] = {-1, -1};
        long c = ex_bpe_merge_step(rows, lens, freq, W,
                                   BPE_ALPHA + bpe.n_chars + m, pair);
        if (c < 2) break;
        ck_assert_msg(m < bpe.n_merges, "merge %d: the exercise finds pair "
                      "(%d, %d) seen %ld times; bpe_learn stopped after %d",
                      m + 1, pair[0], pair[1], c, bpe.n_merges);
        ck_assert_msg(pair[0] == bpe.merges[2 * m]
                      && pair[1] == bpe.merges[2 * m + 1], "merge %d: the "
                      "exercise merges (%d, %d), bpe_learn (%d, %d)", m + 1,
                      pair[0], pair[1], bpe.merges[2 * m],
                      bpe.merges[2 * m + 1]);
    }
    ck_assert_msg(m == bpe.n_merges, "the exercise made %d merges of pairs "
                  "seen twice or more, bpe_learn %d", m, bpe.n_merges);
    bpe_free(&bpe);
}
END_TEST

TCase *ex7_8_tcase(void) {
    TCase *tc = tcase_new("ex7.8", "ch7 exercises");
    tcase_add_test(tc, ex7_8_by_hand);
    tcase_add_test(tc, ex7_8_random_words);
    tcase_add_test(tc, ex7_8_learns_what_bpe_learns);
    return tc;
}
