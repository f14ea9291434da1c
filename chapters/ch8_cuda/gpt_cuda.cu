// gpt_cuda.cu - chapter 5's GPT on the GPU (gpt_cuda.cuh). The forward
// and backward passes below are gpt.c's, line for line; what differs is
// where the numbers live, dropout's generator (block.cu says how), and
// that the backward pass sets its activations' gradients (the set forms
// of linear, layernorm, block and dropout) where gpt.c clears each
// buffer and adds into it: a pass over memory each way fewer apiece.
#include "cuda_rt.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "crossentropy.cuh"
#include "dropout.cuh"
#include "embedding.cuh"
#include "gemm.cuh"
#include "gpt_cuda.cuh"
#include "layernorm.cuh"
#include "layout.h"
#include "linear.cuh"
#include "mem.h"
#include "optim.cuh"
}

// ---- the weights -------------------------------------------------------------

// The device pointer at the host pointer p's offset from host_base.
static float *rebase(const float *p, const float *host_base, float *dev) {
    return p ? dev + (p - host_base) : NULL;
}

// Points the views of out at dev with the offsets the views of in have
// from host_base: the same layout, on the device.
static void rebase_weights(GptWeights *out, const GptWeights *in,
                           const float *host_base, float *dev, int L) {
    out->wte = rebase(in->wte, host_base, dev);
    out->wpe = rebase(in->wpe, host_base, dev);
    out->ln_f_w = rebase(in->ln_f_w, host_base, dev);
    out->ln_f_b = rebase(in->ln_f_b, host_base, dev);
    for (int l = 0; l < L; l++) {
        const BlockWeights *h = &in->h[l];
        BlockWeights *d = &out->h[l];
#define REBASE(f) d->f = rebase(h->f, host_base, dev)
        REBASE(ln_1_w), REBASE(ln_1_b), REBASE(attn_c_attn_w);
        REBASE(attn_c_attn_b), REBASE(attn_c_proj_w), REBASE(attn_c_proj_b);
        REBASE(ln_2_w), REBASE(ln_2_b), REBASE(mlp_c_fc_w), REBASE(mlp_c_fc_b);
        REBASE(mlp_c_proj_w), REBASE(mlp_c_proj_b);
#undef REBASE
    }
}

int gpt_cuda_create(GptCuda *d, const Gpt *m, Error *err) {
    memset(d, 0, sizeof *d);
    const GptConfig *c = &m->cfg;
    if (m->cfg.n_layer < 0 || !m->params)
        return error_set(err, "gpt_cuda_create: the host model is empty");
    d->cfg = *c;
    d->num_params = m->num_params;
    d->params = cuda_alloc_floats(m->num_params);
    d->grads = cuda_alloc_floats(m->num_params);
    d->w.h = (BlockWeights *)xcalloc((size_t)c->n_layer + 1, sizeof *d->w.h);
    d->g.h = (BlockWeights *)xcalloc((size_t)c->n_layer + 1, sizeof *d->g.h);
    // the gradients have the weights' layout: the same offsets
    rebase_weights(&d->w, &m->w, m->params, d->params, c->n_layer);
    rebase_weights(&d->g, &m->w, m->params, d->grads, c->n_layer);
    if (m->pos_table) {
        size_t n = (size_t)c->block_size * c->n_embd;
        d->pos_table = cuda_alloc_floats(n);
        cuda_upload(d->pos_table, m->pos_table, n);
    }
    d->pos = d->w.wpe ? d->w.wpe : d->pos_table;
    gpt_cuda_upload(d, m);
    gpt_cuda_zero_grads(d);
    return 0;
}

void gpt_cuda_free(GptCuda *d) {
    cuda_free(d->params);
    cuda_free(d->grads);
    cuda_free(d->pos_table);
    free(d->w.h);
    free(d->g.h);
    memset(d, 0, sizeof *d);
}

void gpt_cuda_upload(GptCuda *d, const Gpt *m) {
    cuda_upload(d->params, m->params, d->num_params);
}

void gpt_cuda_download(const GptCuda *d, Gpt *m) {
    cuda_download(m->params, d->params, d->num_params);
}

void gpt_cuda_zero_grads(GptCuda *d) { cuda_zero(d->grads, d->num_params); }

// ---- the activations -----------------------------------------------------------

// The size table of the activations (common/layout.h), as gpt.c's: per
// layer its cache, then one scratch and the top of the model. t must
// hold 24 * (L + 1) slots; returns how many it wrote.
//> acts-slots-cuda
static int acts_slots(Slot *t, GptCudaActs *a, const GptConfig *c, int B,
                      int T, bool flash, bool dropout) {
    int C = c->n_embd, NH = c->n_head, F = c->n_ffn, L = c->n_layer;
    int V = c->vocab_size;
    size_t bt = (size_t)B * T, btc = bt * C, btf = bt * F;
    size_t bntt = (size_t)B * NH * T * T, bnt = (size_t)B * NH * T;
    size_t mask = dropout ? btc : 0;
    size_t heads = flash ? btc : 0;   // copies of the heads: fused path
    int n = 0;
    for (int l = 0; l < L; l++) {
        BlockCacheCuda *b = &a->blocks[l];
        t[n++] = (Slot){&b->sa.norm, btc};
        t[n++] = (Slot){&b->sa.mean, bt};
        t[n++] = (Slot){&b->sa.rstd, bt};
        t[n++] = (Slot){&b->sa.mask, mask};
        // the fused path shares one qkv and keeps the heads' copies
        t[n++] = (Slot){&b->attn.qkv, !flash ? 3 * btc : l == 0 ? 3 * btc
                                                                : 0};
        t[n++] = (Slot){&b->attn.q, heads};
        t[n++] = (Slot){&b->attn.k, heads};
        t[n++] = (Slot){&b->attn.v, heads};
        t[n++] = (Slot){&b->attn.att, flash ? 0 : bntt};
        t[n++] = (Slot){&b->attn.lse, flash ? bnt : 0};
        t[n++] = (Slot){&b->attn.yh, heads};
        t[n++] = (Slot){&b->attn.y, btc};
        t[n++] = (Slot){&b->res1, btc};
        t[n++] = (Slot){&b->ff.norm, btc};
        t[n++] = (Slot){&b->ff.mean, bt};
        t[n++] = (Slot){&b->ff.rstd, bt};
        t[n++] = (Slot){&b->ff.mask, mask};
        t[n++] = (Slot){&b->mlp.h, btf};
        t[n++] = (Slot){&b->mlp.a, btf};
    }
    BlockScratchCuda *s = &a->scratch;
    t[n++] = (Slot){&s->dres, btc};
    t[n++] = (Slot){&s->dsub, btc};
    t[n++] = (Slot){&s->dy, btc};
    t[n++] = (Slot){&s->attn.dy, btc};
    t[n++] = (Slot){&s->attn.dyh, heads};
    t[n++] = (Slot){&s->attn.dq, heads};
    t[n++] = (Slot){&s->attn.dk, heads};
    t[n++] = (Slot){&s->attn.dv, heads};
    t[n++] = (Slot){&s->attn.datt, flash ? 0 : bntt};
    t[n++] = (Slot){&s->attn.dqkv, 3 * btc};
    t[n++] = (Slot){&s->mlp.dh, btf};
    t[n++] = (Slot){&s->mlp.da, btf};
    t[n++] = (Slot){&a->x0, btc};
    t[n++] = (Slot){&a->emb_mask, mask};
    t[n++] = (Slot){&a->res, (size_t)L * btc};
    t[n++] = (Slot){&a->lnf, btc};
    t[n++] = (Slot){&a->lnf_mean, bt};
    t[n++] = (Slot){&a->lnf_rstd, bt};
    t[n++] = (Slot){&a->logits, bt * V};
    t[n++] = (Slot){&a->dx, btc};
    t[n++] = (Slot){&a->dx2, btc};
    return n;
}
//< acts-slots-cuda

// One view of acts_bf16's walk: set (with base) and counted, rounded up.
static void take16(uint16_t **view, size_t count, uint16_t *base,
                   size_t *total) {
    if (base) *view = count ? base + *total : NULL;
    *total += (count + 15) / 16 * 16;
}

// The bf16 copies the backward pass reads again (bf16 mode): each
// layer's two LayerNorm outputs and c_proj's input y, the GELU's output,
// and on the (T, T) path qkv and the weights (the fused path's backward
// pass multiplies neither); and ln_f's output. In one allocation, each
// copy starting on a 16-value (32-byte) boundary. Returns the values of
// the allocation; with base, also sets the views.
static size_t acts_bf16(GptCudaActs *a, const GptConfig *c, int B, int T,
                        bool flash, uint16_t *base) {
    size_t bt = (size_t)B * T, btc = bt * c->n_embd;
    size_t btf = bt * c->n_ffn, bntt = (size_t)B * c->n_head * T * T;
    size_t total = 0;
    for (int l = 0; l < c->n_layer; l++) {
        BlockCacheCuda *b = &a->blocks[l];
        take16(&b->sa_norm16, btc, base, &total);
        take16(&b->attn.qkv16, flash ? 0 : 3 * btc, base, &total);
        take16(&b->attn.att16, flash ? 0 : bntt, base, &total);
        take16(&b->attn.y16, btc, base, &total);
        take16(&b->ff_norm16, btc, base, &total);
        take16(&b->mlp.a16, btf, base, &total);
    }
    take16(&a->lnf16, btc, base, &total);
    return total;
}

size_t gpt_cuda_acts_floats(const GptConfig *cfg, int B, int T, bool flash,
                            bool dropout) {
    GptCudaActs a;
    memset(&a, 0, sizeof a);
    a.blocks = (BlockCacheCuda *)xcalloc((size_t)cfg->n_layer + 1,
                                         sizeof *a.blocks);
    Slot *t = (Slot *)xmalloc(24 * ((size_t)cfg->n_layer + 1) * sizeof *t);
    size_t n = layout_floats(t, acts_slots(t, &a, cfg, B, T, flash,
                                           dropout));
    free(t);
    free(a.blocks);
    return n;
}

size_t gpt_cuda_acts_bytes(const GptConfig *cfg, int B, int T, bool flash,
                           bool dropout) {
    size_t bytes = gpt_cuda_acts_floats(cfg, B, T, flash, dropout)
                   * sizeof(float) + 2 * (size_t)B * T * sizeof(int);
    if (!gemm_bf16()) return bytes;
    GptCudaActs a;
    memset(&a, 0, sizeof a);
    a.blocks = (BlockCacheCuda *)xcalloc((size_t)cfg->n_layer + 1,
                                         sizeof *a.blocks);
    bytes += acts_bf16(&a, cfg, B, T, flash, NULL) * sizeof(uint16_t);
    free(a.blocks);
    return bytes;
}

int gpt_cuda_acts_alloc(GptCudaActs *a, const GptConfig *cfg, int B, int T,
                        bool flash, bool dropout, Error *err) {
    memset(a, 0, sizeof *a);
    if (B < 1 || T < 1 || T > cfg->block_size)
        return error_set(err, "GPU activations: B=%d T=%d (need B >= 1 and "
                         "1 <= T <= block_size=%d)", B, T, cfg->block_size);
    a->B = B, a->T = T, a->flash = flash, a->dropout = dropout;
    a->blocks = (BlockCacheCuda *)xcalloc((size_t)cfg->n_layer + 1,
                                          sizeof *a->blocks);
    Slot *t = (Slot *)xmalloc(24 * ((size_t)cfg->n_layer + 1) * sizeof *t);
    int n = acts_slots(t, a, cfg, B, T, flash, dropout);
    a->mem = cuda_alloc_floats(layout_floats(t, n));
    layout_point(t, n, a->mem);
    free(t);
    for (int l = 1; flash && l < cfg->n_layer; l++)   // a shared qkv
        a->blocks[l].attn.qkv = a->blocks[0].attn.qkv;
    if (gemm_bf16()) {
        size_t n16 = acts_bf16(a, cfg, B, T, flash, NULL);
        CUDA_CHECK(cudaMalloc((void **)&a->mem16, n16 * sizeof(uint16_t)));
        acts_bf16(a, cfg, B, T, flash, a->mem16);
    }
    a->idx = cuda_alloc_ints((size_t)B * T);
    a->targets = cuda_alloc_ints((size_t)B * T);
    return 0;
}

void gpt_cuda_acts_free(GptCudaActs *a) {
    gemm_bf16_unpin_all();   // no copy may point into freed memory
    cuda_free(a->mem);
    cuda_free(a->mem16);
    cuda_free(a->idx);
    cuda_free(a->targets);
    free(a->blocks);
    memset(a, 0, sizeof *a);
}

// ---- forward and backward ------------------------------------------------------

// gpt.c's checks of a batch, on the host before anything is copied: an
// id outside the vocabulary would read outside wte on the device.
static int check_batch(const GptCuda *m, const GptCudaActs *a,
                       const int *idx, const int *targets, int B, int T,
                       bool dropout, Error *err) {
    const GptConfig *c = &m->cfg;
    if (T < 1 || T > c->block_size)
        return error_set(err, "model: sequence of %d tokens, the model "
                         "takes 1 to block_size=%d", T, c->block_size);
    if (B < 1 || !layout_fits(B, T, a->B, a->T))
        return error_set(err, "model: B=%d T=%d does not fit GPU "
                         "activations allocated for B=%d T=%d", B, T, a->B,
                         a->T);
    if (dropout && !a->dropout)
        return error_set(err, "model: dropout in a pass whose GPU "
                         "activations were allocated without masks");
    return gpt_check_tokens(c, idx, targets, (size_t)B * T, err);
}

//> gpt-forward-cuda
int gpt_step_prepare_cuda(const GptCuda *m, GptCudaActs *a, const int *idx,
                          const int *targets, int B, int T, bool train,
                          Rng *rng, Error *err) {
    const GptConfig *c = &m->cfg;
    float p = train ? c->dropout : 0.0f;
    if (p > 0 && !rng)
        return error_set(err, "model: dropout needs a random generator");
    if (check_batch(m, a, idx, targets, B, T, p > 0, err) != 0) return -1;
    a->seed = 0;
    if (p > 0) a->seed = (uint64_t)rng_u32(rng) << 32 | rng_u32(rng);
    cuda_upload_ints(a->idx, idx, (size_t)B * T);
    if (targets) cuda_upload_ints(a->targets, targets, (size_t)B * T);
    a->cur_B = B, a->cur_T = T, a->dropout_p = p, a->has_targets = targets;
    a->n_targets = 0;   // counted here: the backward pass's scale
    for (size_t i = 0; targets && i < (size_t)B * T; i++)
        a->n_targets += targets[i] >= 0;
    return 0;
}

// The launches of the forward pass over the batch on the device.
static void forward_launches(const GptCuda *m, GptCudaActs *a) {
    const GptConfig *c = &m->cfg;
    int B = a->cur_B, T = a->cur_T;
    int C = c->n_embd, NH = c->n_head, F = c->n_ffn, V = c->vocab_size;
    size_t btc = (size_t)B * T * C;
    float p = a->dropout_p;
    gemm_bf16_unpin_all();   // every activation is about to change
    // x = dropout(wte[idx] + pos)
    embedding_forward_cuda(a->x0, a->idx, m->w.wte, 1.0f, m->pos, B, T, C);
    if (p > 0) dropout_forward_cuda(a->x0, a->emb_mask, a->x0, p, a->seed,
                                    0, btc);
    const float *x = a->x0;
    for (int l = 0; l < c->n_layer; l++) {
        float *out = a->res + l * btc;
        block_forward_cuda(out, &a->blocks[l], x, &m->w.h[l], c->act, p,
                           a->seed, (1 + 2 * (uint64_t)l) * btc, B, T, C, NH,
                           F);
        x = out;
    }
    unsigned long before = cuda_writes();   // (in bf16, with its copy)
    uint16_t *lnf16 = gemm_bf16_copy_begin(a->lnf, btc, a->lnf16);
    layernorm_forward_copy_cuda(a->lnf, lnf16, a->lnf_mean, a->lnf_rstd, x,
                                m->w.ln_f_w, m->w.ln_f_b, B, T, C);
    gemm_bf16_copy_end(before, a->lnf, btc);
    // The head is the embedding matrix: logits = lnf @ wte^T.
    linear_forward_cuda(a->logits, a->lnf, m->w.wte, NULL, B * T, C, V);
    if (a->has_targets)   // the loss, left on the device
        crossentropy_forward_launch_cuda(a->logits, a->targets, B * T, V);
}

int gpt_forward_cuda(const GptCuda *m, GptCudaActs *a, const int *idx,
                     const int *targets, int B, int T, bool train, Rng *rng,
                     float *loss, Error *err) {
    if (gpt_step_prepare_cuda(m, a, idx, targets, B, T, train, rng, err))
        return -1;
    forward_launches(m, a);
    if (targets) {
        float l = crossentropy_forward_read_cuda(B * T, &a->n_targets);
        if (loss) *loss = l;
    }
    return 0;
}
//< gpt-forward-cuda

//> gpt-backward-cuda
void gpt_backward_cuda(GptCuda *m, GptCudaActs *a) {
    const GptConfig *c = &m->cfg;
    int B = a->cur_B, T = a->cur_T, C = c->n_embd, V = c->vocab_size;
    int NH = c->n_head, F = c->n_ffn, L = c->n_layer;
    size_t btc = (size_t)B * T * C;
    if (a->n_targets == 0) return;   // nothing to learn from
    // loss -> logits, in place: softmax minus one-hot, over the count
    float *dlogits = a->logits;
    crossentropy_backward_cuda(dlogits, a->logits, a->targets, B * T, V,
                               1.0f / a->n_targets);
    // logits = lnf @ wte^T: the head's share of wte's gradient, and dlnf
    float *dlnf = a->dx2;
    linear_backward_set_cuda(dlnf, m->g.wte, NULL, dlogits, a->lnf,
                             m->w.wte, B * T, C, V);
    // ln_f, then the blocks from the top down
    const float *top = L > 0 ? a->res + (size_t)(L - 1) * btc : a->x0;
    float *dx = a->dx;
    layernorm_backward_set_cuda(dx, m->g.ln_f_w, m->g.ln_f_b, dlnf, top,
                                m->w.ln_f_w, a->lnf_mean, a->lnf_rstd, B, T,
                                C);
    float *dprev = a->dx2;
    for (int l = L - 1; l >= 0; l--) {
        const float *inp = l > 0 ? a->res + (size_t)(l - 1) * btc : a->x0;
        block_backward_set_cuda(dprev, &m->g.h[l], &a->scratch, dx,
                                &a->blocks[l], inp, &m->w.h[l], B, T, C, NH,
                                F);
        float *t = dx;
        dx = dprev, dprev = t;
    }
    // the embedding dropout, then the embedding: the second share of wte
    if (a->dropout_p > 0)   // in place
        dropout_backward_set_cuda(dx, dx, a->emb_mask, btc);
    embedding_backward_cuda(m->g.wte, m->g.wpe, dx, a->idx, 1.0f, B, T, C,
                            V);
}
//< gpt-backward-cuda

//> gpt-step-cuda
// A training step's launches, no copy and no wait among them: what a
// graph can record (gpt_train.cu).
void gpt_step_launches_cuda(GptCuda *m, GptCudaActs *a, float max_norm) {
    gpt_cuda_zero_grads(m);
    forward_launches(m, a);
    gpt_backward_cuda(m, a);
    clip_grad_norm_launch_cuda(m->grads, m->num_params, max_norm);
}
//< gpt-step-cuda
