#include "gpt.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crossentropy.h"
#include "dropout.h"
#include "embedding.h"
#include "layernorm.h"
#include "layout.h"
#include "linear.h"
#include "mem.h"
#include "parallel.h"
#include "positional.h"
#include "profile.h"

// Every check of a batch before the forward pass (with the memory, below).
static int check_batch(const Gpt *m, const GptActs *a, const int *idx,
                       const int *targets, int B, int T, Error *err);

// ---- forward ---------------------------------------------------------------

// Embeddings and the blocks; returns the stream after the last block.
static const float *stack_forward(const Gpt *m, GptActs *a, const int *idx,
                                  int B, int T, float p, Rng *rng,
                                  Error *err) {
    const GptConfig *c = &m->cfg;
    int C = c->n_embd, NH = c->n_head, F = c->n_ffn;
    size_t btc = (size_t)B * T * C;
    const float *pos = m->w.wpe ? m->w.wpe : m->pos_table;
    PROFILE(PROF_EMBED, embedding_forward(a->x0, idx, m->w.wte, 1.0f, pos,
                                          B, T, C));
    int rc;
    PROFILE(PROF_ELEMENTWISE,
            rc = dropout_forward(a->x0, a->emb_mask, a->x0, p, rng, btc, err));
    if (rc != 0) return NULL;
    const float *x = a->x0;
    for (int l = 0; l < c->n_layer; l++) {
        float *out = a->res + l * btc;
        if (block_forward(out, &a->blocks[l], x, &m->w.h[l], NULL, true,
                          c->act, p, rng, B, T, C, NH, F, err) != 0)
            return NULL;
        x = out;
    }
    a->cur_B = B, a->cur_T = T, a->dropout_p = p;
    return x;
}

//> gpt-forward
int gpt_forward(const Gpt *m, GptActs *a, const int *idx,
                const int *targets, int B, int T, bool train, Rng *rng,
                float *loss, Error *err) {
    const GptConfig *c = &m->cfg;
    int C = c->n_embd, V = c->vocab_size;
    if (check_batch(m, a, idx, targets, B, T, err) != 0) return -1;
    float p = train ? c->dropout : 0.0f;
    const float *x = stack_forward(m, a, idx, B, T, p, rng, err);
    if (!x) return -1;
    PROFILE(PROF_NORM, layernorm_forward(a->lnf, a->lnf_mean, a->lnf_rstd,
                                         x, m->w.ln_f_w, m->w.ln_f_b, B, T,
                                         C));
    // The head is the embedding matrix: logits = lnf @ wte^T.
    PROFILE(PROF_MATMUL, linear_forward(a->logits, a->lnf, m->w.wte, NULL,
                                        B * T, C, V));
    a->n_targets = 0;
    if (targets) {
        float l;
        PROFILE(PROF_LOSS, l = crossentropy_forward(a->logits, targets,
                                                    B * T, V,
                                                    &a->n_targets));
        if (loss) *loss = l;
    }
    return 0;
}
//< gpt-forward

int gpt_forward_last(const Gpt *m, GptActs *a, const int *idx, int T,
                     float *logits, Error *err) {
    const GptConfig *c = &m->cfg;
    int C = c->n_embd;
    if (check_batch(m, a, idx, NULL, 1, T, err) != 0) return -1;
    const float *x = stack_forward(m, a, idx, 1, T, 0.0f, NULL, err);
    if (!x) return -1;
    // Only the last position predicts the next token: normalise and
    // project that one row, not all T.
    layernorm_forward(a->lnf, a->lnf_mean, a->lnf_rstd,
                      x + (size_t)(T - 1) * C, m->w.ln_f_w, m->w.ln_f_b, 1,
                      1, C);
    linear_forward(logits, a->lnf, m->w.wte, NULL, 1, C, c->vocab_size);
    return 0;
}

// ---- backward --------------------------------------------------------------

//> gpt-backward
void gpt_backward(Gpt *m, GptActs *a, const int *idx, const int *targets) {
    const GptConfig *c = &m->cfg;
    int B = a->cur_B, T = a->cur_T, C = c->n_embd, V = c->vocab_size;
    int NH = c->n_head, F = c->n_ffn, L = c->n_layer;
    size_t btc = (size_t)B * T * C;
    if (a->n_targets == 0) return;   // nothing to learn from
    // loss -> logits: softmax minus one-hot, divided by the count
    PROFILE_BW(PROF_LOSS, crossentropy_backward(a->dlogits, a->logits,
                                                targets, B * T, V,
                                                1.0f / a->n_targets));
    // logits = lnf @ wte^T: the head's share of wte's gradient, and dlnf
    float *dlnf = a->dx2;
    memset(dlnf, 0, btc * sizeof *dlnf);
    PROFILE_BW(PROF_MATMUL, linear_backward(dlnf, m->g.wte, NULL, a->dlogits,
                                            a->lnf, m->w.wte, B * T, C, V));
    // ln_f, then the blocks from the top down; dx is the gradient of the
    // stream entering the layer being worked on.
    const float *top = L > 0 ? a->res + (size_t)(L - 1) * btc : a->x0;
    float *dx = a->dx;
    memset(dx, 0, btc * sizeof *dx);
    PROFILE_BW(PROF_NORM, layernorm_backward(dx, m->g.ln_f_w, m->g.ln_f_b,
                                             dlnf, top, m->w.ln_f_w,
                                             a->lnf_mean, a->lnf_rstd, B, T,
                                             C));
    float *dprev = a->dx2;
    for (int l = L - 1; l >= 0; l--) {
        const float *inp = l > 0 ? a->res + (size_t)(l - 1) * btc : a->x0;
        memset(dprev, 0, btc * sizeof *dprev);
        block_backward(dprev, &m->g.h[l], &a->scratch, dx, &a->blocks[l],
                       inp, &m->w.h[l], B, T, C, NH, F);
        float *t = dx;
        dx = dprev, dprev = t;
    }
    // the embedding dropout, then the embedding: the second share of wte
    if (a->dropout_p > 0) {
        memset(dprev, 0, btc * sizeof *dprev);
        PROFILE_BW(PROF_ELEMENTWISE,
                   dropout_backward(dprev, dx, a->emb_mask, btc));
        dx = dprev;
    }
    PROFILE_BW(PROF_EMBED, embedding_backward(m->g.wte, m->g.wpe, dx, idx,
                                              1.0f, B, T, C));
}
//< gpt-backward

// ---- scoring a text --------------------------------------------------------

// The windows gpt_score runs at once: 16, or fewer in a short text.
static int score_batch(size_t n, int T) {
    size_t windows = n > (size_t)T ? (n - 1) / T : 1;
    return windows < 16 ? (int)windows : 16;
}

size_t gpt_score_floats(const GptConfig *cfg, size_t n) {
    int B = score_batch(n, cfg->block_size), T = cfg->block_size;
    return gpt_acts_floats(cfg, B, T) + mem_floats((size_t)B * T
                                                   * sizeof(int));
}

//> score
// The mean next-character loss over the text's non-overlapping windows:
// x = ids[i .. i+T-1], y = ids[i+1 .. i+T] for i = 0, T, 2T, ... while
// i + T + 1 <= n, with T = block_size.
int gpt_score(const Gpt *m, const int *ids, size_t n, double *loss,
              Error *err) {
    int T = m->cfg.block_size;
    if (n < (size_t)T + 1)
        return error_set(err, "scoring: the text has %zu characters; "
                         "scoring needs at least block_size + 1 = %d", n,
                         T + 1);
    int B = score_batch(n, T);
    size_t windows = (n - 1) / T;
    GptActs a;
    if (gpt_acts_alloc(&a, &m->cfg, B, T, err) != 0) return -1;
    int *y = xmalloc((size_t)B * T * sizeof *y);
    double total = 0;
    for (size_t w = 0; w < windows; w += (size_t)B) {
        int b = windows - w < (size_t)B ? (int)(windows - w) : B;
        const int *x = ids + w * T;      // b windows, back to back
        for (long i = 0; i < (long)b * T; i++) y[i] = x[i + 1];
        float l;
        if (gpt_forward(m, &a, x, y, b, T, false, NULL, &l, err) != 0) {
            free(y);
            gpt_acts_free(&a, &m->cfg);
            return -1;
        }
        total += (double)l * b;          // every window has T targets
    }
    *loss = total / (double)windows;
    free(y);
    gpt_acts_free(&a, &m->cfg);
    return 0;
}
//< score

// ---- the configuration -----------------------------------------------------

GptConfig gpt_config_default(int vocab_size) {
    return (GptConfig){.vocab_size = vocab_size, .block_size = 128,
                       .n_layer = 4, .n_head = 4, .n_embd = 128,
                       .n_ffn = 512,
                       .dropout = 0.1f, .bias = false,
                       .positional = POS_LEARNED, .act = GELU_EXACT};
}

int gpt_ffn_width(int n_embd) {
    return n_embd <= INT32_MAX / 4 ? 4 * n_embd : INT32_MAX;
}

const char *pos_kind_name(PosKind k) {
    return k == POS_SINUSOIDAL ? "sinusoidal" : "learned";
}

int pos_kind_parse(const char *s, PosKind *out) {
    if (strcmp(s, "learned") == 0) *out = POS_LEARNED;
    else if (strcmp(s, "sinusoidal") == 0) *out = POS_SINUSOIDAL;
    else return -1;
    return 0;
}

int gelu_kind_parse(const char *s, Activation *out) {
    if (strcmp(s, activation_name(GELU_EXACT)) == 0) *out = GELU_EXACT;
    else if (strcmp(s, activation_name(GELU_TANH)) == 0) *out = GELU_TANH;
    else return -1;
    return 0;
}

int gpt_config_check(const GptConfig *cfg, Error *err) {
    const struct { const char *name; int value; } sizes[] = {
        {"vocab_size", cfg->vocab_size}, {"block_size", cfg->block_size},
        {"n_layer", cfg->n_layer}, {"n_head", cfg->n_head},
        {"n_embd", cfg->n_embd}, {"n_ffn", cfg->n_ffn}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i].value < 1)
            return error_set(err, "model config: %s must be at least 1, "
                             "got %d", sizes[i].name, sizes[i].value);
    if (cfg->n_embd % cfg->n_head != 0)
        return error_set(err, "model config: n_embd=%d does not split into "
                         "n_head=%d heads", cfg->n_embd, cfg->n_head);
    if (!(cfg->dropout >= 0 && cfg->dropout < 1))
        return error_set(err, "model config: dropout must be in [0, 1), "
                         "got %g", cfg->dropout);
    // Keep every tensor (the largest is 4C x C, or V x C) and every index
    // comfortably inside an int's range of elements. A block past 65536
    // could never run (its attention scores alone, T x T, would take 16
    // GiB a head), and capping it bounds the sinusoidal table, which a
    // loaded model builds without its file holding it.
    const int64_t limit = INT32_MAX / 8;
    int64_t c = cfg->n_embd;
    const struct { const char *what; int64_t n, max; } rules[] = {
        {"n_embd", c, 65536}, {"n_layer", cfg->n_layer, 4096},
        {"block_size", cfg->block_size, 65536},
        {"n_embd x n_ffn", c * cfg->n_ffn, limit},
        {"n_embd x vocab_size", c * cfg->vocab_size, limit},
        {"n_embd x block_size", c * cfg->block_size, limit}};
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (rules[i].n > rules[i].max)
            return error_set(err, "model config: too large: %s %lld > "
                             "%lld", rules[i].what, (long long)rules[i].n,
                             (long long)rules[i].max);
    if (cfg->positional != POS_LEARNED && cfg->positional != POS_SINUSOIDAL)
        return error_set(err, "model config: unknown positional kind %d",
                         (int)cfg->positional);
    if (cfg->act != GELU_EXACT && cfg->act != GELU_TANH)
        return error_set(err, "model config: the FFN's activation must be "
                         "a GELU, exact or tanh, not %s",
                         cfg->act == RELU ? "ReLU" : "an unknown kind");
    return 0;
}

//> param-count
size_t gpt_param_count(const GptConfig *cfg) {
    size_t V = cfg->vocab_size, C = cfg->n_embd, L = cfg->n_layer;
    size_t n = V * C;                                   // wte = lm_head
    if (cfg->positional == POS_LEARNED) n += (size_t)cfg->block_size * C;
    n += L * block_param_count((int)C, cfg->n_ffn, cfg->bias);
    n += cfg->bias ? 2 * C : C;                         // ln_f
    return n;
}
//< param-count

// ---- the parameters as views -----------------------------------------------

// Points the views of w into buf, in nanoGPT's state_dict order, and
// returns the end of the last one.
static float *weights_point(GptWeights *w, float *buf, const GptConfig *c) {
    size_t C = (size_t)c->n_embd, bias = c->bias ? 1 : 0;
    size_t wpe = c->positional == POS_LEARNED ? (size_t)c->block_size * C : 0;
    const Slot head[2] = {{&w->wte, (size_t)c->vocab_size * C},
                          {&w->wpe, wpe}};
    buf = layout_point(head, 2, buf);
    for (int l = 0; l < c->n_layer; l++)
        buf = block_weights_point(&w->h[l], buf, c->n_embd, c->n_ffn,
                                  c->bias);
    const Slot tail[2] = {{&w->ln_f_w, C}, {&w->ln_f_b, bias * C}};
    return layout_point(tail, 2, buf);
}

void tensor_list_add(GptTensor *list, int *n, const float *params,
                     const char *name, const float *data, int ndim, int d0,
                     int d1) {
    GptTensor *t = &list[(*n)++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->offset = (size_t)(data - params);
    t->ndim = ndim;
    t->shape[0] = d0;
    t->shape[1] = ndim == 2 ? d1 : 0;
    t->decay = ndim == 2;
}

static void add_tensor(Gpt *m, const char *name, const float *data, int ndim,
                       int d0, int d1) {
    tensor_list_add(m->tensors, &m->n_tensors, m->params, name, data, ndim,
                    d0, d1);
}

static void list_tensors(Gpt *m) {
    const GptConfig *c = &m->cfg;
    int C = c->n_embd;
    add_tensor(m, "transformer.wte.weight", m->w.wte, 2, c->vocab_size, C);
    if (m->w.wpe)
        add_tensor(m, "transformer.wpe.weight", m->w.wpe, 2, c->block_size,
                   C);
    for (int l = 0; l < c->n_layer; l++) {
        BlockTensor bt[BLOCK_MAX_TENSORS];
        int n = block_tensors(bt, &m->w.h[l], C, c->n_ffn);
        for (int i = 0; i < n; i++) {
            char name[64];
            snprintf(name, sizeof name, "transformer.h.%d.%s", l,
                     bt[i].name);
            add_tensor(m, name, bt[i].data, bt[i].ndim, bt[i].shape[0],
                       bt[i].shape[1]);
        }
    }
    add_tensor(m, "transformer.ln_f.weight", m->w.ln_f_w, 1, C, 0);
    if (m->w.ln_f_b)
        add_tensor(m, "transformer.ln_f.bias", m->w.ln_f_b, 1, C, 0);
}

size_t gpt_max_tensors(int L) {
    return 4 + (size_t)BLOCK_MAX_TENSORS * (size_t)L;
}

size_t gpt_model_floats(const GptConfig *cfg) {
    Gpt m;
    size_t L = (size_t)cfg->n_layer, n = gpt_param_count(cfg);
    if (cfg->positional == POS_SINUSOIDAL)
        n += (size_t)cfg->block_size * cfg->n_embd;
    return n + mem_floats(gpt_max_tensors(cfg->n_layer) * sizeof *m.tensors
                          + 2 * L * sizeof *m.w.h);
}

int gpt_create(Gpt *m, const GptConfig *cfg, Error *err) {
    memset(m, 0, sizeof *m);
    if (gpt_config_check(cfg, err) != 0) return -1;
    m->cfg = *cfg;
    m->num_params = gpt_param_count(cfg);
    m->params = alloc_floats(m->num_params);
    m->w.h = xcalloc((size_t)cfg->n_layer, sizeof *m->w.h);
    m->g.h = xcalloc((size_t)cfg->n_layer, sizeof *m->g.h);
    float *end = weights_point(&m->w, m->params, cfg);
    if ((size_t)(end - m->params) != m->num_params)
        die("gpt_create: the layout (%zu) and the count (%zu) disagree",
            (size_t)(end - m->params), m->num_params);
    m->tensors = xcalloc(gpt_max_tensors(cfg->n_layer), sizeof *m->tensors);
    list_tensors(m);
    if (cfg->positional == POS_SINUSOIDAL) {
        m->pos_table = alloc_floats((size_t)cfg->block_size * cfg->n_embd);
        sinusoidal_table(m->pos_table, cfg->block_size, cfg->n_embd);
    }
    return 0;
}

int gpt_alloc_grads(Gpt *m, Error *err) {
    (void)err;  // allocation failures end the program (mem.h)
    if (!m->grads) {
        m->grads = alloc_floats(m->num_params);
        weights_point(&m->g, m->grads, &m->cfg);
    }
    return 0;
}

void gpt_zero_grads(Gpt *m) {
    if (m->grads) zero_floats(m->grads, m->num_params);
}

void gpt_free(Gpt *m) {
    free(m->params);
    free(m->grads);
    free(m->w.h);
    free(m->g.h);
    free(m->tensors);
    free(m->pos_table);
    memset(m, 0, sizeof *m);
}

//> gpt-init
void gpt_init(Gpt *m, Rng *rng) {
    const float std = 0.02f;
    // GPT-2's scaled init: each block adds two projections to the residual
    // stream, so 2L of them add up; dividing their std by sqrt(2L) keeps
    // the stream's variance from growing with depth.
    const float resid_std = std / sqrtf(2.0f * m->cfg.n_layer);
    for (int i = 0; i < m->n_tensors; i++) {
        const GptTensor *t = &m->tensors[i];
        float *p = m->params + t->offset;
        size_t n = (size_t)t->shape[0] * (t->ndim == 2 ? t->shape[1] : 1);
        const char *name = t->name;
        size_t len = strlen(name);
        bool is_bias = len > 5 && strcmp(name + len - 5, ".bias") == 0;
        bool is_ln = strstr(name, "ln_") != NULL;
        if (is_bias) {
            memset(p, 0, n * sizeof *p);
        } else if (is_ln) {
            for (size_t j = 0; j < n; j++) p[j] = 1.0f;
        } else {
            bool resid = strstr(name, "c_proj.weight") != NULL;
            rng_normal_fill(rng, p, n, 0.0f, resid ? resid_std : std);
        }
    }
}
//< gpt-init

// ---- activations -----------------------------------------------------------

// The model's own activation views for B x T tokens (the blocks' apart).
static int acts_slots(Slot t[10], GptActs *a, const GptConfig *c, int B,
                      int T) {
    size_t bt = (size_t)B * T, btc = bt * c->n_embd;
    size_t btv = bt * c->vocab_size, L = (size_t)c->n_layer;
    const Slot all[10] = {
        {&a->x0, btc},       {&a->emb_mask, btc}, {&a->res, L * btc},
        {&a->lnf, btc},      {&a->dx, btc},       {&a->dx2, btc},
        {&a->lnf_mean, bt},  {&a->lnf_rstd, bt},  {&a->logits, btv},
        {&a->dlogits, btv},
    };
    memcpy(t, all, sizeof all);
    return 10;
}

// Layers run one after another: without dropout, the all-ones masks of
// every layer are layer 0's.
static bool shares_masks(const GptConfig *c) { return c->dropout == 0; }

size_t gpt_acts_floats(const GptConfig *c, int B, int T) {
    GptActs a;
    Slot t[10];
    int C = c->n_embd, NH = c->n_head, F = c->n_ffn;
    size_t n = layout_floats(t, acts_slots(t, &a, c, B, T));
    n += block_cache_floats(B, T, C, NH, F, false);    // layer 0
    n += (size_t)(c->n_layer > 1 ? c->n_layer - 1 : 0)
         * block_cache_floats(B, T, C, NH, F, shares_masks(c));
    n += mem_floats((size_t)c->n_layer * sizeof *a.blocks);
    return n + block_scratch_floats(B, T, C, NH, F);
}

int gpt_acts_alloc(GptActs *a, const GptConfig *cfg, int B, int T,
                   Error *err) {
    memset(a, 0, sizeof *a);
    if (gpt_config_check(cfg, err) != 0) return -1;
    if (B < 1 || T < 1 || T > cfg->block_size)
        return error_set(err, "model: cannot hold B=%d sequences of T=%d "
                         "tokens (block_size %d)", B, T, cfg->block_size);
    int C = cfg->n_embd, L = cfg->n_layer, NH = cfg->n_head, F = cfg->n_ffn;
    a->blocks = xcalloc((size_t)L, sizeof *a->blocks);
    for (int l = 0; l < L; l++) {
        if (block_cache_alloc(&a->blocks[l], B, T, C, NH, F, err) != 0) {
            gpt_acts_free(a, cfg);
            return -1;
        }
        // at once: what it gives up is then never held for more than one
        // layer (gpt_acts_floats counts the shared masks)
        if (l > 0 && shares_masks(cfg))
            block_cache_share_masks(&a->blocks[l], &a->blocks[0]);
    }
    if (block_scratch_alloc(&a->scratch, B, T, C, NH, F, err) != 0) {
        gpt_acts_free(a, cfg);
        return -1;
    }
    Slot t[10];
    a->mem = layout_alloc(t, acts_slots(t, a, cfg, B, T));
    a->B = B, a->T = T;
    return 0;
}

void gpt_acts_free(GptActs *a, const GptConfig *cfg) {
    if (a->blocks)
        for (int l = 0; l < cfg->n_layer; l++)
            block_cache_free(&a->blocks[l]);
    free(a->blocks);
    block_scratch_free(&a->scratch);
    free(a->mem);
    memset(a, 0, sizeof *a);
}

static int check_batch(const Gpt *m, const GptActs *a, const int *idx,
                       const int *targets, int B, int T, Error *err) {
    const GptConfig *c = &m->cfg;
    if (T < 1 || T > c->block_size)
        return error_set(err, "model: sequence of %d tokens, the model "
                         "takes 1 to block_size=%d", T, c->block_size);
    if (B < 1 || B > a->B || T > a->T)
        return error_set(err, "model: B=%d T=%d does not fit activations "
                         "allocated for B<=%d T<=%d", B, T, a->B, a->T);
    return gpt_check_tokens(c, idx, targets, (size_t)B * T, err);
}

int gpt_check_tokens(const GptConfig *c, const int *idx, const int *targets,
                     size_t n, Error *err) {
    for (size_t i = 0; i < n; i++) {
        if (idx[i] < 0 || idx[i] >= c->vocab_size)
            return error_set(err, "model: token id %d at position %zu is "
                             "outside the vocabulary [0, %d)", idx[i], i,
                             c->vocab_size);
        if (targets && (targets[i] < -1 || targets[i] >= c->vocab_size))
            return error_set(err, "model: target %d at position %zu is "
                             "neither -1 nor in [0, %d)", targets[i], i,
                             c->vocab_size);
    }
    return 0;
}

