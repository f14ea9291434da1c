#include "generate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "activation.h"
#include "layernorm.h"
#include "linear.h"
#include "mem.h"
#include "timer.h"

// ---- the KV cache ------------------------------------------------------------------

// Everything one generation needs, allocated once before the first token.
typedef struct {
    const Gpt *m;
    int len;             // positions held in the cache
    float *k, *v;        // (L, NH, block_size, HS) keys and values
    float *x, *h, *qkv, *y, *att, *tmp, *hid;  // one position's
                                               // activations
    float *logits;       // (V,)
    GptActs acts;        // the full stack, for (re)filling the cache
} Decoder;

static int decoder_init(Decoder *d, const Gpt *m, Error *err) {
    const GptConfig *c = &m->cfg;
    int C = c->n_embd, T = c->block_size;
    memset(d, 0, sizeof *d);
    d->m = m;
    if (gpt_acts_alloc(&d->acts, c, 1, T, err) != 0) return -1;
    size_t kv = (size_t)c->n_layer * T * C;
    d->k = alloc_floats(2 * kv);
    d->v = d->k + kv;
    d->x = alloc_floats(11 * (size_t)C + T + c->vocab_size);
    d->h = d->x + C;
    d->qkv = d->h + C;         // 3C
    d->y = d->qkv + 3 * C;
    d->tmp = d->y + C;
    d->att = d->tmp + C;       // T
    d->logits = d->att + T;    // V
    d->hid = d->logits + c->vocab_size;  // 4C
    return 0;
}

static void decoder_free(Decoder *d) {
    gpt_acts_free(&d->acts, &d->m->cfg);
    free(d->k);
    free(d->x);
    memset(d, 0, sizeof *d);
}

// Where layer l, head hd, position t of the cache starts.
static size_t kv_at(const GptConfig *c, int l, int hd, int t) {
    int HS = c->n_embd / c->n_head;
    return (((size_t)l * c->n_head + hd) * c->block_size + t) * HS;
}

//> kv-fill
// Runs the window (n ids, positions 0 .. n-1) through the full stack, as
// gpt_forward_last, and keeps every layer's keys and values: the cache
// then holds n positions and d->logits predicts the token after them.
static int decoder_fill(Decoder *d, const int *ids, int n, Error *err) {
    const GptConfig *c = &d->m->cfg;
    int HS = c->n_embd / c->n_head;
    if (gpt_forward_last(d->m, &d->acts, ids, n, d->logits, err) != 0)
        return -1;
    for (int l = 0; l < c->n_layer; l++) {
        const MhaCache *a = &d->acts.blocks[l].attn;  // (1, NH, n, HS)
        for (int hd = 0; hd < c->n_head; hd++) {
            size_t from = (size_t)hd * n * HS, count = (size_t)n * HS;
            memcpy(d->k + kv_at(c, l, hd, 0), a->k + from,
                   count * sizeof(float));
            memcpy(d->v + kv_at(c, l, hd, 0), a->v + from,
                   count * sizeof(float));
        }
    }
    d->len = n;
    return 0;
}
//< kv-fill

//> kv-step
// One new token at the next position: through every layer on its own,
// its query attending over the cached keys and its own. Fills d->logits.
static void decoder_step(Decoder *d, int id) {
    const Gpt *m = d->m;
    const GptConfig *c = &m->cfg;
    int C = c->n_embd, NH = c->n_head, HS = C / NH, t = d->len;
    const float *pos = m->w.wpe ? m->w.wpe : m->pos_table;
    for (int i = 0; i < C; i++)
        d->x[i] = m->w.wte[(size_t)id * C + i] + pos[(size_t)t * C + i];
    const float scale = 1.0f / sqrtf((float)HS);
    for (int l = 0; l < c->n_layer; l++) {
        const BlockWeights *w = &m->w.h[l];
        float mean, rstd;
        layernorm_forward(d->h, &mean, &rstd, d->x, w->ln_1_w, w->ln_1_b,
                          1, 1, C);
        linear_forward(d->qkv, d->h, w->attn_c_attn_w, w->attn_c_attn_b, 1,
                       C, 3 * C);
        for (int hd = 0; hd < NH; hd++) {
            const float *q = d->qkv + hd * HS;
            float *K = d->k + kv_at(c, l, hd, 0);
            float *Vv = d->v + kv_at(c, l, hd, 0);
            // append this position's key and value to the cache
            memcpy(K + (size_t)t * HS, d->qkv + C + hd * HS,
                   HS * sizeof(float));
            memcpy(Vv + (size_t)t * HS, d->qkv + 2 * C + hd * HS,
                   HS * sizeof(float));
            // scores s = 0 .. t: K (t+1, HS) times q, scaled; the causal
            // mask is simply that the cache holds nothing later
            linear_forward(d->att, q, K, NULL, 1, HS, t + 1);  // K q
            for (int s = 0; s <= t; s++) d->att[s] *= scale;
            float mx = d->att[0];
            for (int s = 1; s <= t; s++)
                mx = d->att[s] > mx ? d->att[s] : mx;
            float sum = 0;
            for (int s = 0; s <= t; s++)
                sum += d->att[s] = expf(d->att[s] - mx);
            // the head's output: the weights times V (t+1, HS)
            float *yh = d->y + hd * HS;
            for (int i = 0; i < HS; i++) yh[i] = 0;
            for (int s = 0; s <= t; s++) {
                float a = d->att[s] / sum;
                const float *vs = Vv + (size_t)s * HS;
                for (int i = 0; i < HS; i++) yh[i] += a * vs[i];
            }
        }
        linear_forward(d->tmp, d->y, w->attn_c_proj_w, w->attn_c_proj_b, 1,
                       C, C);
        for (int i = 0; i < C; i++) d->x[i] += d->tmp[i];
        layernorm_forward(d->h, &mean, &rstd, d->x, w->ln_2_w, w->ln_2_b,
                          1, 1, C);
        // the MLP: C -> 4C, GELU, 4C -> C
        linear_forward(d->hid, d->h, w->mlp_c_fc_w, w->mlp_c_fc_b, 1, C,
                       c->n_ffn);
        gelu_forward(d->hid, d->hid, GELU_EXACT, (size_t)c->n_ffn);
        linear_forward(d->tmp, d->hid, w->mlp_c_proj_w, w->mlp_c_proj_b, 1,
                       c->n_ffn, C);
        for (int i = 0; i < C; i++) d->x[i] += d->tmp[i];
    }
    float mean, rstd;
    layernorm_forward(d->h, &mean, &rstd, d->x, m->w.ln_f_w, m->w.ln_f_b,
                      1, 1, C);
    linear_forward(d->logits, d->h, m->w.wte, NULL, 1, C, c->vocab_size);
    d->len = t + 1;
}
//< kv-step

// ---- the loop ------------------------------------------------------------------------

//> generate
int generate(const Gpt *m, const int *prompt, int n_prompt, int *out,
             const GenOptions *o, TokenFn on_token, void *ctx,
             GenStats *stats, Error *err) {
    const GptConfig *c = &m->cfg;
    int Tb = c->block_size;
    if (n_prompt < 1)
        return error_set(err, "generate: the prompt needs at least one "
                         "token");
    if (o->max_new_tokens < 0)
        return error_set(err, "generate: max new tokens must be >= 0, got "
                         "%d", o->max_new_tokens);
    if (sample_options_check(&o->sample, err) != 0) return -1;
    for (int i = 0; i < n_prompt; i++)
        if (prompt[i] < 0 || prompt[i] >= c->vocab_size)
            return error_set(err, "generate: prompt id %d at position %d "
                             "is outside the vocabulary [0, %d)", prompt[i],
                             i, c->vocab_size);
    Decoder d;
    if (decoder_init(&d, m, err) != 0) return -1;
    Sampler s;
    sampler_init(&s, c->vocab_size);
    Rng rng;
    rng_seed(&rng, o->seed);
    memmove(out, prompt, (size_t)n_prompt * sizeof *out);
    // the window is out[start .. n-1]; keep = its length after a crop
    int keep = o->window == WINDOW_EXACT ? Tb : (Tb + 1) / 2;
    int n = n_prompt, start = n > Tb ? n - Tb : 0;
    int cached = -1;   // the window start the cache was filled for
    GenStats st = {0};
    double t0 = time_now();
    for (int step = 0; step < o->max_new_tokens; step++) {
        if (!o->use_cache) {
            // nanoGPT's way: the whole window through the whole stack
            if (gpt_forward_last(m, &d.acts, out + start, n - start,
                                 d.logits, err) != 0)
                goto fail;
            st.prefills++;
        } else if (cached != start) {
            // a new window: every position changed, refill the cache
            if (decoder_fill(&d, out + start, n - start, err) != 0)
                goto fail;
            cached = start;
            st.prefills++;
        } else {
            decoder_step(&d, out[n - 1]);  // the newest token only
        }
        int next = sample_next(d.logits, &o->sample, &s, &rng);
        out[n++] = next;
        st.tokens++;
        if (on_token) on_token(next, ctx);
        if (n - start > Tb) start = n - keep;
    }
    st.seconds = time_now() - t0;
    if (stats) *stats = st;
    sampler_free(&s);
    decoder_free(&d);
    return 0;
fail:
    sampler_free(&s);
    decoder_free(&d);
    return -1;
}
//< generate
