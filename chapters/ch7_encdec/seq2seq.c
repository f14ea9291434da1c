#include "seq2seq.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dropout.h"
#include "embedding.h"
#include "layernorm.h"
#include "layout.h"
#include "linear.h"
#include "mem.h"
#include "positional.h"
#include "profile.h"

// Every check of a batch before the forward pass (with the memory, below).
static int check_batch(const Seq2Seq *m, const Seq2SeqActs *a,
                       const int *src, const int *tgt_in,
                       const int *tgt_out, int B, int S, int T, float eps,
                       Error *err);

// ---- forward ---------------------------------------------------------------

//> seq2seq-embed
// x = dropout(embed[ids] * sqrt(C) + pe[t]): the same for both stacks.
static int embed(float *x, float *drop, const int *ids, const float *table,
                 const Seq2Seq *m, float p, Rng *rng, int B, int T,
                 Error *err) {
    int C = m->cfg.n_embd;
    PROFILE(PROF_EMBED, embedding_forward(x, ids, table, sqrtf((float)C),
                                          m->pos_table, B, T, C));
    int rc;
    PROFILE(PROF_ELEMENTWISE, rc = dropout_forward(x, drop, x, p, rng,
                                                   (size_t)B * T * C, err));
    return rc;
}
//< seq2seq-embed

//> seq2seq-encode
// The encoder: every layer is chapter 4's block, bidirectional (causal
// false), reading only the real source tokens (the key mask); then the
// final LayerNorm. Returns the memory, the decoder's view of the source.
static const float *encode(const Seq2Seq *m, Seq2SeqActs *a, int B, int S,
                           float p, Rng *rng, Error *err) {
    const Seq2SeqConfig *c = &m->cfg;
    int C = c->n_embd, NH = c->n_head, F = c->n_ffn;
    size_t bsc = (size_t)B * S * C;
    if (embed(a->src_x, a->src_drop, a->src, m->w.src_embed, m, p, rng, B,
              S, err) != 0)
        return NULL;
    const float *x = a->src_x;
    for (int l = 0; l < c->n_enc; l++) {
        float *out = a->enc_res + l * bsc;
        if (block_forward(out, &a->enc[l], x, &m->w.enc[l], a->src_mask,
                          false, c->act, p, rng, B, S, C, NH, F, err) != 0)
            return NULL;
        x = out;
    }
    PROFILE(PROF_NORM, layernorm_forward(a->memory, a->enc_mean,
                                         a->enc_rstd, x, m->w.enc_ln_w,
                                         m->w.enc_ln_b, B, S, C));
    return a->memory;
}
//< seq2seq-encode

//> seq2seq-forward
int seq2seq_forward(const Seq2Seq *m, Seq2SeqActs *a, const int *src,
                    const int *tgt_in, const int *tgt_out, int B, int S,
                    int T, float eps, bool train, Rng *rng,
                    SmoothedLoss *loss, Error *err) {
    const Seq2SeqConfig *c = &m->cfg;
    int C = c->n_embd, NH = c->n_head, F = c->n_ffn, V = c->tgt_vocab;
    if (check_batch(m, a, src, tgt_in, tgt_out, B, S, T, eps, err) != 0)
        return -1;
    float p = train ? c->dropout : 0.0f;
    a->src = src, a->tgt_in = tgt_in, a->tgt_out = tgt_out;
    a->cur_B = B, a->cur_S = S, a->cur_T = T, a->dropout_p = p, a->eps = eps;
    // the two padding masks, made from the ids themselves
    pad_mask(a->src_mask, src, B, S, c->pad);
    pad_mask(a->tgt_mask, tgt_in, B, T, c->pad);
    const float *memory = encode(m, a, B, S, p, rng, err);
    if (!memory) return -1;
    // the decoder: causal self-attention over the target, then
    // cross-attention into the memory, in every layer
    size_t btc = (size_t)B * T * C;
    if (embed(a->tgt_x, a->tgt_drop, tgt_in, m->w.tgt_embed, m, p, rng, B,
              T, err) != 0)
        return -1;
    const float *x = a->tgt_x;
    for (int l = 0; l < c->n_dec; l++) {
        float *out = a->dec_res + l * btc;
        if (decoder_forward(out, &a->dec[l], x, memory, &m->w.dec[l],
                            a->tgt_mask, a->src_mask, c->act, p, rng, B, T,
                            S, C, NH, F, err) != 0)
            return -1;
        x = out;
    }
    PROFILE(PROF_NORM, layernorm_forward(a->dec_out, a->dec_mean,
                                         a->dec_rstd, x, m->w.dec_ln_w,
                                         m->w.dec_ln_b, B, T, C));
    PROFILE(PROF_MATMUL, linear_forward(a->logits, a->dec_out,
                                        m->w.generator, NULL, B * T, C, V));
    a->n_targets = 0;
    if (!tgt_out) return 0;
    SmoothedLoss l;
    PROFILE(PROF_LOSS, smoothed_xent_forward(a->logits, tgt_out, B * T, V,
                                             c->pad, eps, &l));
    a->n_targets = l.n_valid;
    if (loss) *loss = l;
    return 0;
}
//< seq2seq-forward

// ---- backward --------------------------------------------------------------

// The gradient of an embedding's output, through its dropout, into the
// table's rows (scaled by sqrt(C) as the forward pass).
static void embed_backward(float *dtable, float *dx, float *tmp,
                           const float *drop, const int *ids, float p,
                           int B, int T, int C) {
    size_t n = (size_t)B * T * C;
    if (p > 0) {
        memset(tmp, 0, n * sizeof *tmp);
        PROFILE_BW(PROF_ELEMENTWISE, dropout_backward(tmp, dx, drop, n));
        dx = tmp;
    }
    PROFILE_BW(PROF_EMBED, embedding_backward(dtable, NULL, dx, ids,
                                              sqrtf((float)C), B, T, C));
}

//> seq2seq-backward
void seq2seq_backward(Seq2Seq *m, Seq2SeqActs *a) {
    const Seq2SeqConfig *c = &m->cfg;
    int B = a->cur_B, S = a->cur_S, T = a->cur_T, C = c->n_embd;
    int NH = c->n_head, F = c->n_ffn, V = c->tgt_vocab;
    size_t btc = (size_t)B * T * C, bsc = (size_t)B * S * C;
    if (a->n_targets == 0) return;
    // the loss, the generator, the decoder's final LayerNorm
    PROFILE_BW(PROF_LOSS, smoothed_xent_backward(a->dlogits, a->logits,
                                                 a->tgt_out, B * T, V,
                                                 c->pad, a->eps,
                                                 1.0f / a->n_targets));
    float *dln = a->dec_dx2;
    memset(dln, 0, btc * sizeof *dln);
    PROFILE_BW(PROF_MATMUL, linear_backward(dln, m->g.generator, NULL,
                                            a->dlogits, a->dec_out,
                                            m->w.generator, B * T, C, V));
    int Ld = c->n_dec, Le = c->n_enc;
    float *dx = a->dec_dx;
    memset(dx, 0, btc * sizeof *dx);
    PROFILE_BW(PROF_NORM, layernorm_backward(
        dx, m->g.dec_ln_w, m->g.dec_ln_b, dln,
        a->dec_res + (size_t)(Ld - 1) * btc, m->w.dec_ln_w, a->dec_mean,
        a->dec_rstd, B, T, C));
    // the decoder's layers, top down; every one adds its cross-attention's
    // share to the memory's gradient
    memset(a->dmemory, 0, bsc * sizeof *a->dmemory);
    float *dprev = a->dec_dx2;
    for (int l = Ld - 1; l >= 0; l--) {
        const float *inp = l > 0 ? a->dec_res + (size_t)(l - 1) * btc
                                 : a->tgt_x;
        memset(dprev, 0, btc * sizeof *dprev);
        decoder_backward(dprev, a->dmemory, &m->g.dec[l], &a->dec_scratch,
                         dx, &a->dec[l], inp, a->memory, &m->w.dec[l], B, T,
                         S, C, NH, F);
        float *t = dx;
        dx = dprev, dprev = t;
    }
    embed_backward(m->g.tgt_embed, dx, dprev, a->tgt_drop, a->tgt_in,
                   a->dropout_p, B, T, C);
    // the memory's gradient, complete, enters the encoder from the top
    dx = a->enc_dx;
    memset(dx, 0, bsc * sizeof *dx);
    PROFILE_BW(PROF_NORM, layernorm_backward(
        dx, m->g.enc_ln_w, m->g.enc_ln_b, a->dmemory,
        a->enc_res + (size_t)(Le - 1) * bsc, m->w.enc_ln_w, a->enc_mean,
        a->enc_rstd, B, S, C));
    dprev = a->enc_dx2;
    for (int l = Le - 1; l >= 0; l--) {
        const float *inp = l > 0 ? a->enc_res + (size_t)(l - 1) * bsc
                                 : a->src_x;
        memset(dprev, 0, bsc * sizeof *dprev);
        block_backward(dprev, &m->g.enc[l], &a->enc_scratch, dx, &a->enc[l],
                       inp, &m->w.enc[l], B, S, C, NH, F);
        float *t = dx;
        dx = dprev, dprev = t;
    }
    embed_backward(m->g.src_embed, dx, dprev, a->src_drop, a->src,
                   a->dropout_p, B, S, C);
}
//< seq2seq-backward

const float *seq2seq_logits(const Seq2SeqActs *a) { return a->logits; }

const float *seq2seq_cross_weights(const Seq2SeqActs *a, int l) {
    return a->dec[l].cross_attn.att;
}

// ---- the configuration -----------------------------------------------------

Seq2SeqConfig seq2seq_config_default(int vocab_size, int max_len) {
    return (Seq2SeqConfig){.src_vocab = vocab_size, .tgt_vocab = vocab_size,
                           .max_len = max_len, .n_enc = 2, .n_dec = 2,
                           .n_head = 4, .n_embd = 64, .n_ffn = 256,
                           .dropout = 0.0f, .bias = true, .tie = true,
                           .act = RELU, .pad = 0};
}

int seq2seq_config_check(const Seq2SeqConfig *cfg, Error *err) {
    const struct { const char *name; int value; } sizes[] = {
        {"src_vocab", cfg->src_vocab}, {"tgt_vocab", cfg->tgt_vocab},
        {"max_len", cfg->max_len},     {"n_enc", cfg->n_enc},
        {"n_dec", cfg->n_dec},         {"n_head", cfg->n_head},
        {"n_embd", cfg->n_embd},       {"n_ffn", cfg->n_ffn}};
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
    if (cfg->tie && cfg->src_vocab != cfg->tgt_vocab)
        return error_set(err, "model config: tied embeddings need one "
                         "vocabulary, got %d source and %d target ids",
                         cfg->src_vocab, cfg->tgt_vocab);
    int small = cfg->src_vocab < cfg->tgt_vocab ? cfg->src_vocab
                                                : cfg->tgt_vocab;
    if (cfg->pad < 0 || cfg->pad >= small)
        return error_set(err, "model config: pad id %d is not in both "
                         "vocabularies [0, %d)", cfg->pad, small);
    if (cfg->act != RELU && cfg->act != GELU_EXACT && cfg->act != GELU_TANH)
        return error_set(err, "model config: unknown activation %d",
                         (int)cfg->act);
    // every tensor and index comfortably inside an int's range
    const int64_t limit = INT32_MAX / 8;
    int64_t c = cfg->n_embd;
    int big = cfg->src_vocab > cfg->tgt_vocab ? cfg->src_vocab
                                              : cfg->tgt_vocab;
    const struct { const char *what; int64_t n, max; } rules[] = {
        {"n_embd", c, 65536}, {"n_enc", cfg->n_enc, 4096},
        {"max_len", cfg->max_len, 65536},   // as chapter 5's block_size
        {"n_dec", cfg->n_dec, 4096}, {"n_embd x n_ffn", c * cfg->n_ffn, limit},
        {"n_embd x vocabulary", c * big, limit},
        {"n_embd x max_len", c * cfg->max_len, limit}};
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (rules[i].n > rules[i].max)
            return error_set(err, "model config: too large: %s %lld > "
                             "%lld", rules[i].what, (long long)rules[i].n,
                             (long long)rules[i].max);
    return 0;
}

//> seq2seq-param-count
size_t seq2seq_param_count(const Seq2SeqConfig *cfg) {
    size_t C = cfg->n_embd, ln = cfg->bias ? 2 * C : C;
    size_t n = (size_t)cfg->src_vocab * C;                 // src_embed
    if (!cfg->tie) n += 2 * (size_t)cfg->tgt_vocab * C;    // tgt, generator
    n += (size_t)cfg->n_enc * block_param_count((int)C, cfg->n_ffn,
                                                cfg->bias);
    n += (size_t)cfg->n_dec * decoder_param_count((int)C, cfg->n_ffn,
                                                  cfg->bias);
    return n + 2 * ln;                                     // two final LNs
}
//< seq2seq-param-count

// ---- the parameters as views -----------------------------------------------

// Points the views of w into buf, in the order of the tensor list below,
// and returns the end of the last one.
static float *weights_point(Seq2SeqWeights *w, float *buf,
                            const Seq2SeqConfig *c) {
    size_t C = (size_t)c->n_embd, bias = c->bias ? 1 : 0;
    size_t vt = c->tie ? 0 : (size_t)c->tgt_vocab * C;
    const Slot embeds[3] = {{&w->src_embed, (size_t)c->src_vocab * C},
                            {&w->tgt_embed, vt}, {&w->generator, vt}};
    buf = layout_point(embeds, 3, buf);
    if (c->tie) w->tgt_embed = w->generator = w->src_embed;
    for (int l = 0; l < c->n_enc; l++)
        buf = block_weights_point(&w->enc[l], buf, c->n_embd, c->n_ffn,
                                  c->bias);
    const Slot enc_ln[2] = {{&w->enc_ln_w, C}, {&w->enc_ln_b, bias * C}};
    buf = layout_point(enc_ln, 2, buf);
    for (int l = 0; l < c->n_dec; l++)
        buf = decoder_weights_point(&w->dec[l], buf, c->n_embd, c->n_ffn,
                                    c->bias);
    const Slot dec_ln[2] = {{&w->dec_ln_w, C}, {&w->dec_ln_b, bias * C}};
    return layout_point(dec_ln, 2, buf);
}

static void add_tensor(Seq2Seq *m, const char *name, const float *data,
                       int ndim, int d0, int d1) {
    tensor_list_add(m->tensors, &m->n_tensors, m->params, name, data, ndim,
                    d0, d1);
}

// A layer's tensors under a prefix: "encoder.layers.0." + "ln_1.weight".
static void add_layer(Seq2Seq *m, const char *prefix, int l,
                      const BlockTensor *bt, int n) {
    for (int i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s.layers.%d.%s", prefix, l,
                 bt[i].name);
        add_tensor(m, name, bt[i].data, bt[i].ndim, bt[i].shape[0],
                   bt[i].shape[1]);
    }
}

static void list_tensors(Seq2Seq *m) {
    const Seq2SeqConfig *c = &m->cfg;
    int C = c->n_embd;
    add_tensor(m, "src_embed.weight", m->w.src_embed, 2, c->src_vocab, C);
    if (!c->tie) {
        add_tensor(m, "tgt_embed.weight", m->w.tgt_embed, 2, c->tgt_vocab,
                   C);
        add_tensor(m, "generator.weight", m->w.generator, 2, c->tgt_vocab,
                   C);
    }
    for (int l = 0; l < c->n_enc; l++) {
        BlockTensor bt[BLOCK_MAX_TENSORS];
        add_layer(m, "encoder", l, bt,
                  block_tensors(bt, &m->w.enc[l], C, c->n_ffn));
    }
    add_tensor(m, "encoder.norm.weight", m->w.enc_ln_w, 1, C, 0);
    if (m->w.enc_ln_b)
        add_tensor(m, "encoder.norm.bias", m->w.enc_ln_b, 1, C, 0);
    for (int l = 0; l < c->n_dec; l++) {
        BlockTensor bt[DECODER_MAX_TENSORS];
        add_layer(m, "decoder", l, bt,
                  decoder_tensors(bt, &m->w.dec[l], C, c->n_ffn));
    }
    add_tensor(m, "decoder.norm.weight", m->w.dec_ln_w, 1, C, 0);
    if (m->w.dec_ln_b)
        add_tensor(m, "decoder.norm.bias", m->w.dec_ln_b, 1, C, 0);
}

size_t seq2seq_max_tensors(const Seq2SeqConfig *cfg) {
    return 7 + (size_t)BLOCK_MAX_TENSORS * cfg->n_enc
           + (size_t)DECODER_MAX_TENSORS * cfg->n_dec;
}

size_t seq2seq_model_floats(const Seq2SeqConfig *cfg) {
    Seq2Seq m;
    size_t layers = (size_t)cfg->n_enc * sizeof *m.w.enc
                    + (size_t)cfg->n_dec * sizeof *m.w.dec;
    return seq2seq_param_count(cfg)
           + (size_t)cfg->max_len * cfg->n_embd   // the sinusoids
           + mem_floats(2 * layers + seq2seq_max_tensors(cfg)
                                     * sizeof *m.tensors);
}

int seq2seq_create(Seq2Seq *m, const Seq2SeqConfig *cfg, Error *err) {
    memset(m, 0, sizeof *m);
    if (seq2seq_config_check(cfg, err) != 0) return -1;
    m->cfg = *cfg;
    m->num_params = seq2seq_param_count(cfg);
    m->params = alloc_floats(m->num_params);
    m->w.enc = xcalloc((size_t)cfg->n_enc, sizeof *m->w.enc);
    m->g.enc = xcalloc((size_t)cfg->n_enc, sizeof *m->g.enc);
    m->w.dec = xcalloc((size_t)cfg->n_dec, sizeof *m->w.dec);
    m->g.dec = xcalloc((size_t)cfg->n_dec, sizeof *m->g.dec);
    float *end = weights_point(&m->w, m->params, cfg);
    if ((size_t)(end - m->params) != m->num_params)
        die("seq2seq_create: the layout (%zu) and the count (%zu) disagree",
            (size_t)(end - m->params), m->num_params);
    m->tensors = xcalloc(seq2seq_max_tensors(cfg), sizeof *m->tensors);
    list_tensors(m);
    m->pos_table = alloc_floats((size_t)cfg->max_len * cfg->n_embd);
    sinusoidal_table(m->pos_table, cfg->max_len, cfg->n_embd);
    return 0;
}

int seq2seq_alloc_grads(Seq2Seq *m, Error *err) {
    (void)err;  // allocation failures end the program (mem.h)
    if (!m->grads) {
        m->grads = alloc_floats(m->num_params);
        weights_point(&m->g, m->grads, &m->cfg);
    }
    return 0;
}

void seq2seq_zero_grads(Seq2Seq *m) {
    if (m->grads) memset(m->grads, 0, m->num_params * sizeof(float));
}

void seq2seq_free(Seq2Seq *m) {
    free(m->params);
    free(m->grads);
    free(m->w.enc);
    free(m->g.enc);
    free(m->w.dec);
    free(m->g.dec);
    free(m->tensors);
    free(m->pos_table);
    memset(m, 0, sizeof *m);
}

//> seq2seq-init
void seq2seq_init(Seq2Seq *m, Rng *rng) {
    for (int i = 0; i < m->n_tensors; i++) {
        const GptTensor *t = &m->tensors[i];
        float *p = m->params + t->offset;
        size_t n = (size_t)t->shape[0] * (t->ndim == 2 ? t->shape[1] : 1);
        if (t->ndim == 2) {
            // a (out, in) matrix: fan_out = shape[0], fan_in = shape[1]
            float a = sqrtf(6.0f / (float)(t->shape[0] + t->shape[1]));
            for (size_t j = 0; j < n; j++)
                p[j] = a * (2.0f * rng_uniform(rng) - 1.0f);
        } else {
            size_t len = strlen(t->name);
            bool is_bias = len > 5 && strcmp(t->name + len - 5, ".bias") == 0;
            for (size_t j = 0; j < n; j++) p[j] = is_bias ? 0.0f : 1.0f;
        }
    }
}
//< seq2seq-init

// ---- activations -----------------------------------------------------------

static int acts_slots(Slot t[19], Seq2SeqActs *a, const Seq2SeqConfig *c,
                      int B, int S, int T) {
    size_t C = (size_t)c->n_embd, bs = (size_t)B * S, bt = (size_t)B * T;
    size_t bsc = bs * C, btc = bt * C, btv = bt * (size_t)c->tgt_vocab;
    const Slot all[19] = {
        {&a->src_x, bsc},    {&a->src_drop, bsc},
        {&a->enc_res, (size_t)c->n_enc * bsc},
        {&a->memory, bsc},   {&a->enc_mean, bs},   {&a->enc_rstd, bs},
        {&a->dmemory, bsc},  {&a->enc_dx, bsc},    {&a->enc_dx2, bsc},
        {&a->tgt_x, btc},    {&a->tgt_drop, btc},
        {&a->dec_res, (size_t)c->n_dec * btc},
        {&a->dec_out, btc},  {&a->dec_mean, bt},   {&a->dec_rstd, bt},
        {&a->logits, btv},   {&a->dlogits, btv},
        {&a->dec_dx, btc},   {&a->dec_dx2, btc},
    };
    memcpy(t, all, sizeof all);
    return 19;
}

size_t seq2seq_acts_floats(const Seq2SeqConfig *c, int B, int S, int T) {
    Seq2SeqActs a;
    Slot t[19];
    int C = c->n_embd, NH = c->n_head, F = c->n_ffn;
    size_t n = layout_floats(t, acts_slots(t, &a, c, B, S, T));
    n += (size_t)c->n_enc * block_cache_floats(B, S, C, NH, F, false);
    n += block_scratch_floats(B, S, C, NH, F);
    n += (size_t)c->n_dec * decoder_cache_floats(B, T, S, C, NH, F);
    n += decoder_scratch_floats(B, T, S, C, NH, F);
    n += mem_floats((size_t)c->n_enc * sizeof *a.enc
                    + (size_t)c->n_dec * sizeof *a.dec);
    // the two int masks, counted as floats (the same size)
    return n + (size_t)B * (S + T);
}

int seq2seq_acts_alloc(Seq2SeqActs *a, const Seq2SeqConfig *cfg, int B,
                       int S, int T, Error *err) {
    memset(a, 0, sizeof *a);
    if (seq2seq_config_check(cfg, err) != 0) return -1;
    if (B < 1 || S < 1 || T < 1 || S > cfg->max_len || T > cfg->max_len)
        return error_set(err, "model: cannot hold B=%d sentences of S=%d "
                         "source and T=%d target tokens (max_len %d)", B, S,
                         T, cfg->max_len);
    int C = cfg->n_embd, NH = cfg->n_head, F = cfg->n_ffn;
    a->enc = xcalloc((size_t)cfg->n_enc, sizeof *a->enc);
    a->dec = xcalloc((size_t)cfg->n_dec, sizeof *a->dec);
    for (int l = 0; l < cfg->n_enc; l++)
        if (block_cache_alloc(&a->enc[l], B, S, C, NH, F, err) != 0)
            goto fail;
    for (int l = 0; l < cfg->n_dec; l++)
        if (decoder_cache_alloc(&a->dec[l], B, T, S, C, NH, F, err) != 0)
            goto fail;
    if (block_scratch_alloc(&a->enc_scratch, B, S, C, NH, F, err) != 0
        || decoder_scratch_alloc(&a->dec_scratch, B, T, S, C, NH, F, err)
           != 0)
        goto fail;
    Slot t[19];
    a->mem = layout_alloc(t, acts_slots(t, a, cfg, B, S, T));
    a->imem = xcalloc((size_t)B * (S + T), sizeof *a->imem);
    a->src_mask = a->imem;
    a->tgt_mask = a->imem + (size_t)B * S;
    a->B = B, a->S = S, a->T = T;
    return 0;
fail:
    seq2seq_acts_free(a, cfg);
    return -1;
}

void seq2seq_acts_free(Seq2SeqActs *a, const Seq2SeqConfig *cfg) {
    if (a->enc)
        for (int l = 0; l < cfg->n_enc; l++) block_cache_free(&a->enc[l]);
    if (a->dec)
        for (int l = 0; l < cfg->n_dec; l++) decoder_cache_free(&a->dec[l]);
    free(a->enc);
    free(a->dec);
    block_scratch_free(&a->enc_scratch);
    decoder_scratch_free(&a->dec_scratch);
    free(a->mem);
    free(a->imem);
    memset(a, 0, sizeof *a);
}

// One id list against its vocabulary; `what` names it in the message.
static int check_ids(const int *ids, long n, int V, const char *what,
                     Error *err) {
    for (long i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= V)
            return error_set(err, "model: %s id %d at position %ld is "
                             "outside the vocabulary [0, %d)", what, ids[i],
                             i, V);
    return 0;
}

static int check_batch(const Seq2Seq *m, const Seq2SeqActs *a,
                       const int *src, const int *tgt_in,
                       const int *tgt_out, int B, int S, int T, float eps,
                       Error *err) {
    const Seq2SeqConfig *c = &m->cfg;
    if (S < 1 || S > c->max_len || T < 1 || T > c->max_len)
        return error_set(err, "model: a source of %d and a target of %d "
                         "tokens; the model takes 1 to max_len=%d", S, T,
                         c->max_len);
    // in tokens on each side (common/layout.h): every buffer is indexed
    // with this batch's B, S and T, packed at its front
    if (B < 1 || !layout_fits(B, S, a->B, a->S)
        || !layout_fits(B, T, a->B, a->T))
        return error_set(err, "model: the activations cannot hold B=%d S=%d "
                         "T=%d: they hold B*S=%lld source tokens of at most "
                         "S=%d and B*T=%lld target tokens of at most T=%d",
                         B, S, T, (long long)a->B * a->S, a->S,
                         (long long)a->B * a->T, a->T);
    if (!(eps >= 0 && eps < 1))
        return error_set(err, "model: label smoothing must be in [0, 1), "
                         "got %g", eps);
    long bs = (long)B * S, bt = (long)B * T;
    if (check_ids(src, bs, c->src_vocab, "source", err) != 0
        || check_ids(tgt_in, bt, c->tgt_vocab, "target", err) != 0
        || (tgt_out
            && check_ids(tgt_out, bt, c->tgt_vocab, "output", err) != 0))
        return -1;
    if (tgt_out) {
        long real = 0;
        for (long i = 0; i < bt; i++) real += tgt_out[i] != c->pad;
        if (real == 0)
            return error_set(err, "model: every target of the batch is "
                             "padding; there is nothing to learn from");
    }
    return 0;
}

// ---- decoding --------------------------------------------------------------

static int state_slots(Slot t[9], Seq2SeqState *st, const Seq2SeqConfig *c,
                       int B, int S, int copies) {
    size_t C = (size_t)c->n_embd, R = (size_t)B * copies;
    size_t bsc = (size_t)B * S * C, bs = (size_t)B * S;
    const Slot all[9] = {
        {&st->memory, R * S * C}, {&st->x, R * C},    {&st->y, R * C},
        {&st->mean, R},           {&st->rstd, R},     {&st->enc_a, bsc},
        {&st->enc_b, bsc},        {&st->enc_mean, bs}, {&st->enc_rstd, bs},
    };
    memcpy(t, all, sizeof all);
    return 9;
}

size_t seq2seq_state_floats(const Seq2SeqConfig *c, int B, int S, int T,
                            int copies) {
    Seq2SeqState st;
    Slot t[9];
    int C = c->n_embd, NH = c->n_head, F = c->n_ffn, R = B * copies;
    size_t n = layout_floats(t, state_slots(t, &st, c, B, S, copies));
    n += (size_t)c->n_dec * decoder_step_floats(R, T, S, C, NH, F);
    n += block_cache_floats(B, S, C, NH, F, false);
    n += (size_t)R * T * C;             // the reorder's copy of the keys
    n += (size_t)2 * R * T;             // the target masks, and a copy
    n += mem_floats((size_t)c->n_dec * sizeof *st.layers
                    + (size_t)R * sizeof *st.kept);
    return n + (size_t)(R + B) * S;     // the source masks
}

int seq2seq_state_alloc(Seq2SeqState *st, const Seq2SeqConfig *cfg, int B,
                        int S, int T, int copies, Error *err) {
    memset(st, 0, sizeof *st);
    if (seq2seq_config_check(cfg, err) != 0) return -1;
    if (B < 1 || copies < 1 || B > INT32_MAX / copies || S < 1 || T < 1
        || S > cfg->max_len || T > cfg->max_len)
        return error_set(err, "decoding: cannot hold B=%d sources of S=%d "
                         "tokens, %d rows each, T=%d target tokens "
                         "(max_len %d)", B, S, copies, T, cfg->max_len);
    int C = cfg->n_embd, NH = cfg->n_head, F = cfg->n_ffn, R = B * copies;
    st->layers = xcalloc((size_t)cfg->n_dec, sizeof *st->layers);
    for (int l = 0; l < cfg->n_dec; l++)
        if (decoder_step_alloc(&st->layers[l], R, T, S, C, NH, F, err) != 0)
            goto fail;
    if (block_cache_alloc(&st->enc, B, S, C, NH, F, err) != 0) goto fail;
    Slot t[9];
    st->mem = layout_alloc(t, state_slots(t, st, cfg, B, S, copies));
    st->swap = alloc_floats((size_t)R * T * C);
    st->kept = xcalloc((size_t)R, sizeof *st->kept);
    st->imem = xcalloc((size_t)(R + B) * S + (size_t)2 * R * T,
                       sizeof *st->imem);
    st->src_mask = st->imem;
    st->enc_mask = st->imem + (size_t)R * S;
    st->tgt_mask = st->enc_mask + (size_t)B * S;
    st->tgt_prev = st->tgt_mask + (size_t)R * T;
    st->B = B, st->S = S, st->T = T, st->copies = copies, st->R = R;
    st->n_dec = cfg->n_dec;
    return 0;
fail:
    seq2seq_state_free(st, cfg);
    return -1;
}

void seq2seq_state_free(Seq2SeqState *st, const Seq2SeqConfig *cfg) {
    if (st->layers)
        for (int l = 0; l < cfg->n_dec; l++)
            decoder_step_free(&st->layers[l]);
    free(st->layers);
    block_cache_free(&st->enc);
    free(st->mem);
    free(st->swap);
    free(st->kept);
    free(st->imem);
    memset(st, 0, sizeof *st);
}

int seq2seq_state_rows(const Seq2SeqState *st) { return st->R; }
int seq2seq_state_len(const Seq2SeqState *st) { return st->len; }

//> seq2seq-encode-state
int seq2seq_encode(const Seq2Seq *m, Seq2SeqState *st, const int *src,
                   int B, int S, int copies, Error *err) {
    const Seq2SeqConfig *c = &m->cfg;
    int C = c->n_embd, NH = c->n_head, F = c->n_ffn, R = B * copies;
    if (B < 1 || B > st->B || S < 1 || S > st->S || copies != st->copies)
        return error_set(err, "decoding: %d sources of %d tokens, %d rows "
                         "each, do not fit a state for %d of %d, %d each",
                         B, S, copies, st->B, st->S, st->copies);
    if (check_ids(src, (long)B * S, c->src_vocab, "source", err) != 0)
        return -1;
    // the encoder, once per source, as in the forward pass (no dropout)
    int *mask = st->enc_mask;
    pad_mask(mask, src, B, S, c->pad);
    embedding_forward(st->enc_a, src, m->w.src_embed, sqrtf((float)C),
                      m->pos_table, B, S, C);
    float *x = st->enc_a, *out = st->enc_b;
    for (int l = 0; l < c->n_enc; l++) {
        if (block_forward(out, &st->enc, x, &m->w.enc[l], mask, false,
                          c->act, 0.0f, NULL, B, S, C, NH, F, err) != 0)
            return -1;
        float *tmp = x;
        x = out, out = tmp;
    }
    layernorm_forward(out, st->enc_mean, st->enc_rstd, x, m->w.enc_ln_w,
                      m->w.enc_ln_b, B, S, C);
    // copies rows per source: row r reads source r / copies
    size_t sc = (size_t)S * C;
    for (int r = 0; r < R; r++) {
        int b = r / copies;
        memcpy(st->memory + r * sc, out + b * sc, sc * sizeof(float));
        memcpy(st->src_mask + (size_t)r * S, mask + (size_t)b * S,
               (size_t)S * sizeof(int));
    }
    // every decoder layer's cross-attention keys and values, once; no
    // target position yet
    for (int l = 0; l < c->n_dec; l++) {
        if (xattn_kv_fill(&st->layers[l].cross_kv, st->memory,
                          m->w.dec[l].cross_attn_kv_proj_w,
                          m->w.dec[l].cross_attn_kv_proj_b, R, S, C, err)
            != 0)
            return -1;
        st->layers[l].self_kv.len = 0;
    }
    st->cur_S = S, st->cur_R = R, st->len = 0;
    return 0;
}
//< seq2seq-encode-state

//> seq2seq-step
int seq2seq_step(const Seq2Seq *m, Seq2SeqState *st, const int *tokens,
                 float *logits, Error *err) {
    const Seq2SeqConfig *c = &m->cfg;
    int C = c->n_embd, NH = c->n_head, F = c->n_ffn, R = st->cur_R;
    if (st->len >= st->T)
        return error_set(err, "decoding: the state holds %d target "
                         "positions and all are used", st->T);
    if (check_ids(tokens, R, c->tgt_vocab, "target", err) != 0)
        return -1;
    // The target mask gains the new position: 0 where the token fed is
    // <pad>. The full forward pass hides every <pad> of the target from
    // the self-attention (its padding mask comes from the ids); a <pad>
    // that decoding chose and fed back is hidden here the same way, so
    // that the cached step and the forward pass stay one model.
    for (int r = 0; r < R; r++)
        st->tgt_mask[(size_t)r * st->T + st->len] = tokens[r] != c->pad;
    // the new position's embedding, then every layer's cached step
    embedding_forward(st->x, tokens, m->w.tgt_embed, sqrtf((float)C),
                      m->pos_table + (size_t)st->len * C, R, 1, C);
    for (int l = 0; l < c->n_dec; l++) {
        if (decoder_step(st->y, &st->layers[l], st->x, &m->w.dec[l],
                         st->tgt_mask, st->src_mask, c->act, R, C, NH, F,
                         err) != 0)
            return -1;
        float *t = st->x;
        st->x = st->y, st->y = t;
    }
    layernorm_forward(st->y, st->mean, st->rstd, st->x, m->w.dec_ln_w,
                      m->w.dec_ln_b, R, 1, C);
    linear_forward(logits, st->y, m->w.generator, NULL, R, C, c->tgt_vocab);
    st->len++;
    return 0;
}
//< seq2seq-step

//> seq2seq-reorder
int seq2seq_state_reorder(Seq2SeqState *st, const int *from, Error *err) {
    for (int r = 0; r < st->cur_R; r++)
        if (from[r] < 0 || from[r] >= st->cur_R
            || from[r] / st->copies != r / st->copies)
            return error_set(err, "decoding: row %d cannot take row %d's "
                             "place (rows of source %d are %d to %d)", r,
                             from[r], r / st->copies,
                             r / st->copies * st->copies,
                             r / st->copies * st->copies + st->copies - 1);
    // every decoder layer's self-attention keys and values: row r is one
    // block of (NH, T, HS) = T * C floats in each, of which each head's
    // first len positions are in use. Only rows that take another's
    // place move, and only what is in use. A row's old keys are lost
    // once it is written over, so a row that is both written over and
    // read by another is first kept in swap; every other row is read in
    // place, and most moves are one copy. The cross-attention's keys and
    // values stay, since every row of a source reads the same memory.
    int R = st->cur_R;
    for (int r = 0; r < R; r++) st->kept[r] = false;
    for (int r = 0; r < R; r++)
        if (from[r] != r && from[from[r]] != from[r])
            st->kept[from[r]] = true;
    const MhaKv *k0 = &st->layers[0].self_kv;
    int NH = k0->NH;
    size_t head = (size_t)st->T * (k0->C / NH), row = head * NH;
    size_t used = (size_t)st->len * (k0->C / NH) * sizeof(float);
    // the target masks: row r takes row from[r]'s (a few ints a row)
    size_t T = (size_t)st->T, mused = (size_t)st->len * sizeof(int);
    memcpy(st->tgt_prev, st->tgt_mask, (size_t)R * T * sizeof(int));
    for (int r = 0; r < R; r++)
        memcpy(st->tgt_mask + r * T, st->tgt_prev + from[r] * T, mused);
    for (int l = 0; l < st->n_dec; l++) {
        float *kv[2] = {st->layers[l].self_kv.k, st->layers[l].self_kv.v};
        for (int i = 0; i < 2; i++) {
            for (int r = 0; r < R; r++)
                if (st->kept[r])
                    for (int h = 0; h < NH; h++)
                        memcpy(st->swap + r * row + h * head,
                               kv[i] + r * row + h * head, used);
            for (int r = 0; r < R; r++) {
                if (from[r] == r) continue;
                const float *src = (st->kept[from[r]] ? st->swap : kv[i])
                                   + (size_t)from[r] * row;
                for (int h = 0; h < NH; h++)
                    memcpy(kv[i] + r * row + h * head, src + h * head, used);
            }
        }
    }
    return 0;
}
//< seq2seq-reorder

//> seq2seq-drop
int seq2seq_state_drop(Seq2SeqState *st, int b, Error *err) {
    int k = st->copies, n = st->cur_R / k, last = n - 1;
    if (b < 0 || b >= n)
        return error_set(err, "decoding: cannot drop source %d: the state "
                         "holds sources 0 to %d", b, last);
    st->cur_R -= k;
    if (b == last) return 0;
    // the last source's rows move into b's: its source mask, target mask,
    // memory and cross-attention keys and values (S positions a row,
    // packed), and the self-attention keys and values in use (each head's
    // first len of T positions)
    size_t S = (size_t)st->cur_S, C = (size_t)st->layers[0].self_kv.C;
    size_t to = (size_t)b * k, from = (size_t)last * k;
    memcpy(st->src_mask + to * S, st->src_mask + from * S,
           k * S * sizeof *st->src_mask);
    size_t T = (size_t)st->T;
    memcpy(st->tgt_mask + to * T, st->tgt_mask + from * T,
           k * T * sizeof *st->tgt_mask);
    memcpy(st->memory + to * S * C, st->memory + from * S * C,
           k * S * C * sizeof *st->memory);
    int NH = st->layers[0].self_kv.NH;
    size_t HS = C / NH, head = (size_t)st->T * HS, row = head * NH;
    size_t used = (size_t)st->len * HS * sizeof(float);
    for (int l = 0; l < st->n_dec; l++) {
        XattnKv *x = &st->layers[l].cross_kv;
        size_t xs = (size_t)x->len * C;   // x->len = S, packed
        memcpy(x->k + to * xs, x->k + from * xs, k * xs * sizeof *x->k);
        memcpy(x->v + to * xs, x->v + from * xs, k * xs * sizeof *x->v);
        float *kv[2] = {st->layers[l].self_kv.k, st->layers[l].self_kv.v};
        for (int i = 0; i < 2; i++)
            for (size_t r = 0; r < (size_t)k; r++)
                for (int h = 0; h < NH; h++)
                    memcpy(kv[i] + (to + r) * row + h * head,
                           kv[i] + (from + r) * row + h * head, used);
    }
    return 0;
}
//< seq2seq-drop
