#include "generate.h"

#include <stdlib.h>
#include <string.h>

#include "embedding.h"
#include "layernorm.h"
#include "layout.h"
#include "linear.h"
#include "mem.h"
#include "timer.h"

// ---- the KV cache ----------------------------------------------------------

// Everything one generation needs, allocated once before the first token.
typedef struct {
    const Gpt *m;
    int len;             // positions held in the caches
    BlockStep *layers;   // n_layer: each layer's keys and values, and
                         // one position's work space (chapter 4)
    float *x, *y;        // (C,) the stream entering and leaving a layer
    float *h;            // (C,) ln_f's output
    float *mean, *rstd;  // (1,) its statistics
    float *logits;       // (V,)
    float *mem;
    GptActs acts;        // the full stack, for (re)filling the caches
} Decoder;

//> kv-fill
// Runs the window (n ids, positions 0 .. n-1) through the full stack, as
// gpt_forward_last, and keeps every layer's keys and values: the caches
// then hold n positions and d->logits predicts the token after them.
// (self is the Decoder: this is the fill of a LogitsSource.)
static int decoder_fill(void *self, const int *ids, int n, Error *err) {
    Decoder *d = self;
    const GptConfig *c = &d->m->cfg;
    if (gpt_forward_last(d->m, &d->acts, ids, n, d->logits, err) != 0)
        return -1;
    for (int l = 0; l < c->n_layer; l++)
        if (mha_kv_fill(&d->layers[l].kv, &d->acts.blocks[l].attn, 1, n,
                        err) != 0)
            return -1;
    d->len = n;
    return 0;
}
//< kv-fill

//> kv-step
// One new token at the next position, through every layer on its own
// (chapter 4's block_step: its query attends over the cached keys and
// its own, and its key and value join the cache). Fills d->logits.
static int decoder_step(void *self, int id, Error *err) {
    Decoder *d = self;
    const Gpt *m = d->m;
    const GptConfig *c = &m->cfg;
    int C = c->n_embd, t = d->len;
    const float *pos = m->w.wpe ? m->w.wpe : m->pos_table;
    embedding_forward(d->x, &id, m->w.wte, 1.0f, pos + (size_t)t * C, 1,
                      1, C);
    for (int l = 0; l < c->n_layer; l++) {
        if (block_step(d->y, &d->layers[l], d->x, &m->w.h[l], NULL,
                       GELU_EXACT, 1, C, c->n_head, c->n_ffn, err) != 0)
            return -1;
        float *next = d->y;
        d->y = d->x, d->x = next;
    }
    layernorm_forward(d->h, d->mean, d->rstd, d->x, m->w.ln_f_w,
                      m->w.ln_f_b, 1, 1, C);
    linear_forward(d->logits, d->h, m->w.wte, NULL, 1, C, c->vocab_size);
    d->len = t + 1;
    return 0;
}
//< kv-step

static void decoder_free(Decoder *d) {
    if (d->layers)
        for (int l = 0; l < d->m->cfg.n_layer; l++)
            block_step_free(&d->layers[l]);
    free(d->layers);
    free(d->mem);
    gpt_acts_free(&d->acts, &d->m->cfg);
    memset(d, 0, sizeof *d);
}

// The decoder's own views: one position's stream and the logits.
static int decoder_slots(Slot t[6], Decoder *d, const GptConfig *c) {
    size_t C = (size_t)c->n_embd;
    const Slot all[6] = {{&d->x, C},    {&d->y, C},    {&d->h, C},
                         {&d->mean, 1}, {&d->rstd, 1},
                         {&d->logits, (size_t)c->vocab_size}};
    memcpy(t, all, sizeof all);
    return 6;
}

size_t generate_floats(const GptConfig *c) {
    Decoder d;
    Slot t[6];
    size_t L = (size_t)c->n_layer;
    return layout_floats(t, decoder_slots(t, &d, c))
           + mem_floats(L * sizeof *d.layers)
           + L * block_step_floats(1, c->block_size, c->n_embd, c->n_head,
                                   c->n_ffn)
           + gpt_acts_floats(c, 1, c->block_size)
           + sampler_floats(c->vocab_size);
}

static int decoder_init(Decoder *d, const Gpt *m, Error *err) {
    const GptConfig *c = &m->cfg;
    memset(d, 0, sizeof *d);
    d->m = m;
    d->layers = xcalloc((size_t)c->n_layer, sizeof *d->layers);
    for (int l = 0; l < c->n_layer; l++)
        if (block_step_alloc(&d->layers[l], 1, c->block_size, c->n_embd,
                             c->n_head, c->n_ffn, err) != 0) {
            decoder_free(d);
            return -1;
        }
    Slot t[6];
    d->mem = layout_alloc(t, decoder_slots(t, d, c));
    if (gpt_acts_alloc(&d->acts, c, 1, c->block_size, err) != 0) {
        decoder_free(d);
        return -1;
    }
    return 0;
}

// Without the cache (nanoGPT's way): the whole window through the whole
// stack for every token, and no keys or values kept.
static int decoder_forward(void *self, const int *ids, int n, Error *err) {
    Decoder *d = self;
    return gpt_forward_last(d->m, &d->acts, ids, n, d->logits, err);
}

// ---- the loop --------------------------------------------------------------

//> generate
// The request's checks, for a vocabulary of V ids.
static int check_request(int V, const int *prompt, int n_prompt,
                         const GenOptions *o, Error *err) {
    if (n_prompt < 1)
        return error_set(err, "generate: the prompt needs at least one "
                         "token");
    if (o->max_new_tokens < 0)
        return error_set(err, "generate: max new tokens must be >= 0, got "
                         "%d", o->max_new_tokens);
    if (sample_options_check(&o->sample, err) != 0) return -1;
    for (int i = 0; i < n_prompt; i++)
        if (prompt[i] < 0 || prompt[i] >= V)
            return error_set(err, "generate: prompt id %d at position %d "
                             "is outside the vocabulary [0, %d)", prompt[i],
                             i, V);
    return 0;
}

int generate_with(const LogitsSource *src, const int *prompt, int n_prompt,
                  int *out, const GenOptions *o, TokenFn on_token,
                  void *ctx, GenStats *stats, Error *err) {
    int V = src->vocab_size, Tb = src->block_size;
    if (check_request(V, prompt, n_prompt, o, err) != 0) return -1;
    Sampler s;
    sampler_init(&s, V);
    Rng rng;
    rng_seed(&rng, o->seed);
    memmove(out, prompt, (size_t)n_prompt * sizeof *out);
    // the window is out[start .. n-1]; keep = its length after a crop
    int keep = o->window == WINDOW_EXACT ? Tb : (Tb + 1) / 2;
    int n = n_prompt, start = n > Tb ? n - Tb : 0;
    int filled = -1;   // the window start of the last fill
    GenStats st = {0};
    double t0 = time_now();
    for (int step = 0; step < o->max_new_tokens; step++) {
        if (!src->step || filled != start) {
            // no cache, or a new window (every position changed): the
            // whole window through the whole model
            if (src->fill(src->self, out + start, n - start, err) != 0)
                goto fail;
            filled = start;
            st.prefills++;
        } else {
            if (src->step(src->self, out[n - 1], err) != 0)  // the newest
                goto fail;
        }
        int next = sample_next(src->logits, &o->sample, &s, &rng);
        out[n++] = next;
        st.tokens++;
        if (on_token) on_token(next, ctx);
        if (n - start > Tb) start = n - keep;
    }
    st.seconds = time_now() - t0;
    if (stats) *stats = st;
    sampler_free(&s);
    return 0;
fail:
    sampler_free(&s);
    return -1;
}
//< generate

//> generate-cpu
int generate(const Gpt *m, const int *prompt, int n_prompt, int *out,
             const GenOptions *o, TokenFn on_token, void *ctx,
             GenStats *stats, Error *err) {
    // checked before the cache is allocated (generate_with checks again)
    if (check_request(m->cfg.vocab_size, prompt, n_prompt, o, err) != 0)
        return -1;
    Decoder d;
    if (decoder_init(&d, m, err) != 0) return -1;
    LogitsSource src = {.self = &d, .vocab_size = m->cfg.vocab_size,
                        .block_size = m->cfg.block_size,
                        .logits = d.logits};
    if (o->use_cache) src.fill = decoder_fill, src.step = decoder_step;
    else src.fill = decoder_forward, src.step = NULL;
    int rc = generate_with(&src, prompt, n_prompt, out, o, on_token, ctx,
                           stats, err);
    decoder_free(&d);
    return rc;
}
//< generate-cpu
