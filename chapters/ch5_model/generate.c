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
    // A whole window's pass (a fill, or every token without the cache)
    // runs the stack one layer at a time, so it needs one layer's
    // activations, not the model's n_layer of them (gpt_forward's).
    int win_T;           // the longest window it has room for
    BlockCache win;      // (1, win_T) one layer's forward pass
    float *wx, *wy;      // (win_T, C) the stream before and after it
    float *wmem;
} Decoder;

//> kv-fill
// Runs the window (n ids, positions 0 .. n-1) through the stack one
// layer at a time: each layer's block_forward sees the whole window, in
// the one cache d->win, which then hands that layer's keys and values to
// its KV cache (when keep) before the next layer overwrites it. ln_f
// and the head run on the last position only, whose logits predict the
// next token. With keep the caches then hold n positions.
static int window_pass(Decoder *d, const int *ids, int n, bool keep,
                       Error *err) {
    const Gpt *m = d->m;
    const GptConfig *c = &m->cfg;
    int C = c->n_embd;
    if (n < 1 || n > d->win_T)
        return error_set(err, "generate: a window of %d tokens, room for "
                         "1 to %d", n, d->win_T);
    if (gpt_check_tokens(c, ids, NULL, (size_t)n, err) != 0) return -1;
    const float *pos = m->w.wpe ? m->w.wpe : m->pos_table;
    embedding_forward(d->wx, ids, m->w.wte, 1.0f, pos, 1, n, C);
    for (int l = 0; l < c->n_layer; l++) {
        if (block_forward(d->wy, &d->win, d->wx, &m->w.h[l], NULL, true,
                          c->act, 0.0f, NULL, 1, n, C, c->n_head,
                          c->n_ffn, err) != 0
            || (keep && mha_kv_fill(&d->layers[l].kv, &d->win.attn, 1, n,
                                    err) != 0))
            return -1;
        float *next = d->wy;
        d->wy = d->wx, d->wx = next;
    }
    layernorm_forward(d->h, d->mean, d->rstd, d->wx + (size_t)(n - 1) * C,
                      m->w.ln_f_w, m->w.ln_f_b, 1, 1, C);
    linear_forward(d->logits, d->h, m->w.wte, NULL, 1, C, c->vocab_size);
    if (keep) d->len = n;
    return 0;
}

// The fill of a LogitsSource (self is the Decoder): the window through
// the stack, its keys and values kept.
static int decoder_fill(void *self, const int *ids, int n, Error *err) {
    return window_pass(self, ids, n, true, err);
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
                       c->act, 1, C, c->n_head, c->n_ffn, err) != 0)
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
    block_cache_free(&d->win);
    free(d->wmem);
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

// The longest window a generation passes through the stack whole. With
// the cache: the prompt's (cropped to block_size) and, once the text
// outgrows block_size, the window the policy keeps; without it, every
// window up to block_size.
static int longest_window(const GptConfig *c, int n_prompt,
                          const GenOptions *o) {
    int Tb = c->block_size;
    if (!o->use_cache) return Tb;
    int n = n_prompt < 1 ? 1 : n_prompt < Tb ? n_prompt : Tb;
    int keep = o->window == WINDOW_EXACT ? Tb : (Tb + 1) / 2;
    bool crops = o->max_new_tokens > 0
                 && (long)n_prompt + o->max_new_tokens > Tb + 1L;
    return crops && keep > n ? keep : n;
}

size_t generate_floats_for(const GptConfig *c, int n_prompt,
                           const GenOptions *o) {
    Decoder d;
    Slot t[6];
    size_t L = (size_t)c->n_layer, C = (size_t)c->n_embd;
    int T = longest_window(c, n_prompt, o);
    return layout_floats(t, decoder_slots(t, &d, c))
           + mem_floats(L * sizeof *d.layers)
           + L * block_step_floats(1, c->block_size, c->n_embd, c->n_head,
                                   c->n_ffn)
           + block_cache_floats(1, T, c->n_embd, c->n_head, c->n_ffn,
                                false)
           + mem_floats(2 * (size_t)T * C * sizeof(float))
           + sampler_floats(c->vocab_size);
}

size_t generate_floats(const GptConfig *c) {
    GenOptions worst = {.max_new_tokens = c->block_size + 1,
                        .use_cache = true, .window = WINDOW_EXACT};
    return generate_floats_for(c, c->block_size, &worst);
}

static int decoder_init(Decoder *d, const Gpt *m, int win_T, Error *err) {
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
    d->win_T = win_T;
    size_t wc = (size_t)d->win_T * c->n_embd;
    if (block_cache_alloc(&d->win, 1, d->win_T, c->n_embd, c->n_head,
                          c->n_ffn, err) != 0) {
        decoder_free(d);
        return -1;
    }
    d->wmem = xmalloc(2 * wc * sizeof *d->wmem);
    d->wx = d->wmem, d->wy = d->wmem + wc;
    return 0;
}

// Without the cache (nanoGPT's way): the whole window through the whole
// stack for every token, and no keys or values kept.
static int decoder_forward(void *self, const int *ids, int n, Error *err) {
    return window_pass(self, ids, n, false, err);
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
    if (decoder_init(&d, m, longest_window(&m->cfg, n_prompt, o), err) != 0)
        return -1;
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
