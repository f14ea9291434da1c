// Tests of chapter 7's whole model (seq2seq.c) against PyTorch and
// against finite differences. What each test catches:
//
// seq2seq_matches_pytorch (tests/reference/ch7_model.txt, written by
//   gen_ch7_model.py; a tied model with biases and ReLU, pad 0, and an
//   untied one without biases, GELU, pad 3, Vs != Vt; padding in both
//   source and target, S != T): the logits, the smoothed loss, the NLL
//   and every parameter's gradient. A missing sqrt(C), a sinusoid that is
//   not interleaved or starts at the wrong row, a mask built from the
//   wrong id or applied to the wrong attention, the wrong activation in
//   either stack, a missing final LayerNorm, a generator with a bias or
//   not transposed, eps/(V-1) smoothing, a loss that counts pads, a tied
//   gradient missing a share: each moves the logits, the loss or a
//   gradient far past the tolerances.
// seq2seq_training_matches_pytorch: ten AdamW steps (chapter 6's
//   adamw_update over m->tensors, decay by their flag) against
//   torch.optim.AdamW: the loss of every step and the final parameters. A
//   tied tensor listed (and so updated) three times, weight decay on the
//   wrong tensors, or tensors that overlap in params fail it.
// seq2seq_tied_is_three_shares: the tied model rebuilt untied with three
//   equal copies gives the same logits, bit for bit, and the sum of its
//   three gradients is the tied model's gradient, while no one share is
//   (a model that kept only the generator's, or only an embedding's,
//   share fails). C against C: it holds whatever the activation.
// seq2seq_wrong_versions_fail: the comparisons above can fail: the same
//   weights with the masks made from the wrong id (pad + 1: a model that
//   reads the pads), or with the other activation, do not match
//   PyTorch's logits. (seq2seq_backward_finite_differences also shows a
//   gradient 10% off failing its check.)
// seq2seq_dropout_masks_each_place: the model in training (dropout 0.3)
//   against the model rebuilt from its parts, each with p = 0, and the
//   masks that the forward pass recorded: both embeddings', every
//   encoder block's two (chapter 4's block_with_masks) and every decoder
//   layer's three; each a real dropout mask (a dropout left out records
//   all ones), no two the same. Leaving out any one of them (either
//   embedding's; the encoder's attention or FFN; the decoder's
//   self-attention, cross-attention or FFN; the encoder's or the
//   decoder's layers given none), each tried, fails it and passed every
//   other test: the backward pass uses whatever mask the forward pass
//   recorded. A mask applied after the residual add fails it too.
// seq2seq_train_passes_training_on: the TrainModel's forward hook in
//   training gives seq2seq_forward's loss with dropout (same seed, same
//   masks), out of training the loss without, and the two differ. A hook
//   that ignored the flag (./ch7 training without dropout) passed every
//   other test.
// seq2seq_backward_finite_differences: every gradient of small random
//   models (tied with biases and dropout, untied without biases with pad
//   2 and T > S) against central differences of the float loss, as
//   chapter 5 checks the whole GPT. ReLU is left to the PyTorch fixture:
//   its kink at 0 is sometimes within one step of a hidden unit.
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ch4/ch4_util.h"
#include "check_util.h"
#include "embedding.h"
#include "fixture.h"
#include "layernorm.h"
#include "linear.h"
#include "mem.h"
#include "optim.h"
#include "rng.h"
#include "seq2seq.h"
#include "seq2seq_train.h"
#include "threads.h"
#include "xattn.h"

#define FIXTURE "ch7_model.txt"
static const char *CASES[] = {"tied", "untied"};
enum { N_CASES = 2, STEPS = 10 };
// gen_ch7_model.py's AdamW
#define LR 1e-2f
#define WD 0.1f
static const AdamWConfig ADAMW = {0.9f, 0.95f, 1e-8f, WD};

static size_t numel(const GptTensor *t) {
    return (size_t)t->shape[0] * (t->ndim == 2 ? t->shape[1] : 1);
}

static double *to_double(const float *p, size_t n) {
    double *d = xmalloc(n * sizeof *d);
    for (size_t i = 0; i < n; i++) d[i] = p[i];
    return d;
}

// ---- a case of the fixture ------------------------------------------------

typedef struct {
    const char *name;
    Seq2SeqConfig cfg;
    float eps;
    int B, S, T;
    int *src, *tgt_in, *tgt_out;
} Case;

static int *fx_ids(const Fixture *f, const char *c, const char *what,
                   int *d0, int *d1) {
    char key[96];
    snprintf(key, sizeof key, "%s.%s", c, what);
    int dims[FIXTURE_MAX_DIMS];
    ck_assert_int_eq(fixture_dims(f, key, dims), 2);
    *d0 = dims[0], *d1 = dims[1];
    const float *p = fixture_get(f, key, dims, 2);
    int *ids = xmalloc((size_t)dims[0] * dims[1] * sizeof *ids);
    for (int i = 0; i < dims[0] * dims[1]; i++) ids[i] = (int)p[i];
    return ids;
}

static Case load_case(const Fixture *f, const char *name) {
    Case k = {.name = name};
    char key[96];
    snprintf(key, sizeof key, "%s.config", name);
    const int s12[1] = {12};
    const float *c = fixture_get(f, key, s12, 1);
    k.cfg = (Seq2SeqConfig){.src_vocab = (int)c[0], .tgt_vocab = (int)c[1],
                            .max_len = (int)c[2], .n_enc = (int)c[3],
                            .n_dec = (int)c[4], .n_head = (int)c[5],
                            .n_embd = (int)c[6], .n_ffn = (int)c[7],
                            .dropout = 0.0f, .bias = c[8] != 0,
                            .tie = c[9] != 0,
                            .act = c[10] == 0 ? RELU : GELU_EXACT,
                            .pad = (int)c[11]};
    snprintf(key, sizeof key, "%s.eps", name);
    k.eps = fixture_get(f, key, NULL, 0)[0];
    int b, t;
    k.src = fx_ids(f, name, "src", &k.B, &k.S);
    k.tgt_in = fx_ids(f, name, "tgt_in", &b, &k.T);
    ck_assert_int_eq(b, k.B);
    k.tgt_out = fx_ids(f, name, "tgt_out", &b, &t);
    ck_assert(b == k.B && t == k.T);
    return k;
}

static void case_free(Case *k) {
    free(k->src), free(k->tgt_in), free(k->tgt_out);
}

// The model of cfg with the fixture's tensors "<case>.<prefix><name>",
// copied by name; checks that the tensors tile params exactly.
static void load_params(Seq2Seq *m, const Fixture *f, const char *c,
                        const char *prefix) {
    size_t total = 0;
    for (int i = 0; i < m->n_tensors; i++) {
        const GptTensor *t = &m->tensors[i];
        char key[128];
        snprintf(key, sizeof key, "%s.%s%s", c, prefix, t->name);
        const float *p = fixture_get(f, key, t->shape, t->ndim);
        memcpy(m->params + t->offset, p, numel(t) * sizeof(float));
        ck_assert_msg(t->offset == total, "%s starts at %zu, not at %zu",
                      t->name, t->offset, total);
        ck_assert_msg(t->decay == (t->ndim == 2), "%s: decay flag",
                      t->name);
        total += numel(t);
    }
    ck_assert_uint_eq(total, m->num_params);
}

static void build(Seq2Seq *m, const Seq2SeqConfig *cfg) {
    Error err;
    ck_assert_msg(seq2seq_create(m, cfg, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(seq2seq_alloc_grads(m, &err), 0);
}

static void acts(Seq2SeqActs *a, const Case *k) {
    Error err;
    ck_assert_msg(seq2seq_acts_alloc(a, &k->cfg, k->B, k->S, k->T, &err)
                  == 0, "%s", err.msg);
}

static SmoothedLoss forward(const Seq2Seq *m, Seq2SeqActs *a,
                            const Case *k) {
    SmoothedLoss l;
    Error err;
    ck_assert_msg(seq2seq_forward(m, a, k->src, k->tgt_in, k->tgt_out, k->B,
                                  k->S, k->T, k->eps, false, NULL, &l, &err)
                  == 0, "%s", err.msg);
    return l;
}

// Whether got is within the tolerances of chapter 5's whole-model test
// (atol relative to the largest |want|), with the message in msg.
static bool grad_close(const char *what, const float *got, const float *want,
                       size_t n, char *msg, size_t size) {
    double big = 0;
    for (size_t j = 0; j < n; j++) big = fmax(big, fabs(want[j]));
    double *w = to_double(want, n);
    bool ok = tensor_close(what, got, w, n, 1e-6 * big, 1e-4, msg, size);
    free(w);
    return ok;
}

static bool logits_close(const Seq2SeqActs *a, const Fixture *f,
                         const Case *k, char *msg, size_t size) {
    char key[96];
    snprintf(key, sizeof key, "%s.logits", k->name);
    int V = k->cfg.tgt_vocab, shape[3] = {k->B, k->T, V};
    size_t n = (size_t)k->B * k->T * V;
    double *want = to_double(fixture_get(f, key, shape, 3), n);
    bool ok = tensor_close(key, seq2seq_logits(a), want, n, 1e-6, 1e-5, msg,
                           size);
    free(want);
    return ok;
}

// ---- parity with PyTorch ----------------------------------------------------

START_TEST(seq2seq_matches_pytorch) {
    Fixture *f = fixture_open(FIXTURE);
    Case k = load_case(f, CASES[_i]);
    Seq2Seq m;
    build(&m, &k.cfg);
    ck_assert_int_eq(m.n_tensors, k.cfg.tie ? 1 + 12 * 2 + 2 + 20 * 2 + 2
                                            : 3 + 6 * 1 + 1 + 10 * 2 + 1);
    load_params(&m, f, k.name, "param.");
    Seq2SeqActs a;
    acts(&a, &k);
    SmoothedLoss l = forward(&m, &a, &k);
    char msg[512], key[128];
    ck_assert_msg(logits_close(&a, f, &k, msg, sizeof msg), "%s", msg);
    int n_valid = 0;
    for (int i = 0; i < k.B * k.T; i++) n_valid += k.tgt_out[i] != k.cfg.pad;
    ck_assert_int_eq(l.n_valid, n_valid);
    snprintf(key, sizeof key, "%s.loss", k.name);
    double want = fixture_get(f, key, NULL, 0)[0];
    ck_assert_msg(fabs(l.loss - want) <= 1e-5 * want, "%s: %.9g, PyTorch "
                  "%.9g", key, l.loss, want);
    snprintf(key, sizeof key, "%s.nll", k.name);
    want = fixture_get(f, key, NULL, 0)[0];
    ck_assert_msg(fabs(l.nll - want) <= 1e-5 * want, "%s: %.9g, PyTorch "
                  "%.9g", key, l.nll, want);
    seq2seq_zero_grads(&m);
    seq2seq_backward(&m, &a);
    for (int i = 0; i < m.n_tensors; i++) {
        const GptTensor *t = &m.tensors[i];
        snprintf(key, sizeof key, "%s.grad.%s", k.name, t->name);
        const float *g = fixture_get(f, key, t->shape, t->ndim);
        ck_assert_msg(grad_close(key, m.grads + t->offset, g, numel(t), msg,
                                 sizeof msg), "%s", msg);
    }
    seq2seq_acts_free(&a, &k.cfg);
    seq2seq_free(&m);
    case_free(&k);
    fixture_free(f);
}
END_TEST

// The key part of a fused attention bias: rows C..2C-1 of c_attn.bias,
// rows 0..C-1 of cross_attn.kv_proj.bias; [*lo, *hi), or false.
static bool key_bias(const char *name, int C, int *lo, int *hi) {
    size_t n = strlen(name);
    const char *qkv = "attn.c_attn.bias", *kv = "cross_attn.kv_proj.bias";
    if (n >= strlen(qkv) && strcmp(name + n - strlen(qkv), qkv) == 0) {
        *lo = C, *hi = 2 * C;
        return true;
    }
    if (n >= strlen(kv) && strcmp(name + n - strlen(kv), kv) == 0) {
        *lo = 0, *hi = C;
        return true;
    }
    return false;
}

START_TEST(seq2seq_training_matches_pytorch) {
    Fixture *f = fixture_open(FIXTURE);
    Case k = load_case(f, CASES[_i]);
    Seq2Seq m;
    build(&m, &k.cfg);
    load_params(&m, f, k.name, "param.");
    Seq2SeqActs a;
    acts(&a, &k);
    float *mom = alloc_floats(m.num_params), *vel = alloc_floats(m.num_params);
    char key[128], msg[512];
    snprintf(key, sizeof key, "%s.train.loss", k.name);
    const int s10[1] = {STEPS};
    const float *losses = fixture_get(f, key, s10, 1);
    for (int s = 0; s < STEPS; s++) {
        seq2seq_zero_grads(&m);
        SmoothedLoss l = forward(&m, &a, &k);
        ck_assert_msg(fabs(l.loss - losses[s]) <= 1e-5 * losses[s],
                      "%s step %d: loss %.9g, PyTorch %.9g", k.name, s + 1,
                      l.loss, losses[s]);
        seq2seq_backward(&m, &a);
        for (int i = 0; i < m.n_tensors; i++) {
            const GptTensor *t = &m.tensors[i];
            size_t o = t->offset;
            adamw_update(m.params + o, m.grads + o, mom + o, vel + o,
                         numel(t), s + 1, LR, t->decay ? WD : 0.0f, &ADAMW);
        }
    }
    int C = k.cfg.n_embd;
    for (int i = 0; i < m.n_tensors; i++) {
        const GptTensor *t = &m.tensors[i];
        snprintf(key, sizeof key, "%s.train.param.%s", k.name, t->name);
        const float *want = fixture_get(f, key, t->shape, t->ndim);
        float *got = m.params + t->offset;
        int lo, hi;
        if (key_bias(t->name, C, &lo, &hi)) {
            // As in chapter 6's test: the key bias gets no gradient (q.b
            // is the same for every key of a row and the softmax cancels
            // it), only rounding noise, which AdamW turns into steps of
            // about lr either way. Those entries may wander 10 steps.
            for (int j = lo; j < hi; j++) {
                ck_assert_msg(fabsf(got[j] - want[j]) <= 2 * STEPS * LR,
                              "%s[%d] moved too far", key, j);
                got[j] = want[j];
            }
        }
        double big = 0;
        size_t n = numel(t);
        for (size_t j = 0; j < n; j++) big = fmax(big, fabs(want[j]));
        double *w = to_double(want, n);
        ck_assert_msg(tensor_close(key, got, w, n, 1e-5 * big, 1e-4, msg,
                                   sizeof msg), "%s", msg);
        free(w);
    }
    free(mom), free(vel);
    seq2seq_acts_free(&a, &k.cfg);
    seq2seq_free(&m);
    case_free(&k);
    fixture_free(f);
}
END_TEST

// ---- tying ------------------------------------------------------------------

START_TEST(seq2seq_tied_is_three_shares) {
    // the tied model, and the same weights untied in three equal copies
    Fixture *f = fixture_open(FIXTURE);
    Case k = load_case(f, "tied");
    ck_assert(k.cfg.tie);
    Seq2SeqConfig cu = k.cfg;
    cu.tie = false;
    Seq2Seq mt, mu;
    build(&mt, &k.cfg);
    load_params(&mt, f, k.name, "param.");
    build(&mu, &cu);
    for (int i = 0; i < mu.n_tensors; i++) {
        const GptTensor *t = &mu.tensors[i];
        char key[128];
        bool table = strcmp(t->name, "tgt_embed.weight") == 0
                     || strcmp(t->name, "generator.weight") == 0;
        snprintf(key, sizeof key, "tied.param.%s",
                 table ? "src_embed.weight" : t->name);
        memcpy(mu.params + t->offset, fixture_get(f, key, t->shape, t->ndim),
               numel(t) * sizeof(float));
    }
    Seq2SeqActs at, au;
    acts(&at, &k);
    acts(&au, &k);
    forward(&mt, &at, &k);
    forward(&mu, &au, &k);
    size_t nl = (size_t)k.B * k.T * k.cfg.tgt_vocab;
    char msg[512];
    double *lt = to_double(seq2seq_logits(&at), nl);
    ck_assert_msg(tensor_close("untied copies' logits", seq2seq_logits(&au),
                               lt, nl, 0, 0, msg, sizeof msg), "%s", msg);
    free(lt);
    seq2seq_zero_grads(&mt);
    seq2seq_backward(&mt, &at);
    seq2seq_zero_grads(&mu);
    seq2seq_backward(&mu, &au);
    size_t n = (size_t)cu.src_vocab * cu.n_embd;
    const float *want = mt.g.src_embed;
    const float *share[3] = {mu.g.src_embed, mu.g.tgt_embed, mu.g.generator};
    float *sum = alloc_floats(n);
    for (size_t j = 0; j < n; j++)
        sum[j] = share[0][j] + share[1][j] + share[2][j];
    ck_assert_msg(grad_close("sum of the three shares", sum, want, n, msg,
                             sizeof msg), "%s", msg);
    for (int s = 0; s < 3; s++)
        ck_assert_msg(!grad_close("one share", share[s], want, n, msg,
                                  sizeof msg), "share %d alone passes", s);
    free(sum);
    seq2seq_acts_free(&at, &k.cfg);
    seq2seq_acts_free(&au, &cu);
    seq2seq_free(&mt);
    seq2seq_free(&mu);
    case_free(&k);
    fixture_free(f);
}
END_TEST

// ---- the comparisons can fail -----------------------------------------------

START_TEST(seq2seq_wrong_versions_fail) {
    Fixture *f = fixture_open(FIXTURE);
    for (int c = 0; c < N_CASES; c++) {
        Case k = load_case(f, CASES[c]);
        char msg[512];
        // (1) masks made from the wrong id (the one after pad): the
        // pads are read and some real tokens hidden
        Seq2SeqConfig wrong[2] = {k.cfg, k.cfg};
        wrong[0].pad = k.cfg.pad + 1;
        // (2) the other activation in every FFN
        wrong[1].act = k.cfg.act == RELU ? GELU_EXACT : RELU;
        for (int w = 0; w < 2; w++) {
            Case kw = k;
            kw.cfg = wrong[w];
            Seq2Seq m;
            build(&m, &kw.cfg);
            load_params(&m, f, k.name, "param.");
            Seq2SeqActs a;
            acts(&a, &kw);
            forward(&m, &a, &kw);
            ck_assert_msg(!logits_close(&a, f, &kw, msg, sizeof msg),
                          "%s: wrong version %d matches PyTorch", k.name, w);
            seq2seq_acts_free(&a, &kw.cfg);
            seq2seq_free(&m);
        }
        case_free(&k);
    }
    fixture_free(f);
}
END_TEST

// ---- finite differences -----------------------------------------------------

typedef struct {
    Seq2Seq *m;
    Seq2SeqActs *a;
    const Case *k;
    bool train;
} FdCtx;

static double fd_loss(void *p) {
    FdCtx *c = p;
    Rng r;
    rng_seed(&r, 71);   // the same dropout masks at every evaluation
    SmoothedLoss l;
    Error err;
    ck_assert_msg(seq2seq_forward(c->m, c->a, c->k->src, c->k->tgt_in,
                                  c->k->tgt_out, c->k->B, c->k->S, c->k->T,
                                  c->k->eps, c->train, &r, &l, &err) == 0,
                  "%s", err.msg);
    return l.loss;
}

// Sources and targets with pads after the end, in both.
// tied: V 7, pad 0, B 2, S 4, T 3
static const int FD_SRC_A[8] = {3, 5, 1, 0, 6, 2, 2, 4};
static const int FD_IN_A[6] = {1, 4, 0, 1, 6, 5};
static const int FD_OUT_A[6] = {4, 2, 0, 6, 5, 2};
// untied: Vs 8, Vt 5, pad 2, B 2, S 3, T 5
static const int FD_SRC_B[6] = {7, 0, 2, 5, 4, 1};
static const int FD_IN_B[10] = {0, 3, 4, 1, 2, 0, 4, 2, 2, 2};
static const int FD_OUT_B[10] = {3, 4, 1, 1, 2, 4, 1, 2, 2, 2};

static Case fd_case(int which) {
    Case k = {.eps = 0.1f};
    if (which == 0) {
        k.name = "tied, bias, dropout";
        k.cfg = (Seq2SeqConfig){.src_vocab = 7, .tgt_vocab = 7, .max_len = 5,
                                .n_enc = 1, .n_dec = 2, .n_head = 3,
                                .n_embd = 6, .n_ffn = 7, .dropout = 0.1f,
                                .bias = true, .tie = true,
                                .act = GELU_EXACT, .pad = 0};
        k.B = 2, k.S = 4, k.T = 3;
        k.src = (int *)FD_SRC_A, k.tgt_in = (int *)FD_IN_A;
        k.tgt_out = (int *)FD_OUT_A;
    } else {
        k.name = "untied, no bias, pad 2";
        k.cfg = (Seq2SeqConfig){.src_vocab = 8, .tgt_vocab = 5, .max_len = 6,
                                .n_enc = 2, .n_dec = 1, .n_head = 2,
                                .n_embd = 4, .n_ffn = 6, .dropout = 0.0f,
                                .bias = false, .tie = false,
                                .act = GELU_TANH, .pad = 2};
        k.B = 2, k.S = 3, k.T = 5;
        k.src = (int *)FD_SRC_B, k.tgt_in = (int *)FD_IN_B;
        k.tgt_out = (int *)FD_OUT_B;
    }
    return k;
}

// chapter 5's whole-model tolerances
#define FD_EPS 1e-2
#define FD_ATOL 2e-4
#define FD_RTOL 3e-2

START_TEST(seq2seq_backward_finite_differences) {
    ThreadCounts prev = threads_set(1);   // tiny products: one thread
    Case k = fd_case(_i);
    Seq2Seq m;
    build(&m, &k.cfg);
    Rng r;
    rng_seed(&r, 72 + _i);
    rng_normal_fill(&r, m.params, m.num_params, 0, 0.4f);
    Seq2SeqActs a;
    acts(&a, &k);
    FdCtx ctx = {&m, &a, &k, k.cfg.dropout > 0};
    fd_loss(&ctx);
    seq2seq_zero_grads(&m);
    seq2seq_backward(&m, &a);
    for (int i = 0; i < m.n_tensors; i++) {
        const GptTensor *t = &m.tensors[i];
        char what[128];
        snprintf(what, sizeof what, "%s: %s", k.name, t->name);
        ck_assert_grad(what, fd_loss, &ctx, m.params + t->offset,
                       m.grads + t->offset, numel(t), FD_EPS, FD_ATOL,
                       FD_RTOL);
    }
    // and the check can fail: the gradient of the tensor holding the
    // largest one, 10% off
    const GptTensor *t = &m.tensors[0];
    float most = 0;
    for (int i = 0; i < m.n_tensors; i++)
        for (size_t j = 0; j < numel(&m.tensors[i]); j++)
            if (fabsf(m.grads[m.tensors[i].offset + j]) > most)
                most = fabsf(m.grads[m.tensors[i].offset + j]),
                t = &m.tensors[i];
    float *bad = alloc_floats(numel(t));
    for (size_t j = 0; j < numel(t); j++)
        bad[j] = 1.1f * m.grads[t->offset + j];
    char msg[512];
    ck_assert_msg(!grad_check("10% off", fd_loss, &ctx,
                              m.params + t->offset, bad, numel(t), FD_EPS,
                              FD_ATOL, FD_RTOL, msg, sizeof msg),
                  "%s: 10%% off passes", t->name);
    free(bad);
    seq2seq_acts_free(&a, &k.cfg);
    seq2seq_free(&m);
    threads_restore(prev);
}
END_TEST

// ---- where dropout goes -----------------------------------------------------

// One decoder layer from its parts, each with p = 0, and the masks given
// for its three sub-layers' outputs:
//   res1 = x + self_attn(ln_1(x)) * m_self                causal, tgt_mask
//   res2 = res1 + cross_attn(ln_2(res1), memory) * m_cross     src_mask
//   out  = res2 + mlp(ln_3(res2)) * m_mlp
static void decoder_with_masks(float *out, const float *x,
                               const float *memory, const DecoderWeights *w,
                               const int *tgt_mask, const int *src_mask,
                               Activation act, const float *m_self,
                               const float *m_cross, const float *m_mlp,
                               int B, int T, int S, int C, int NH, int F) {
    size_t n = (size_t)B * T * C, bt = (size_t)B * T;
    float *h = alloc_floats(n), *y = alloc_floats(n);
    float *res1 = alloc_floats(n), *res2 = alloc_floats(n);
    float *mean = alloc_floats(bt), *rstd = alloc_floats(bt);
    MhaCache mc;
    XattnCache xc;
    FfnCache fc;
    Error err;
    ck_assert_msg(mha_cache_alloc(&mc, B, T, C, NH, &err) == 0
                  && xattn_cache_alloc(&xc, B, T, S, C, NH, &err) == 0
                  && ffn_cache_alloc(&fc, B, T, C, F, &err) == 0, "%s",
                  err.msg);
    layernorm_forward(h, mean, rstd, x, w->ln_1_w, w->ln_1_b, B, T, C);
    ck_assert_msg(mha_forward(y, &mc, h, w->self_attn_c_attn_w,
                              w->self_attn_c_attn_b, w->self_attn_c_proj_w,
                              w->self_attn_c_proj_b, tgt_mask, true, B, T, C,
                              NH, &err) == 0, "%s", err.msg);
    add_masked(res1, x, y, m_self, n);
    layernorm_forward(h, mean, rstd, res1, w->ln_2_w, w->ln_2_b, B, T, C);
    ck_assert_msg(xattn_forward(y, &xc, h, memory, w->cross_attn_q_proj_w,
                                w->cross_attn_q_proj_b,
                                w->cross_attn_kv_proj_w,
                                w->cross_attn_kv_proj_b,
                                w->cross_attn_out_proj_w,
                                w->cross_attn_out_proj_b, src_mask, B, T, S,
                                C, NH, &err) == 0, "%s", err.msg);
    add_masked(res2, res1, y, m_cross, n);
    layernorm_forward(h, mean, rstd, res2, w->ln_3_w, w->ln_3_b, B, T, C);
    ck_assert_msg(ffn_forward(y, &fc, h, w->mlp_c_fc_w, w->mlp_c_fc_b,
                              w->mlp_c_proj_w, w->mlp_c_proj_b, act, B, T, C,
                              F, &err) == 0, "%s", err.msg);
    add_masked(out, res2, y, m_mlp, n);
    mha_cache_free(&mc);
    xattn_cache_free(&xc);
    ffn_cache_free(&fc);
    free(h), free(y), free(res1), free(res2), free(mean), free(rstd);
}

// x (B, T, C) = dropout(embed[ids] * sqrt(C) + sinusoid), with the mask
// given, as seq2seq.c's embeddings.
static void embed_with_mask(float *x, const int *ids, const float *table,
                            const Seq2Seq *m, const float *mask, int B,
                            int T) {
    int C = m->cfg.n_embd;
    embedding_forward(x, ids, table, sqrtf((float)C), m->pos_table, B, T, C);
    for (size_t i = 0; i < (size_t)B * T * C; i++) x[i] *= mask[i];
}

// The whole model with dropout 0.3 in training, against the model from
// its parts and the masks its forward pass recorded (see the top). The
// rebuilt model runs the same functions on the same numbers in the same
// order, so the logits agree to the last bit; the tolerance, 1e-6, only
// leaves room for another order of the same sums, while a mask applied
// after the residual add instead moves every logit, by up to 1 here.
START_TEST(seq2seq_dropout_masks_each_place) {
    enum { B = 2, S = 5, T = 4, V = 9, LE = 2, LD = 2 };
    for (int k = 0; k < 2; k++) {   // tied, ReLU, pad 0; untied, GELU, pad 2
        Seq2SeqConfig cfg = seq2seq_config_default(V, 8);
        cfg.n_enc = LE, cfg.n_dec = LD, cfg.n_embd = 8, cfg.n_head = 2;
        cfg.n_ffn = 12, cfg.dropout = 0.3f;
        if (k == 1) cfg.tie = false, cfg.act = GELU_EXACT, cfg.pad = 2;
        int C = cfg.n_embd, NH = cfg.n_head, F = cfg.n_ffn, P = cfg.pad;
        const int src[B * S] = {3, 4, 5, P, P, 6, 7, 8, 3, 4};
        const int tin[B * T] = {1, 5, 6, P, 1, 3, 4, 7};
        Seq2Seq m;
        Error err;
        ck_assert_int_eq(seq2seq_create(&m, &cfg, &err), 0);
        Rng r;
        rng_seed(&r, 90 + k);
        rng_normal_fill(&r, m.params, m.num_params, 0, 0.4f);
        Seq2SeqActs a;
        ck_assert_int_eq(seq2seq_acts_alloc(&a, &cfg, B, S, T, &err), 0);
        rng_seed(&r, 92 + k);
        ck_assert_msg(seq2seq_forward(&m, &a, src, tin, NULL, B, S, T, 0.0f,
                                      true, &r, NULL, &err) == 0, "%s",
                      err.msg);
        // every mask a dropout mask, no two the same
        size_t ns = (size_t)B * S * C, nt = (size_t)B * T * C;
        const float *ms[1 + 2 * LE] = {a.src_drop};
        const float *mt[1 + 3 * LD] = {a.tgt_drop};
        ck_dropout_mask("the source embeddings' mask", a.src_drop, ns, 0.3f);
        ck_dropout_mask("the target embeddings' mask", a.tgt_drop, nt, 0.3f);
        for (int l = 0; l < LE; l++) {
            const BlockCache *c = &a.enc[l];
            char what[64];
            snprintf(what, sizeof what, "encoder %d: the attention's", l);
            ck_dropout_mask(what, c->sa.mask, ns, 0.3f);
            snprintf(what, sizeof what, "encoder %d: the FFN's", l);
            ck_dropout_mask(what, c->ff.mask, ns, 0.3f);
            ms[1 + 2 * l] = c->sa.mask, ms[2 + 2 * l] = c->ff.mask;
        }
        for (int l = 0; l < LD; l++) {
            const DecoderCache *c = &a.dec[l];
            char what[64];
            snprintf(what, sizeof what, "decoder %d: self-attention's", l);
            ck_dropout_mask(what, c->sa.mask, nt, 0.3f);
            snprintf(what, sizeof what, "decoder %d: cross-attention's", l);
            ck_dropout_mask(what, c->ca.mask, nt, 0.3f);
            snprintf(what, sizeof what, "decoder %d: the FFN's", l);
            ck_dropout_mask(what, c->ff.mask, nt, 0.3f);
            mt[1 + 3 * l] = c->sa.mask, mt[2 + 3 * l] = c->ca.mask;
            mt[3 + 3 * l] = c->ff.mask;
        }
        ck_masks_differ("the source side", ms, 1 + 2 * LE, ns);
        ck_masks_differ("the target side", mt, 1 + 3 * LD, nt);
        // the model again, from its parts (S > T: the buffers of the
        // source's stream hold the target's too)
        int src_mask[B * S], tgt_mask[B * T];
        for (int i = 0; i < B * S; i++) src_mask[i] = src[i] != P;
        for (int i = 0; i < B * T; i++) tgt_mask[i] = tin[i] != P;
        float *x = alloc_floats(ns), *y = alloc_floats(ns);
        float *mem = alloc_floats(ns), mean[B * S], rstd[B * S];
        embed_with_mask(x, src, m.w.src_embed, &m, a.src_drop, B, S);
        for (int l = 0; l < LE; l++) {
            block_with_masks(y, x, &m.w.enc[l], src_mask, false, cfg.act,
                             false, a.enc[l].sa.mask, a.enc[l].ff.mask, B, S,
                             C, NH, F);
            float *t = x;
            x = y, y = t;
        }
        layernorm_forward(mem, mean, rstd, x, m.w.enc_ln_w, m.w.enc_ln_b, B,
                          S, C);
        embed_with_mask(x, tin, m.w.tgt_embed, &m, a.tgt_drop, B, T);
        for (int l = 0; l < LD; l++) {
            const DecoderCache *c = &a.dec[l];
            decoder_with_masks(y, x, mem, &m.w.dec[l], tgt_mask, src_mask,
                               cfg.act, c->sa.mask, c->ca.mask, c->ff.mask,
                               B, T, S, C, NH, F);
            float *t = x;
            x = y, y = t;
        }
        float *logits = alloc_floats((size_t)B * T * V);
        layernorm_forward(y, mean, rstd, x, m.w.dec_ln_w, m.w.dec_ln_b, B, T,
                          C);
        linear_forward(logits, y, m.w.generator, NULL, B * T, C, V);
        ck_assert_close_f(k ? "logits, untied" : "logits, tied",
                          seq2seq_logits(&a), logits, (size_t)B * T * V,
                          1e-6, 1e-6);
        free(x), free(y), free(mem), free(logits);
        seq2seq_acts_free(&a, &cfg);
        seq2seq_free(&m);
    }
}
END_TEST

// ---- the masks, through the whole model ------------------------------------

// A padded source token changes no logit (bit for bit), and target token
// t+1 changes no logit at positions up to t. Catches an encoder or a
// cross-attention that ignores the source mask, a decoder self-attention
// that is not causal, and masks made from the wrong sequence.
START_TEST(seq2seq_masks_hold_through_the_model) {
    enum { B = 2, S = 6, T = 5, V = 9 };
    Seq2SeqConfig cfg = seq2seq_config_default(V, 8);
    cfg.n_embd = 8, cfg.n_head = 2, cfg.n_ffn = 12;
    Seq2Seq m;
    Error err;
    ck_assert_int_eq(seq2seq_create(&m, &cfg, &err), 0);
    Rng r;
    rng_seed(&r, 77);
    seq2seq_init(&m, &r);
    Seq2SeqActs a;
    ck_assert_int_eq(seq2seq_acts_alloc(&a, &cfg, B, S, T, &err), 0);
    const int src[B * S] = {3, 4, 5, 6, 0, 0, 7, 8, 3, 0, 0, 0};
    const int tin[B * T] = {1, 5, 6, 7, 8, 1, 3, 4, 0, 0};
    size_t nl = (size_t)B * T * V;
    float *base = xmalloc(nl * sizeof *base);
    ck_assert_int_eq(seq2seq_forward(&m, &a, src, tin, NULL, B, S, T, 0,
                                     false, NULL, NULL, &err), 0);
    memcpy(base, seq2seq_logits(&a), nl * sizeof *base);
    int src2[B * S], tin2[B * T];
    memcpy(src2, src, sizeof src);
    memcpy(tin2, tin, sizeof tin);
    // 1. a padded token is the pad id, so all it carries is the pad id's
    // embedding row: change that row, and no logit of a real target
    // position moves (but the pad class's own logit, since the tied
    // generator holds the same row)
    float *pad_row = m.w.src_embed + (size_t)cfg.pad * cfg.n_embd;
    float keep = pad_row[0];
    pad_row[0] += 3.0f;
    ck_assert_int_eq(seq2seq_forward(&m, &a, src, tin, NULL, B, S, T, 0,
                                     false, NULL, NULL, &err), 0);
    const float *lg = seq2seq_logits(&a);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            if (tin[b * T + t] != cfg.pad)   // rows that read real tokens
                for (int v = 1; v < V; v++) {
                    size_t i = ((size_t)b * T + t) * V + v;
                    ck_assert_msg(lg[i] == base[i], "the pad row's "
                                  "embedding reached logit [%d,%d,%d]", b, t,
                                  v);
                }
    pad_row[0] = keep;
    // 2. causality: change target token t+1, positions <= t keep their
    // logits exactly
    for (int t = 0; t + 1 < T; t++) {
        memcpy(tin2, tin, sizeof tin);
        tin2[t + 1] = tin2[t + 1] == 5 ? 6 : 5;
        ck_assert_int_eq(seq2seq_forward(&m, &a, src2, tin2, NULL, B, S, T,
                                         0, false, NULL, NULL, &err), 0);
        lg = seq2seq_logits(&a);
        for (int u = 0; u <= t; u++)
            for (int v = 0; v < V; v++) {
                size_t i = (size_t)u * V + v;   // sentence 0
                ck_assert_msg(lg[i] == base[i], "target token %d changed "
                              "the logits of position %d", t + 1, u);
            }
        int changed = 0;
        for (int v = 0; v < V; v++)
            changed += lg[(size_t)(t + 1) * V + v] != base[(size_t)(t + 1)
                                                          * V + v];
        ck_assert_msg(changed > 0, "token %d changed nothing at its own "
                      "position", t + 1);
    }
    // 3. the source reaches the decoder: a real source token changes the
    // logits of its sentence, and of no other
    src2[1] = 8;
    ck_assert_int_eq(seq2seq_forward(&m, &a, src2, tin, NULL, B, S, T, 0,
                                     false, NULL, NULL, &err), 0);
    lg = seq2seq_logits(&a);
    ck_assert(memcmp(lg, base, (size_t)T * V * sizeof *lg) != 0);
    ck_assert(memcmp(lg + (size_t)T * V, base + (size_t)T * V,
                     (size_t)T * V * sizeof *lg) == 0);
    free(base);
    seq2seq_acts_free(&a, &cfg);
    seq2seq_free(&m);
}
END_TEST

// ---- capacities in tokens ---------------------------------------------------

// The batches (B, S, T) run in activations for B=4 x S=12 source and
// B=4 x T=16 target tokens: more rows of shorter sentences, and fewer.
static const int CAP_SHAPES[4][3] = {
    {16, 3, 4}, {8, 6, 8}, {4, 12, 16}, {1, 12, 16}};

// B rows of L ids, row b real for its first L - b % 3 positions (at
// least 1) and pad after; ids drawn from seed, never pad.
static void cap_ids(int *ids, int B, int L, int V, int pad, uint64_t seed) {
    Rng r;
    rng_seed(&r, seed);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < L; t++) {
            int id = (pad + 1 + (int)(rng_uniform(&r) * (V - 1))) % V;
            ids[b * L + t] = t < L - b % 3 ? id : pad;
        }
}

// A model with dropout (so the masks' layout counts too) and its config.
static Seq2SeqConfig cap_config(void) {
    Seq2SeqConfig cfg = seq2seq_config_default(9, 16);
    cfg.n_embd = 8, cfg.n_head = 2, cfg.n_ffn = 12, cfg.dropout = 0.1f;
    return cfg;
}

// One training forward and backward pass of a batch in a: the loss, and
// the logits and gradients copied out.
static SmoothedLoss cap_run(Seq2Seq *m, Seq2SeqActs *a, const int *src,
                            const int *in, const int *out, int B, int S,
                            int T, float *logits, float *grads) {
    Rng r;
    rng_seed(&r, 31);
    SmoothedLoss l;
    Error err;
    ck_assert_msg(seq2seq_forward(m, a, src, in, out, B, S, T, 0.1f, true,
                                  &r, &l, &err) == 0, "%s", err.msg);
    seq2seq_zero_grads(m);
    seq2seq_backward(m, a);
    memcpy(logits, seq2seq_logits(a),
           (size_t)B * T * m->cfg.tgt_vocab * sizeof(float));
    memcpy(grads, m->grads, m->num_params * sizeof(float));
    return l;
}

// The whole model, forward and backward, in activations for 4 x 12
// source and 4 x 16 target tokens, batch after batch in the same memory,
// bit for bit as in activations allocated for each batch: the loss, the
// logits, every gradient. A batch of more tokens or longer sentences is
// refused, and seq2seq_acts_floats counts the memory of the capacity.
START_TEST(seq2seq_capacity_in_tokens) {
    Seq2SeqConfig cfg = cap_config();
    Seq2Seq m;
    build(&m, &cfg);
    Rng r;
    rng_seed(&r, 81);
    rng_normal_fill(&r, m.params, m.num_params, 0, 0.4f);
    Seq2SeqActs big;
    Error err;
    ck_assert_msg(seq2seq_acts_alloc(&big, &cfg, 4, 12, 16, &err) == 0,
                  "%s", err.msg);
    int V = cfg.tgt_vocab;
    float *wg = alloc_floats(m.num_params), *g = alloc_floats(m.num_params);
    for (int i = 0; i < 4; i++) {
        int B = CAP_SHAPES[i][0], S = CAP_SHAPES[i][1], T = CAP_SHAPES[i][2];
        int *src = malloc((size_t)B * S * sizeof *src);
        int *in = malloc((size_t)B * T * sizeof *in);
        int *out = malloc((size_t)B * T * sizeof *out);
        cap_ids(src, B, S, cfg.src_vocab, cfg.pad, 10 + (uint64_t)i);
        cap_ids(in, B, T, V, cfg.pad, 20 + (uint64_t)i);
        cap_ids(out, B, T, V, cfg.pad, 30 + (uint64_t)i);
        size_t nl = (size_t)B * T * V;
        float *wl = alloc_floats(nl), *l = alloc_floats(nl);
        Seq2SeqActs exact;
        ck_assert_msg(seq2seq_acts_alloc(&exact, &cfg, B, S, T, &err) == 0,
                      "%s", err.msg);
        SmoothedLoss want = cap_run(&m, &exact, src, in, out, B, S, T, wl,
                                    wg);
        SmoothedLoss got = cap_run(&m, &big, src, in, out, B, S, T, l, g);
        ck_assert_float_eq(got.loss, want.loss);
        ck_assert_float_eq(got.nll, want.nll);
        ck_assert_msg(memcmp(l, wl, nl * sizeof(float)) == 0
                      && memcmp(g, wg, m.num_params * sizeof(float)) == 0,
                      "B=%d S=%d T=%d differs", B, S, T);
        seq2seq_acts_free(&exact, &cfg);
        free(wl), free(l), free(src), free(in), free(out);
    }
    // 8 x 7 = 56 source tokens, 5 x 16 = 80 target ones, a source of 13
    int *ids = calloc(16 * 16, sizeof *ids);
    for (int i = 0; i < 16 * 16; i++) ids[i] = 3;
    const int over[3][3] = {{8, 7, 8}, {5, 2, 16}, {1, 13, 4}};
    for (int k = 0; k < 3; k++)
        ck_assert_int_eq(seq2seq_forward(&m, &big, ids, ids, ids, over[k][0],
                                         over[k][1], over[k][2], 0, false,
                                         NULL, NULL, &err), -1);
    ck_assert_str_eq(err.msg, "model: the activations cannot hold B=1 S=13 "
                     "T=4: they hold B*S=48 source tokens of at most S=12 "
                     "and B*T=64 target tokens of at most T=16");
    ck_assert_int_eq(seq2seq_forward(&m, &big, ids, ids, ids, 8, 7, 8, 0,
                                     false, NULL, NULL, &err), -1);
    ck_assert_msg(strstr(err.msg, "cannot hold B=8 S=7 T=8") != NULL, "%s",
                  err.msg);
    free(ids), free(wg), free(g);
    // the memory check counts the capacity, which covers what each batch
    // it takes would need in activations of its own
    for (int i = 0; i < 4; i++)
        ck_assert_uint_le(seq2seq_acts_floats(&cfg, CAP_SHAPES[i][0],
                                              CAP_SHAPES[i][1],
                                              CAP_SHAPES[i][2]),
                          seq2seq_acts_floats(&cfg, 4, 12, 16));
    seq2seq_acts_free(&big, &cfg);
    seq2seq_free(&m);
}
END_TEST

// A PairSource that hands out the batches of CAP_SHAPES in turn (next
// counts them), the ids of cap_ids; or, with too_big, a batch of more
// tokens than the capacity.
typedef struct {
    int *next;
    bool too_big;
    int V, pad;
} CapSource;

static int cap_fill(const void *self, Rng *rng, int *src, int *tgt_in,
                    int *tgt_out, int *B, int *S, int *T, Error *err) {
    const CapSource *c = self;
    (void)rng, (void)err;
    const int *shape = CAP_SHAPES[*c->next % 4];
    ck_assert(*B == 4 && *S == 12 && *T == 16);    // the capacity
    *B = c->too_big ? 17 : shape[0], *S = shape[1], *T = shape[2];
    if (c->too_big) return 0;
    uint64_t i = (uint64_t)(*c->next)++;
    cap_ids(src, *B, *S, c->V, c->pad, 10 + i);
    cap_ids(tgt_in, *B, *T, c->V, c->pad, 20 + i);
    cap_ids(tgt_out, *B, *T, c->V, c->pad, 30 + i);
    return 0;
}

// Seq2SeqTrain runs each batch at the sizes its source returned: the
// loss and gradients of seq2seq_forward/backward on that batch in its
// own activations. A source that breaks the contract is an error.
START_TEST(seq2seq_train_takes_the_sources_sizes) {
    Seq2SeqConfig cfg = cap_config();
    cfg.dropout = 0.0f;
    Seq2Seq m, ref;
    build(&m, &cfg);
    build(&ref, &cfg);
    Rng r;
    rng_seed(&r, 82);
    rng_normal_fill(&r, m.params, m.num_params, 0, 0.4f);
    memcpy(ref.params, m.params, m.num_params * sizeof(float));
    Seq2SeqTrain g;
    Error err;
    ck_assert_msg(seq2seq_train_init(&g, &m, 4, 12, 16, 0.1f, &err) == 0,
                  "%s", err.msg);
    TrainModel tm = seq2seq_train_model(&g);
    int next = 0;
    CapSource cs = {&next, false, cfg.tgt_vocab, cfg.pad};
    PairSource ps = {&cs, cap_fill};
    float *wl = alloc_floats((size_t)16 * 4 * cfg.tgt_vocab * 4);
    float *wg = alloc_floats(ref.num_params);
    for (int i = 0; i < 4; i++) {
        int B = CAP_SHAPES[i][0], S = CAP_SHAPES[i][1], T = CAP_SHAPES[i][2];
        ck_assert_msg(tm.batch(tm.self, &ps, &r, &err) == 0, "%s", err.msg);
        ck_assert(g.cur_B == B && g.cur_S == S && g.cur_T == T);
        float loss;
        ck_assert_msg(tm.forward(tm.self, false, &r, &loss, &err) == 0, "%s",
                      err.msg);
        tm.backward(tm.self);
        Seq2SeqActs exact;
        ck_assert_int_eq(seq2seq_acts_alloc(&exact, &cfg, B, S, T, &err), 0);
        SmoothedLoss want = cap_run(&ref, &exact, g.src, g.tgt_in,
                                    g.tgt_out, B, S, T, wl, wg);
        ck_assert_float_eq(loss, want.loss);
        ck_assert_msg(memcmp(g.model.grads, wg,
                             ref.num_params * sizeof(float)) == 0,
                      "B=%d S=%d T=%d: gradients differ", B, S, T);
        seq2seq_acts_free(&exact, &cfg);
    }
    cs.too_big = true;
    ck_assert_int_eq(tm.batch(tm.self, &ps, &r, &err), -1);
    ck_assert_str_eq(err.msg, "pair source: a batch of B=17 S=3 T=4 does "
                     "not fit the capacity B=4 S=12 T=16 (at most B*S=48 "
                     "and B*T=64 tokens)");
    free(wl), free(wg);
    seq2seq_free(&ref);
    seq2seq_train_free(&g);
}
END_TEST

// The TrainModel passes training on: its forward hook in training is
// seq2seq_forward with dropout (the same loss for the same seed: the same
// masks), out of training it is without, and the two differ. A hook that
// dropped the flag, so that ./ch7 would train without dropout, passed
// every other test.
START_TEST(seq2seq_train_passes_training_on) {
    Seq2SeqConfig cfg = cap_config();   // dropout 0.1
    Seq2Seq m, ref;
    build(&m, &cfg);
    build(&ref, &cfg);
    Rng r;
    rng_seed(&r, 84);
    rng_normal_fill(&r, m.params, m.num_params, 0, 0.4f);
    memcpy(ref.params, m.params, m.num_params * sizeof(float));
    Seq2SeqTrain g;
    Error err;
    ck_assert_msg(seq2seq_train_init(&g, &m, 4, 12, 16, 0.1f, &err) == 0,
                  "%s", err.msg);
    TrainModel tm = seq2seq_train_model(&g);
    int next = 2;   // the batch of 4 x 12 and 4 x 16 tokens
    CapSource cs = {&next, false, cfg.tgt_vocab, cfg.pad};
    PairSource ps = {&cs, cap_fill};
    ck_assert_msg(tm.batch(tm.self, &ps, &r, &err) == 0, "%s", err.msg);
    int B = g.cur_B, S = g.cur_S, T = g.cur_T;
    float train, eval;
    Rng d;
    rng_seed(&d, 31);   // cap_run's seed
    ck_assert_msg(tm.forward(tm.self, true, &d, &train, &err) == 0
                  && tm.forward(tm.self, false, NULL, &eval, &err) == 0,
                  "%s", err.msg);
    Seq2SeqActs exact;
    ck_assert_int_eq(seq2seq_acts_alloc(&exact, &cfg, B, S, T, &err), 0);
    float *wl = alloc_floats((size_t)B * T * cfg.tgt_vocab);
    float *wg = alloc_floats(ref.num_params);
    SmoothedLoss want = cap_run(&ref, &exact, g.src, g.tgt_in, g.tgt_out, B,
                                S, T, wl, wg);
    SmoothedLoss plain;
    ck_assert_msg(seq2seq_forward(&ref, &exact, g.src, g.tgt_in, g.tgt_out,
                                  B, S, T, 0.1f, false, NULL, &plain, &err)
                  == 0, "%s", err.msg);
    ck_assert_msg(train == want.loss && eval == plain.loss && train != eval,
                  "the hook's loss in training %.9g, with dropout %.9g; out "
                  "of training %.9g, without %.9g", train, want.loss, eval,
                  plain.loss);
    free(wl), free(wg);
    seq2seq_acts_free(&exact, &cfg);
    seq2seq_free(&ref);
    seq2seq_train_free(&g);
}
END_TEST

Suite *ch7_model_suite(void) {
    Suite *s = suite_create("ch7_model");
    TCase *tc = tcase_new("seq2seq", "ch7");
    tcase_add_loop_test(tc, seq2seq_matches_pytorch, 0, N_CASES);
    tcase_add_loop_test(tc, seq2seq_training_matches_pytorch, 0, N_CASES);
    tcase_add_test(tc, seq2seq_tied_is_three_shares);
    tcase_add_test(tc, seq2seq_wrong_versions_fail);
    tcase_add_test(tc, seq2seq_masks_hold_through_the_model);
    tcase_add_test(tc, seq2seq_dropout_masks_each_place);
    tcase_add_loop_test(tc, seq2seq_backward_finite_differences, 0, 2);
    tcase_add_test(tc, seq2seq_capacity_in_tokens);
    tcase_add_test(tc, seq2seq_train_takes_the_sources_sizes);
    tcase_add_test(tc, seq2seq_train_passes_training_on);
    suite_add_tcase(s, tc);
    return s;
}
