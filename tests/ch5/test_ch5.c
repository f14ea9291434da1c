// Tests of chapter 5: the whole GPT against PyTorch (weights loaded from
// safetensors files that PyTorch wrote), finite differences of its new
// layers (embedding, cross-entropy) and of the whole model with dropout,
// where its dropout goes (the model rebuilt from its parts), the
// initialisation, checkpoints (round trip and every refusal), and
// generation with and without the KV cache.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ch4/ch4_util.h"
#include "check_util.h"
#include "checkpoint.h"
#include "crossentropy.h"
#include "embedding.h"
#include "fixture.h"
#include "generate.h"
#include "gpt.h"
#include "layernorm.h"
#include "linear.h"
#include "mem.h"
#include "safetensors.h"
#include "sample.h"

#define REF "tests/reference/"

static const char *CASES[] = {"bias", "nobias", "sin"};

static Fixture *open_fixture(void) {
    return fixture_open("ch5_gpt.txt");
}

static void load_case(const char *name, Gpt *m, Vocab *v) {
    char path[256];
    snprintf(path, sizeof path, REF "ch5_%s.safetensors", name);
    Error err;
    ck_assert_msg(checkpoint_load(path, m, v, &err) == 0, "%s", err.msg);
}

// A fixture tensor of ids (stored as floats) as ints.
static int *fixture_ids(const Fixture *f, const char *key, size_t *n) {
    Error err;
    const float *p = fixture_find(f, key, NULL, 0, n, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    int *ids = xmalloc(*n * sizeof *ids);
    for (size_t i = 0; i < *n; i++) ids[i] = (int)p[i];
    return ids;
}

static double *to_double(const float *p, size_t n) {
    double *d = xmalloc(n * sizeof *d);
    for (size_t i = 0; i < n; i++) d[i] = p[i];
    return d;
}

static size_t numel(const GptTensor *t) {
    return (size_t)t->shape[0] * (t->ndim == 2 ? t->shape[1] : 1);
}

// ---- parity with PyTorch ---------------------------------------------------------

START_TEST(gpt_matches_pytorch) {
    const char *name = CASES[_i];
    Fixture *f = open_fixture();
    Gpt m;
    Vocab v;
    load_case(name, &m, &v);
    char key[160];
    size_t n;
    snprintf(key, sizeof key, "%s.idx", name);
    int *idx = fixture_ids(f, key, &n);
    snprintf(key, sizeof key, "%s.targets", name);
    int *tg = fixture_ids(f, key, &n);
    int dims[FIXTURE_MAX_DIMS];
    ck_assert_int_eq(fixture_dims(f, key, dims), 2);
    int B = dims[0], T = dims[1];
    GptActs a;
    Error err;
    ck_assert_int_eq(gpt_acts_alloc(&a, &m.cfg, B, T, &err), 0);
    float loss;
    ck_assert_msg(gpt_forward(&m, &a, idx, tg, B, T, false, NULL, &loss,
                              &err) == 0, "%s", err.msg);
    int V = m.cfg.vocab_size;
    snprintf(key, sizeof key, "%s.logits", name);
    int lshape[3] = {B, T, V};
    double *want = to_double(fixture_get(f, key, lshape, 3), (size_t)B*T*V);
    ck_assert_close(key, a.logits, want, (size_t)B * T * V, 1e-6, 1e-5);
    free(want);
    snprintf(key, sizeof key, "%s.loss", name);
    double wl = fixture_get(f, key, NULL, 0)[0];
    ck_assert_msg(fabs(loss - wl) <= 1e-5 * fabs(wl),
                  "%s: loss %.9g, PyTorch %.9g", name, loss, wl);

    ck_assert_int_eq(gpt_alloc_grads(&m, &err), 0);
    gpt_zero_grads(&m);
    gpt_backward(&m, &a, idx, tg);
    for (int i = 0; i < m.n_tensors; i++) {
        const GptTensor *t = &m.tensors[i];
        snprintf(key, sizeof key, "%s.grad.%s", name, t->name);
        const float *g = fixture_get(f, key, t->shape, t->ndim);
        size_t k = numel(t);
        // relative to the tensor's largest gradient, so that entries
        // near zero are judged at the tensor's own scale
        double big = 0;
        for (size_t j = 0; j < k; j++) big = fmax(big, fabs(g[j]));
        double *w = to_double(g, k);
        ck_assert_close(key, m.grads + t->offset, w, k, 1e-6 * big, 1e-4);
        free(w);
    }
    free(idx);
    free(tg);
    gpt_acts_free(&a, &m.cfg);
    gpt_free(&m);
    vocab_free(&v);
    fixture_free(f);
}
END_TEST

START_TEST(score_matches_pytorch) {
    // the windows ./ch5 --score takes, scored by PyTorch in gen_ch5.py
    const char *text = "hate the east. toast: a hoe, a hat!\nshoe? oh, the "
                       "seat.\n";
    Fixture *f = open_fixture();
    for (int c = 0; c < 3; c++) {
        Gpt m;
        Vocab v;
        load_case(CASES[c], &m, &v);
        size_t n;
        Error err;
        int *ids = vocab_encode_utf8(&v, text, strlen(text), &n, &err);
        ck_assert_msg(ids != NULL, "%s", err.msg);
        double loss;
        ck_assert_msg(gpt_score(&m, ids, n, &loss, &err) == 0, "%s",
                      err.msg);
        char key[64];
        snprintf(key, sizeof key, "%s.score", CASES[c]);
        double want = fixture_get(f, key, NULL, 0)[0];
        ck_assert_msg(fabs(loss - want) <= 1e-5 * want, "%s: %.9g vs %.9g",
                      key, loss, want);
        // too short to hold one window and its next character
        ck_assert_int_eq(gpt_score(&m, ids, (size_t)m.cfg.block_size, &loss,
                                   &err), -1);
        ck_assert_ptr_nonnull(strstr(err.msg, "block_size + 1"));
        free(ids);
        gpt_free(&m);
        vocab_free(&v);
    }
    fixture_free(f);
}
END_TEST

// ---- finite differences ---------------------------------------------------------------

// L = sum(lw * (wte[idx] + pos)), evaluated in double: its gradient with
// respect to wte and wpe is what embedding_backward must produce.
START_TEST(embedding_backward_finite_differences) {
    enum { B = 2, T = 3, C = 4, V = 5 };
    const int idx[B * T] = {1, 4, 1, 0, 1, 3};   // id 1 three times
    float wte[V * C], wpe[T * C], lw[B * T * C], out[B * T * C];
    Rng r;
    rng_seed(&r, 51);
    rng_normal_fill(&r, wte, V * C, 0, 1);
    rng_normal_fill(&r, wpe, T * C, 0, 1);
    rng_normal_fill(&r, lw, B * T * C, 0, 1);
    embedding_forward(out, idx, wte, 1.0f, wpe, B, T, C);
    for (int i = 0; i < B * T; i++)
        for (int c = 0; c < C; c++)
            ck_assert_float_eq(out[i * C + c], wte[idx[i] * C + c]
                                                   + wpe[(i % T) * C + c]);
    float dwte[V * C], dwpe[T * C];
    for (int i = 0; i < V * C; i++) dwte[i] = 0.5f;   // += semantics
    for (int i = 0; i < T * C; i++) dwpe[i] = -0.25f;
    embedding_backward(dwte, dwpe, lw, idx, 1.0f, B, T, C);
    // d L / d wte[v, c] = sum of lw over the positions holding v
    for (int v = 0; v < V; v++)
        for (int c = 0; c < C; c++) {
            double want = 0.5;
            for (int i = 0; i < B * T; i++)
                if (idx[i] == v) want += lw[i * C + c];
            ck_assert_msg(fabs(dwte[v * C + c] - want) < 1e-6,
                          "dwte[%d,%d] %g want %g", v, c, dwte[v * C + c],
                          want);
        }
    for (int t = 0; t < T; t++)
        for (int c = 0; c < C; c++) {
            double want = -0.25 + lw[t * C + c] + lw[(T + t) * C + c];
            ck_assert(fabs(dwpe[t * C + c] - want) < 1e-6);
        }
    // NULL dwpos: the sinusoidal table is not learned
    embedding_backward(dwte, NULL, lw, idx, 1.0f, B, T, C);
}
END_TEST

// Chapter 7's embedding multiplies the rows by sqrt(C), not the
// positions: scale enters the forward pass and the rows' gradient only.
// (A version that scales the sum, or forgets the scale in the backward
// pass, fails here.)
START_TEST(embedding_scale) {
    enum { B = 1, T = 2, C = 3, V = 4 };
    const int idx[B * T] = {2, 2};
    float wte[V * C], pos[T * C], dout[B * T * C], out[B * T * C];
    Rng r;
    rng_seed(&r, 52);
    rng_normal_fill(&r, wte, V * C, 0, 1);
    rng_normal_fill(&r, pos, T * C, 0, 1);
    rng_normal_fill(&r, dout, B * T * C, 0, 1);
    const float s = 2.5f;
    embedding_forward(out, idx, wte, s, pos, B, T, C);
    for (int t = 0; t < T; t++)
        for (int c = 0; c < C; c++)
            ck_assert_float_eq_tol(out[t * C + c],
                                   s * wte[2 * C + c] + pos[t * C + c],
                                   1e-6);
    float dwte[V * C] = {0}, dpos[T * C] = {0};
    embedding_backward(dwte, dpos, dout, idx, s, B, T, C);
    for (int c = 0; c < C; c++) {
        ck_assert_float_eq_tol(dwte[2 * C + c],
                               s * (dout[c] + dout[C + c]), 1e-6);
        ck_assert_float_eq_tol(dpos[c], dout[c], 1e-6);
        ck_assert_float_eq(dwte[c], 0.0f);
    }
}
END_TEST

typedef struct {
    float *logits;
    const int *targets;
    int N, V;
} XentCtx;

static double xent_loss(void *p) {
    XentCtx *c = p;
    int n;
    return crossentropy_forward(c->logits, c->targets, c->N, c->V, &n);
}

START_TEST(crossentropy_finite_differences) {
    enum { N = 5, V = 7 };
    const int targets[N] = {3, -1, 0, 6, 3};
    float logits[N * V], d[N * V];
    Rng r;
    rng_seed(&r, 52);
    rng_normal_fill(&r, logits, N * V, 0, 2);
    // the definition in double: mean over the 4 valid rows
    double want = 0;
    for (int n = 0; n < N; n++) {
        if (targets[n] < 0) continue;
        double s = 0;
        for (int v = 0; v < V; v++) s += exp(logits[n * V + v]);
        want += (log(s) - logits[n * V + targets[n]]) / 4;
    }
    int valid;
    float got = crossentropy_forward(logits, targets, N, V, &valid);
    ck_assert_int_eq(valid, 4);
    ck_assert_msg(fabs(got - want) < 1e-6, "loss %g want %g", got, want);
    crossentropy_backward(d, logits, targets, N, V, 1.0f / valid);
    for (int v = 0; v < V; v++) ck_assert_float_eq(d[1 * V + v], 0.0f);
    XentCtx ctx = {logits, targets, N, V};
    ck_assert_grad("crossentropy", xent_loss, &ctx, logits, d, N * V, 1e-2,
                   1e-5, 2e-3);
    // every target ignored: loss 0 and no gradient, not 0/0
    const int none[N] = {-1, -1, -1, -1, -1};
    ck_assert_float_eq(crossentropy_forward(logits, none, N, V, &valid), 0);
    ck_assert_int_eq(valid, 0);
    // a huge logit does not overflow
    float big[3] = {1000, 0, -1000};
    const int t0[1] = {0};
    ck_assert(fabs(crossentropy_forward(big, t0, 1, 3, &valid)) < 1e-6);
    // a NaN or infinite logit anywhere in a row (not the target, not the
    // first, in the vectorised part or the tail) makes its loss and its
    // gradient NaN, as the definition does, so a training run can stop
    enum { W = 40 };
    const float bads[2] = {NAN, INFINITY};
    const int where[3] = {5, 17, 38}, t1[1] = {2};
    float row[W], drow[W];
    for (int b = 0; b < 2; b++)
        for (int w = 0; w < 3; w++) {
            for (int v = 0; v < W; v++) row[v] = 0.01f * v;
            row[where[w]] = bads[b];
            float loss = crossentropy_forward(row, t1, 1, W, &valid);
            ck_assert_msg(isnan(loss), "%g at logit %d: loss %g, not NaN",
                          (double)bads[b], where[w], (double)loss);
            crossentropy_backward(drow, row, t1, 1, W, 1.0f);
            ck_assert_msg(isnan(drow[0]), "%g at logit %d: gradient %g, "
                          "not NaN", (double)bads[b], where[w],
                          (double)drow[0]);
        }
}
END_TEST

typedef struct {
    Gpt *m;
    GptActs *a;
    const int *idx, *tg;
    int B, T;
    bool train;
} ModelCtx;

static double model_loss(void *p) {
    ModelCtx *c = p;
    Rng r;
    rng_seed(&r, 99);   // the same dropout masks at every evaluation
    float loss;
    Error err;
    ck_assert_int_eq(gpt_forward(c->m, c->a, c->idx, c->tg, c->B, c->T,
                                 c->train, &r, &loss, &err), 0);
    return loss;
}

// The whole model in training mode (dropout on, fixed masks), biases and
// learned positions, each parameter tensor checked.
START_TEST(gpt_backward_finite_differences_with_dropout) {
    // (GPT-2's tanh GELU: the PyTorch fixtures check the exact one)
    GptConfig cfg = {.vocab_size = 6, .block_size = 5, .n_layer = 2,
                     .n_head = 2, .n_embd = 8, .n_ffn = 32, .dropout = 0.2f,
                     .bias = true, .positional = POS_LEARNED,
                     .act = GELU_TANH};
    Gpt m;
    Error err;
    ck_assert_int_eq(gpt_create(&m, &cfg, &err), 0);
    ck_assert_int_eq(gpt_alloc_grads(&m, &err), 0);
    Rng r;
    rng_seed(&r, 53);
    rng_normal_fill(&r, m.params, m.num_params, 0, 0.4f);
    enum { B = 2, T = 4 };
    const int idx[B * T] = {0, 5, 2, 2, 3, 1, 4, 0};
    const int tg[B * T] = {5, 2, -1, 3, 1, 4, 0, 0};
    GptActs a;
    ck_assert_int_eq(gpt_acts_alloc(&a, &cfg, B, T, &err), 0);
    ModelCtx ctx = {&m, &a, idx, tg, B, T, true};
    model_loss(&ctx);
    gpt_zero_grads(&m);
    gpt_backward(&m, &a, idx, tg);
    for (int i = 0; i < m.n_tensors; i++) {
        const GptTensor *t = &m.tensors[i];
        ck_assert_grad(t->name, model_loss, &ctx, m.params + t->offset,
                       m.grads + t->offset, numel(t), 1e-2, 2e-4, 3e-2);
    }
    gpt_acts_free(&a, &cfg);
    gpt_free(&m);
}
END_TEST

// Where dropout goes: gpt_forward in training (dropout 0.3) against the
// model rebuilt from its parts, each with p = 0, and the masks that the
// forward pass recorded: the embeddings' (x0 = (wte[idx] + pos) * mask),
// then every block's two, applied by chapter 4's block_with_masks. Each
// must be a real dropout mask (a dropout left out records all ones), no
// two the same. A model that leaves out the embeddings' dropout, or
// gives the blocks none, passed every other test (the gradient check
// above included: the backward pass uses the masks the forward pass
// recorded). The rebuilt model runs the same functions on the same
// numbers in the same order: its logits agree to the last bit, and the
// tolerance (1e-6) only leaves room for another order of the same sums,
// while a mask applied after the residual add instead moves every logit,
// by up to 1.5 here.
START_TEST(gpt_dropout_masks_each_place) {
    enum { B = 2, T = 6, L = 2 };
    const int idx[B * T] = {0, 5, 2, 2, 3, 1, 4, 0, 6, 6, 1, 3};
    for (int pos = 0; pos < 2; pos++) {
        GptConfig cfg = {.vocab_size = 7, .block_size = T, .n_layer = L,
                         .n_head = 2, .n_embd = 8, .n_ffn = 16,
                         .dropout = 0.3f, .bias = pos == 0,
                         .positional = pos ? POS_SINUSOIDAL : POS_LEARNED,
                         .act = pos ? GELU_TANH : GELU_EXACT};
        int C = cfg.n_embd, V = cfg.vocab_size;
        size_t n = (size_t)B * T * C;
        Gpt m;
        Error err;
        ck_assert_int_eq(gpt_create(&m, &cfg, &err), 0);
        Rng r;
        rng_seed(&r, 60 + pos);
        rng_normal_fill(&r, m.params, m.num_params, 0, 0.4f);
        GptActs a;
        ck_assert_int_eq(gpt_acts_alloc(&a, &cfg, B, T, &err), 0);
        rng_seed(&r, 62 + pos);
        ck_assert_msg(gpt_forward(&m, &a, idx, NULL, B, T, true, &r, NULL,
                                  &err) == 0, "%s", err.msg);
        const float *masks[1 + 2 * L] = {a.emb_mask};
        ck_dropout_mask("the embeddings' mask", a.emb_mask, n, cfg.dropout);
        for (int l = 0; l < L; l++) {
            char what[64];
            snprintf(what, sizeof what, "block %d: the attention's mask", l);
            ck_dropout_mask(what, a.blocks[l].sa.mask, n, cfg.dropout);
            snprintf(what, sizeof what, "block %d: the FFN's mask", l);
            ck_dropout_mask(what, a.blocks[l].ff.mask, n, cfg.dropout);
            masks[1 + 2 * l] = a.blocks[l].sa.mask;
            masks[2 + 2 * l] = a.blocks[l].ff.mask;
        }
        ck_masks_differ("the GPT", masks, 1 + 2 * L, n);
        // the model again, from its parts
        float *x = alloc_floats(n), *y = alloc_floats(n);
        embedding_forward(x, idx, m.w.wte, 1.0f,
                          m.w.wpe ? m.w.wpe : m.pos_table, B, T, C);
        for (size_t i = 0; i < n; i++) x[i] *= a.emb_mask[i];
        for (int l = 0; l < L; l++) {
            block_with_masks(y, x, &m.w.h[l], NULL, true, cfg.act, false,
                             a.blocks[l].sa.mask, a.blocks[l].ff.mask, B, T,
                             C, cfg.n_head, cfg.n_ffn);
            float *t = x;
            x = y, y = t;
        }
        float mean[B * T], rstd[B * T];
        float *logits = alloc_floats((size_t)B * T * V);
        layernorm_forward(y, mean, rstd, x, m.w.ln_f_w, m.w.ln_f_b, B, T, C);
        linear_forward(logits, y, m.w.wte, NULL, B * T, C, V);
        ck_assert_close_f(pos ? "logits, sinusoidal positions" : "logits",
                          a.logits, logits, (size_t)B * T * V, 1e-6, 1e-6);
        free(x), free(y), free(logits);
        gpt_acts_free(&a, &cfg);
        gpt_free(&m);
    }
}
END_TEST

// ---- the model's shape and initialisation -----------------------------------------

START_TEST(parameter_counts) {
    // the course notes' model: 65*128 + 128*128 + 4*(12*128^2 + 2*128) + 128
    GptConfig c = gpt_config_default(65);
    ck_assert_uint_eq(gpt_param_count(&c), 812288);
    Gpt m;
    Error err;
    ck_assert_int_eq(gpt_create(&m, &c, &err), 0);
    ck_assert_uint_eq(m.num_params, 812288);
    ck_assert_int_eq(m.n_tensors, 2 + 4 * 6 + 1);
    size_t sum = 0;
    for (int i = 0; i < m.n_tensors; i++) sum += numel(&m.tensors[i]);
    ck_assert_uint_eq(sum, m.num_params);
    ck_assert_str_eq(m.tensors[2].name, "transformer.h.0.ln_1.weight");
    gpt_free(&m);
    // GPT-2 small as published: 124,439,808 parameters
    GptConfig g2 = {.vocab_size = 50257, .block_size = 1024, .n_layer = 12,
                    .n_head = 12, .n_embd = 768, .n_ffn = 3072,
                    .dropout = 0.1f, .bias = true,
                    .positional = POS_LEARNED};
    ck_assert_uint_eq(gpt_param_count(&g2), 124439808);
    c.positional = POS_SINUSOIDAL;
    ck_assert_uint_eq(gpt_param_count(&c), 812288 - 128 * 128);
}
END_TEST

START_TEST(initialisation_statistics) {
    GptConfig c = gpt_config_default(65);
    c.bias = true;
    Gpt m;
    Error err;
    ck_assert_int_eq(gpt_create(&m, &c, &err), 0);
    Rng r;
    rng_seed(&r, 54);
    gpt_init(&m, &r);
    for (int i = 0; i < m.n_tensors; i++) {
        const GptTensor *t = &m.tensors[i];
        const float *p = m.params + t->offset;
        size_t n = numel(t);
        double s = 0, s2 = 0;
        for (size_t j = 0; j < n; j++) s += p[j], s2 += (double)p[j] * p[j];
        double mean = s / n, sd = sqrt(s2 / n - mean * mean);
        if (strstr(t->name, ".bias")) {
            ck_assert_msg(s2 == 0, "%s is not zero", t->name);
        } else if (strstr(t->name, "ln_")) {
            ck_assert_msg(mean == 1 && sd == 0, "%s is not all ones",
                          t->name);
        } else {
            double want = strstr(t->name, "c_proj.weight")
                              ? 0.02 / sqrt(8.0) : 0.02;
            // n >= 8320 draws: the sample std is within 5% of the truth
            ck_assert_msg(fabs(sd - want) < 0.05 * want && fabs(mean)
                          < 4 * want / sqrt((double)n), "%s: mean %g std "
                          "%g, want std %g", t->name, mean, sd, want);
        }
    }
    gpt_free(&m);
}
END_TEST

START_TEST(bad_configs_and_inputs) {
    Error err;
    GptConfig c = gpt_config_default(65);
    c.n_head = 3;
    ck_assert_int_eq(gpt_config_check(&c, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "n_head=3"));
    c = gpt_config_default(0);
    ck_assert_int_eq(gpt_config_check(&c, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "vocab_size"));
    c = gpt_config_default(65);
    c.dropout = 1.0f;
    ck_assert_int_eq(gpt_config_check(&c, &err), -1);
    // a block no attention could run: refused, though a small model's
    // n_embd x block_size would pass (the last block allowed passes)
    c = gpt_config_default(65);
    c.n_embd = 8, c.n_head = 1, c.block_size = 65537;
    ck_assert_int_eq(gpt_config_check(&c, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "too large: block_size 65537 > "
                                 "65536"));
    c.block_size = 65536;
    ck_assert_int_eq(gpt_config_check(&c, &err), 0);
    // the FFN of a GPT is one of the two GELUs
    c.act = GELU_TANH;
    ck_assert_int_eq(gpt_config_check(&c, &err), 0);
    c.act = RELU;
    ck_assert_int_eq(gpt_config_check(&c, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "not ReLU"));
    c.act = (Activation)7;
    ck_assert_int_eq(gpt_config_check(&c, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "activation"));
    c = gpt_config_default(10);
    c.block_size = 4;
    Gpt m;
    ck_assert_int_eq(gpt_create(&m, &c, &err), 0);
    GptActs a;
    ck_assert_int_eq(gpt_acts_alloc(&a, &c, 1, 4, &err), 0);
    int idx[5] = {1, 2, 10, 3, 0}, tg[4] = {0, 0, 0, -2};
    ck_assert_int_eq(gpt_forward(&m, &a, idx, NULL, 1, 4, false, NULL, NULL,
                                 &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "token id 10"));
    idx[2] = 9;
    ck_assert_int_eq(gpt_forward(&m, &a, idx, tg, 1, 4, false, NULL, NULL,
                                 &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "target -2"));
    ck_assert_int_eq(gpt_forward(&m, &a, idx, NULL, 1, 5, false, NULL, NULL,
                                 &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "block_size=4"));
    gpt_acts_free(&a, &c);
    gpt_free(&m);
}
END_TEST

// ---- checkpoints ----------------------------------------------------------------

static char tmpdir[64];

static void make_tmpdir(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ch5_test_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(const char *file) {
    char p[128];
    snprintf(p, sizeof p, "%s/%s", tmpdir, file);
    unlink(p);
    rmdir(tmpdir);
}

START_TEST(checkpoint_round_trip) {
    Gpt m, back;
    Vocab v, vb;
    load_case("bias", &m, &v);
    make_tmpdir();
    char path[128];
    snprintf(path, sizeof path, "%s/m.safetensors", tmpdir);
    Error err;
    ck_assert_msg(checkpoint_save(path, &m, &v, &err) == 0, "%s", err.msg);
    ck_assert_msg(checkpoint_load(path, &back, &vb, &err) == 0, "%s",
                  err.msg);
    const GptConfig *x = &m.cfg, *y = &back.cfg;   // field by field: the
    ck_assert(x->vocab_size == y->vocab_size       // struct has padding
              && x->block_size == y->block_size && x->n_layer == y->n_layer
              && x->n_head == y->n_head && x->n_embd == y->n_embd
              && x->dropout == y->dropout && x->bias == y->bias
              && x->positional == y->positional && x->act == y->act);
    ck_assert_int_eq(memcmp(m.params, back.params,
                            m.num_params * sizeof(float)), 0);
    ck_assert_int_eq(vb.size, v.size);
    ck_assert_int_eq(memcmp(v.chars, vb.chars, v.size * sizeof *v.chars), 0);
    // nanoGPT's names, lm_head.weight a copy of wte, the metadata keys
    StFile f;
    ck_assert_int_eq(st_load(&f, path, &err), 0);
    ck_assert_int_eq(f.n_tensors, m.n_tensors + 1);
    ck_assert_ptr_nonnull(st_find(&f, "transformer.h.1.mlp.c_proj.bias"));
    ck_assert_ptr_nonnull(st_find(&f, "lm_head.weight"));
    ck_assert_str_eq(st_meta(&f, "vocab"), "\n !,.:?aehost");
    ck_assert_ptr_nonnull(strstr(st_meta(&f, "config"),
                                 "\"positional\": \"learned\""));
    st_free(&f);
    gpt_free(&m), gpt_free(&back);
    vocab_free(&v), vocab_free(&vb);
    remove_tmpdir("m.safetensors");
}
END_TEST

// Writes the "bias" model with one thing changed by edit, loads it and
// expects a refusal mentioning want, with nothing left allocated.
typedef void (*Edit)(StWriteTensor *t, int *n, const char **keys,
                     const char **values, float *scratch);

static void expect_refusal(Edit edit, const char *want) {
    Gpt m;
    Vocab v;
    load_case("bias", &m, &v);
    StWriteTensor t[64];
    int n = 0;
    for (int i = 0; i < m.n_tensors; i++) {
        const GptTensor *g = &m.tensors[i];
        t[n++] = (StWriteTensor){g->name, m.params + g->offset, g->ndim,
                                 {g->shape[0], g->shape[1]}};
    }
    const char *keys[2] = {"config", "vocab"};
    const char *values[2] = {
        "{\"vocab_size\": 13, \"block_size\": 8, \"n_layer\": 2, "
        "\"n_head\": 2, \"n_embd\": 12, \"bias\": true, \"dropout\": 0, "
        "\"positional\": \"learned\"}", "\n !,.:?aehost"};
    float *scratch = alloc_floats(m.num_params);
    edit(t, &n, keys, values, scratch);
    make_tmpdir();
    char path[128];
    snprintf(path, sizeof path, "%s/bad.safetensors", tmpdir);
    Error err;
    ck_assert_msg(st_save(path, t, n, keys, values, 2, &err) == 0, "%s",
                  err.msg);
    Gpt got;
    Vocab gv;
    ck_assert_int_eq(checkpoint_load(path, &got, &gv, &err), -1);
    ck_assert_msg(strstr(err.msg, want) != NULL, "message '%s' lacks '%s'",
                  err.msg, want);
    ck_assert_ptr_null(got.params);   // nothing half-loaded
    ck_assert_ptr_null(gv.chars);
    free(scratch);
    gpt_free(&m);
    vocab_free(&v);
    remove_tmpdir("bad.safetensors");
}

static void e_none(StWriteTensor *t, int *n, const char **k,
                   const char **v, float *s) {
    (void)t, (void)n, (void)k, (void)v, (void)s;
}
static void e_missing(StWriteTensor *t, int *n, const char **k,
                      const char **v, float *s) {
    (void)k, (void)v, (void)s;
    t[5] = t[--*n];   // drops transformer.h.0.attn.c_attn.bias
}
static void e_shape(StWriteTensor *t, int *n, const char **k,
                    const char **v, float *s) {
    (void)n, (void)k, (void)v, (void)s;
    t[4].shape[0] = 12, t[4].shape[1] = 36;   // c_attn transposed
}
static void e_head(StWriteTensor *t, int *n, const char **k,
                   const char **v, float *s) {
    (void)k, (void)v;
    memcpy(s, t[0].data, 13 * 12 * sizeof(float));
    s[7] += 1e-3f;
    t[*n] = t[0];
    t[*n].name = "lm_head.weight";
    t[(*n)++].data = s;
}
static void e_extra(StWriteTensor *t, int *n, const char **k,
                    const char **v, float *s) {
    (void)k, (void)v;
    t[*n] = (StWriteTensor){"transformer.h.0.attn.bias", s, 1, {4}};
    (*n)++;
}
static void e_nan(StWriteTensor *t, int *n, const char **k,
                  const char **v, float *s) {
    (void)n, (void)k, (void)v;
    memcpy(s, t[3].data, 12 * sizeof(float));   // transformer.h.0.ln_1.bias
    s[2] = NAN;
    t[3].data = s;
}
static void e_config(StWriteTensor *t, int *n, const char **k,
                     const char **v, float *s) {
    (void)t, (void)n, (void)k, (void)s;
    v[0] = "{\"vocab_size\": 13, \"block_size\": 8, \"n_layer\": 2,}";
}
static void e_heads(StWriteTensor *t, int *n, const char **k,
                    const char **v, float *s) {
    (void)t, (void)n, (void)k, (void)s;
    v[0] = "{\"vocab_size\": 13, \"block_size\": 8, \"n_layer\": 2, "
           "\"n_head\": 5, \"n_embd\": 12, \"bias\": true, \"dropout\": 0, "
           "\"positional\": \"learned\"}";
}
static void e_huge(StWriteTensor *t, int *n, const char **k,
                   const char **v, float *s) {
    (void)t, (void)n, (void)k, (void)s;
    // 4096 layers, 7.7 million parameters, in a file of 4 thousand
    v[0] = "{\"vocab_size\": 13, \"block_size\": 8, \"n_layer\": 4096, "
           "\"n_head\": 2, \"n_embd\": 12, \"bias\": true, \"dropout\": 0, "
           "\"positional\": \"learned\"}";
}
static void e_long_table(StWriteTensor *t, int *n, const char **k,
                         const char **v, float *s) {
    (void)t, (void)n, (void)k, (void)s;
    // sinusoidal positions of 22369621 x 12 floats: a table of 1 GiB
    v[0] = "{\"vocab_size\": 13, \"block_size\": 22369621, \"n_layer\": 2, "
           "\"n_head\": 2, \"n_embd\": 12, \"bias\": true, \"dropout\": 0, "
           "\"positional\": \"sinusoidal\"}";
}
static void e_vocab(StWriteTensor *t, int *n, const char **k,
                    const char **v, float *s) {
    (void)t, (void)n, (void)k, (void)s;
    v[1] = "\n !,.:?aehos";   // 12 characters for vocab_size 13
}
static void e_order(StWriteTensor *t, int *n, const char **k,
                    const char **v, float *s) {
    (void)t, (void)n, (void)k, (void)s;
    v[1] = "\n !,.:?aehots";
}
static void e_noconfig(StWriteTensor *t, int *n, const char **k,
                       const char **v, float *s) {
    (void)t, (void)n, (void)v, (void)s;
    k[0] = "settings";
}
static void e_gelu(StWriteTensor *t, int *n, const char **k,
                   const char **v, float *s) {
    (void)t, (void)n, (void)k, (void)s;
    v[0] = "{\"vocab_size\": 13, \"block_size\": 8, \"n_layer\": 2, "
           "\"n_head\": 2, \"n_embd\": 12, \"bias\": true, \"dropout\": 0, "
           "\"positional\": \"learned\", \"gelu\": \"relu\"}";
}
static void e_gelu_type(StWriteTensor *t, int *n, const char **k,
                        const char **v, float *s) {
    (void)t, (void)n, (void)k, (void)s;
    v[0] = "{\"vocab_size\": 13, \"block_size\": 8, \"n_layer\": 2, "
           "\"n_head\": 2, \"n_embd\": 12, \"bias\": true, \"dropout\": 0, "
           "\"positional\": \"learned\", \"gelu\": 1}";
}

START_TEST(checkpoint_refusals) {
    // the unedited file loads, so each refusal below is the edit's doing
    Gpt m;
    Vocab v;
    load_case("bias", &m, &v);
    gpt_free(&m), vocab_free(&v);
    expect_refusal(e_missing, "transformer.h.0.attn.c_attn.bias is missing");
    expect_refusal(e_shape, "has shape [12, 36], the config needs [36, 12]");
    expect_refusal(e_head, "lm_head.weight differs");
    expect_refusal(e_extra, "\"transformer.h.0.attn.bias\" is not part");
    expect_refusal(e_nan, "holds nan at element 2");
    expect_refusal(e_config, "config metadata: JSON");
    expect_refusal(e_heads, "n_head=5");
    // refused for its size, before a model of that size is allocated
    expect_refusal(e_huge, "the config describes a model of 7717140 "
                   "parameters, the file's F32 tensors hold 4044 values");
    expect_refusal(e_vocab, "vocab metadata has 12 characters");
    expect_refusal(e_order, "(U+0073) is out of order");
    expect_refusal(e_noconfig, "no \"config\"");
    expect_refusal(e_gelu, "\"gelu\" must be \"exact\" or \"tanh\"");
    expect_refusal(e_gelu_type, "\"gelu\" must be \"exact\" or \"tanh\"");
    Error err;
    ck_assert_int_eq(checkpoint_load("no/such/file.safetensors", &m, &v,
                                     &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "no/such/file.safetensors"));
    (void)e_none;
}
END_TEST

// The FFN's GELU in checkpoints: files written before the key existed
// (PyTorch's, tests/reference/ch5_*.safetensors, have no "gelu") load
// with the exact form, the one they were made with; a tanh model saves
// "gelu": "tanh" and loads back as tanh; an exact one says so too.
START_TEST(checkpoint_gelu_key) {
    for (int c = 0; c < 3; c++) {
        Gpt m;
        Vocab v;
        load_case(CASES[c], &m, &v);
        ck_assert_int_eq(m.cfg.act, GELU_EXACT);
        gpt_free(&m), vocab_free(&v);
    }
    make_tmpdir();
    char path[128];
    snprintf(path, sizeof path, "%s/m.safetensors", tmpdir);
    for (int k = 0; k < 2; k++) {
        Activation act = k ? GELU_TANH : GELU_EXACT;
        Gpt m, back;
        Vocab v, vb;
        load_case("sin", &m, &v);
        m.cfg.act = act;
        Error err;
        ck_assert_msg(checkpoint_save(path, &m, &v, &err) == 0, "%s",
                      err.msg);
        StFile f;
        ck_assert_int_eq(st_load(&f, path, &err), 0);
        ck_assert_ptr_nonnull(strstr(st_meta(&f, "config"),
                                     k ? "\"gelu\": \"tanh\""
                                       : "\"gelu\": \"exact\""));
        st_free(&f);
        ck_assert_msg(checkpoint_load(path, &back, &vb, &err) == 0, "%s",
                      err.msg);
        ck_assert_int_eq(back.cfg.act, act);
        GptConfig peek;
        ck_assert_int_eq(checkpoint_peek(path, &peek, NULL, &err), 0);
        ck_assert_int_eq(peek.act, act);
        gpt_free(&m), gpt_free(&back);
        vocab_free(&v), vocab_free(&vb);
    }
    remove_tmpdir("m.safetensors");
}
END_TEST

// The sinusoidal table is in no tensor, so its size is not bounded by the
// file's: a config whose table would take 1 GiB must be refused before
// the table is made (by the cap on block_size; and the loader checks a
// file's tensors before it builds the table of any block). With 512 MiB of data allowed, making the
// 1 GiB table would end the test ("out of memory"); not under ASan.
START_TEST(checkpoint_refused_before_the_table) {
    if (!limit_data_memory((size_t)512 << 20)) return;
    expect_refusal(e_long_table, "too large: block_size 22369621 > 65536");
}
END_TEST

START_TEST(checkpoint_save_is_atomic) {
    Gpt m;
    Vocab v;
    load_case("nobias", &m, &v);
    Error err;
    // a vocabulary that does not match: refused before anything is written
    make_tmpdir();
    char path[128];
    snprintf(path, sizeof path, "%s/m.safetensors", tmpdir);
    ck_assert_int_eq(checkpoint_save(path, &m, &v, &err), 0);
    Vocab small = {v.chars, 3};
    ck_assert_int_eq(checkpoint_save(path, &m, &small, &err), -1);
    Gpt back;
    Vocab vb;
    ck_assert_int_eq(checkpoint_load(path, &back, &vb, &err), 0);  // intact
    gpt_free(&back), vocab_free(&vb);
    ck_assert_int_eq(checkpoint_save("/nonexistent-dir/m.safetensors", &m,
                                     &v, &err), -1);
    gpt_free(&m), vocab_free(&v);
    remove_tmpdir("m.safetensors");
}
END_TEST

// ---- generation -----------------------------------------------------------------

static int *gen(const Gpt *m, const int *prompt, int np, GenOptions o,
                GenStats *st) {
    int *out = xmalloc((size_t)(np + o.max_new_tokens) * sizeof *out);
    Error err;
    ck_assert_msg(generate(m, prompt, np, out, &o, NULL, NULL, st, &err)
                  == 0, "%s", err.msg);
    return out;
}

// The KV cache must not change the text: the same seed gives the same
// tokens with and without it, for both window policies, well past
// block_size (8 here), with each sampling option.
START_TEST(kv_cache_gives_the_same_text) {
    const SampleOptions samplings[] = {
        {1.0f, 0, 1.0f}, {0.0f, 0, 1.0f}, {0.8f, 4, 1.0f}, {1.3f, 0, 0.7f}};
    for (int c = 0; c < 3; c++) {
        Gpt m;
        Vocab v;
        load_case(CASES[c], &m, &v);
        const int prompt[3] = {8, 1, 10};
        for (int s = 0; s < 4; s++)
            for (int w = 0; w < 2; w++) {
                GenOptions o = {.max_new_tokens = 40, .sample = samplings[s],
                                .seed = 7 + s, .use_cache = false,
                                .window = w ? WINDOW_EXACT : WINDOW_SLIDE};
                GenStats plain, cached;
                int *a = gen(&m, prompt, 3, o, &plain);
                o.use_cache = true;
                int *b = gen(&m, prompt, 3, o, &cached);
                for (int i = 0; i < 43; i++)
                    ck_assert_msg(a[i] == b[i], "%s, sampling %d, window %d:"
                                  " token %d differs (%d vs %d)", CASES[c],
                                  s, w, i, a[i], b[i]);
                ck_assert_int_eq(memcmp(a, prompt, sizeof prompt), 0);
                // without the cache every token is a full pass; with it
                // only the window changes cost one
                ck_assert_int_eq(plain.prefills, 40);
                ck_assert_int_lt(cached.prefills, w ? 40 : 12);
                free(a), free(b);
            }
        gpt_free(&m), vocab_free(&v);
    }
}
END_TEST

// The cached step runs the model's own GELU. The two forms differ by at
// most 5e-4, which moves few sampled tokens, so the FFNs are made to
// show nothing but that difference: c_fc's weights 0 and its biases 2.5
// (where the forms differ by 4.4e-4) make every FFN's output the same
// vector c_proj @ GELU(2.5) + c_proj.b, and c_proj.b cancels it for the
// exact GELU. With c_proj 10^4 times larger, a tanh model then adds a
// vector of order 1 to the stream in every block, and writes other text
// than the exact one (checked, so that the test can tell them apart). A
// tanh model must write the same text with the cache as without.
static void gelu_only_ffns(Gpt *m) {
    int C = m->cfg.n_embd, F = m->cfg.n_ffn;
    float *b = alloc_floats((size_t)F), *g = alloc_floats((size_t)F);
    for (int i = 0; i < F; i++) b[i] = 2.5f;
    gelu_forward(g, b, GELU_EXACT, (size_t)F);
    for (int l = 0; l < m->cfg.n_layer; l++) {
        BlockWeights *w = &m->w.h[l];
        memset(w->mlp_c_fc_w, 0, (size_t)F * C * sizeof(float));
        memcpy(w->mlp_c_fc_b, b, (size_t)F * sizeof(float));
        for (int i = 0; i < C * F; i++) w->mlp_c_proj_w[i] *= 1e4f;
        linear_forward(w->mlp_c_proj_b, g, w->mlp_c_proj_w, NULL, 1, F, C);
        for (int c = 0; c < C; c++) w->mlp_c_proj_b[c] *= -1.0f;
    }
    free(b), free(g);
}

START_TEST(kv_cache_follows_the_gelu) {
    const int prompt[3] = {8, 1, 10};
    int *text[2];
    for (int k = 0; k < 2; k++) {
        Gpt m;
        Vocab v;
        load_case("bias", &m, &v);
        m.cfg.act = k ? GELU_TANH : GELU_EXACT;
        gelu_only_ffns(&m);
        GenOptions o = {.max_new_tokens = 30, .sample = {1.0f, 0, 1.0f},
                        .seed = 3, .use_cache = false,
                        .window = WINDOW_SLIDE};
        text[k] = gen(&m, prompt, 3, o, NULL);
        o.use_cache = true;
        int *cached = gen(&m, prompt, 3, o, NULL);
        for (int i = 0; i < 33; i++)
            ck_assert_msg(text[k][i] == cached[i], "%s GELU: token %d "
                          "differs with the cache (%d vs %d)",
                          k ? "tanh" : "exact", i, cached[i], text[k][i]);
        free(cached);
        gpt_free(&m), vocab_free(&v);
    }
    ck_assert_msg(memcmp(text[0], text[1], 33 * sizeof(int)) != 0,
                  "exact and tanh GELU wrote the same text");
    free(text[0]), free(text[1]);
}
END_TEST

// The cached logits equal a full forward pass over the same window.
START_TEST(kv_cache_logits_match_forward) {
    Gpt m;
    Vocab v;
    load_case("bias", &m, &v);
    // greedy decoding from a prompt of 7: the 8th token comes from a
    // cached step; compare with gpt_forward on those 8 tokens
    const int prompt[7] = {3, 9, 12, 0, 5, 5, 1};
    GenOptions o = {.max_new_tokens = 2, .sample = {0, 0, 1}, .seed = 1,
                    .use_cache = true, .window = WINDOW_SLIDE};
    int *out = gen(&m, prompt, 7, o, NULL);
    GptActs a;
    Error err;
    ck_assert_int_eq(gpt_acts_alloc(&a, &m.cfg, 1, 8, &err), 0);
    ck_assert_int_eq(gpt_forward(&m, &a, out, NULL, 1, 8, false, NULL, NULL,
                                 &err), 0);
    // the greedy choices are the argmax of positions 6 and 7
    for (int t = 6; t < 8; t++) {
        const float *l = a.logits + t * m.cfg.vocab_size;
        int best = 0;
        for (int i = 1; i < m.cfg.vocab_size; i++)
            if (l[i] > l[best]) best = i;
        ck_assert_int_eq(out[t + 1], best);
    }
    free(out);
    gpt_acts_free(&a, &m.cfg);
    gpt_free(&m), vocab_free(&v);
}
END_TEST

// Runs a filter on a copy of in and compares with want exactly.
static void filter_case(const char *what, const float *in, int V, int k,
                        float p, const float *want) {
    Sampler s;
    sampler_init(&s, V);
    float x[8];
    memcpy(x, in, (size_t)V * sizeof *x);
    if (k) top_k_filter(x, V, k, &s);
    else top_p_filter(x, V, p, &s);
    for (int i = 0; i < V; i++)    // -inf (top-k) or 0 (top-p) exactly
        ck_assert_msg(isinf(want[i]) ? isinf(x[i]) && x[i] < 0
                      : fabsf(x[i] - want[i]) <= 1e-6f * want[i],
                      "%s: id %d is %g, want %g", what, i, x[i], want[i]);
    sampler_free(&s);
}

START_TEST(top_k_and_top_p_filters) {
    // top-k keeps the k largest logits and every logit equal to the k-th
    // (ties are all kept, as PyTorch's v[:, [-1]] comparison does); one
    // too many or too few changes the answer in each case
    const float I = INFINITY;
    const float a[5] = {1, 3, 2, 5, 4};
    filter_case("top-2", a, 5, 2, 0, (float[5]){-I, -I, -I, 5, 4});
    filter_case("top-3", a, 5, 3, 0, (float[5]){-I, 3, -I, 5, 4});
    filter_case("top-4", a, 5, 4, 0, (float[5]){-I, 3, 2, 5, 4});
    const float t[5] = {5, 2, 2, 2, 1};
    filter_case("top-2 with a three-way tie", t, 5, 2, 0,
                (float[5]){5, 2, 2, 2, -I});
    filter_case("top-1 of a tie for first", (float[3]){2, 2, 1}, 3, 1, 0,
                (float[3]){2, 2, -I});
    // top-p keeps the shortest most-likely prefix whose mass reaches p,
    // renormalised; sorted here: id 1 (0.4), id 3 (0.3), id 2 (0.2), 0
    const float q[4] = {0.1f, 0.4f, 0.2f, 0.3f};
    filter_case("top-p 0.35", q, 4, 0, 0.35f, (float[4]){0, 1, 0, 0});
    filter_case("top-p 0.65", q, 4, 0, 0.65f,
                (float[4]){0, 0.4f / 0.7f, 0, 0.3f / 0.7f});
    filter_case("top-p 0.75", q, 4, 0, 0.75f,
                (float[4]){0, 0.4f / 0.9f, 0.2f / 0.9f, 0.3f / 0.9f});
    // ties: the lower id first, so p = 0.5 keeps ids 0 and 1 of four
    // equal-by-pairs probabilities, p = 0.7 adds id 2 but not id 3
    const float e[4] = {0.3f, 0.3f, 0.2f, 0.2f};
    filter_case("top-p 0.5 of pairs", e, 4, 0, 0.5f,
                (float[4]){0.5f, 0.5f, 0, 0});
    filter_case("top-p 0.7 of pairs", e, 4, 0, 0.7f,
                (float[4]){0.375f, 0.375f, 0.25f, 0});
    // reached exactly: powers of two, so every sum is exact. 0.5 + 0.25
    // reaches p = 0.75, and the prefix ends there (a filter that goes
    // on while the mass is at most p keeps id 2 as well); just above
    // 0.75 it needs id 2
    const float h[4] = {0.25f, 0.5f, 0.125f, 0.125f};
    filter_case("top-p 0.75, reached exactly", h, 4, 0, 0.75f,
                (float[4]){1.0f / 3, 2.0f / 3, 0, 0});
    filter_case("top-p just above 0.75", h, 4, 0, nextafterf(0.75f, 1),
                (float[4]){0.25f / 0.875f, 0.5f / 0.875f, 0.125f / 0.875f,
                           0});
}
END_TEST

START_TEST(sampling_rules) {
    Sampler s;
    sampler_init(&s, 5);
    float logits[5] = {1, 3, 3, -1, 2};
    Rng r;
    rng_seed(&r, 55);
    SampleOptions greedy = {0, 0, 1};
    ck_assert_int_eq(sample_next(logits, &greedy, &s, &r), 1);  // lower id
    // top-k 1 at any temperature: only the maxima survive
    SampleOptions k1 = {5.0f, 1, 1};
    for (int i = 0; i < 50; i++) {
        int id = sample_next(logits, &k1, &s, &r);
        ck_assert(id == 1 || id == 2);
    }
    // top-p tiny: the single most likely (the lower id of a tie)
    SampleOptions p0 = {1.0f, 0, 1e-6f};
    for (int i = 0; i < 20; i++)
        ck_assert_int_eq(sample_next(logits, &p0, &s, &r), 1);
    // frequencies follow the softmax: 20000 draws of {0, ln 3}: 1/4, 3/4
    float two[5] = {0, logf(3), -INFINITY, -INFINITY, -INFINITY};
    SampleOptions plain = {1, 0, 1};
    int count = 0;
    for (int i = 0; i < 20000; i++) count += sample_next(two, &plain, &s,
                                                         &r) == 1;
    ck_assert_msg(abs(count - 15000) < 300, "%d of 20000", count);  // 5 sd
    Error err;
    SampleOptions bad = {-1, 0, 1};
    ck_assert_int_eq(sample_options_check(&bad, &err), -1);
    bad = (SampleOptions){1, 0, 0};
    ck_assert_int_eq(sample_options_check(&bad, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "top-p"));
    sampler_free(&s);
}
END_TEST

Suite *ch5_suite(void) {
    Suite *s = suite_create("ch5");
    TCase *tc = tcase_new("gpt", "ch5");
    tcase_add_loop_test(tc, gpt_matches_pytorch, 0, 3);
    tcase_add_test(tc, score_matches_pytorch);
    tcase_add_test(tc, embedding_backward_finite_differences);
    tcase_add_test(tc, embedding_scale);
    tcase_add_test(tc, crossentropy_finite_differences);
    tcase_add_test(tc, gpt_backward_finite_differences_with_dropout);
    tcase_add_test(tc, gpt_dropout_masks_each_place);
    tcase_add_test(tc, parameter_counts);
    tcase_add_test(tc, initialisation_statistics);
    tcase_add_test(tc, bad_configs_and_inputs);
    suite_add_tcase(s, tc);
    tc = tcase_new("checkpoint", "ch5");
    tcase_add_test(tc, checkpoint_round_trip);
    tcase_add_test(tc, checkpoint_refusals);
    tcase_add_test(tc, checkpoint_refused_before_the_table);
    tcase_add_test(tc, checkpoint_gelu_key);
    tcase_add_test(tc, checkpoint_save_is_atomic);
    suite_add_tcase(s, tc);
    tc = tcase_new("generate", "ch5");
    tcase_add_test(tc, kv_cache_gives_the_same_text);
    tcase_add_test(tc, kv_cache_logits_match_forward);
    tcase_add_test(tc, kv_cache_follows_the_gelu);
    tcase_add_test(tc, sampling_rules);
    tcase_add_test(tc, top_k_and_top_p_filters);
    suite_add_tcase(s, tc);
    return s;
}
