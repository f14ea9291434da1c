// block.cu - chapter 4's Pre-LN block on the GPU: block.c's two wrapped
// sub-layers, call for call,
//
//   res1 = x    + dropout(attn(ln_1(x)))
//   out  = res1 + dropout(mlp(ln_2(res1)))
//
// with every call a GPU call. Three differences from the CPU: the dropout
// masks come from a counter-based generator (seed, counter) instead of the
// CPU's sequential one, so they are not the CPU's masks (the step check
// compares without dropout; dropout.cu is checked on its own), a model
// without dropout keeps no masks at all (mask NULL), and the backward
// pass sets its gradients where the CPU clears them and adds: the
// scratch dres and dy (sublayer_add_backward_set_cuda), dsub (the
// sub-layers' set forms), and dinp, whence block_backward_set_cuda (the
// weights' gradients still add up). A pass over memory each way fewer
// for each.
#include "cuda_rt.h"

extern "C" {
#include "block.cuh"
#include "dropout.cuh"
#include "gemm.cuh"
#include "layernorm.cuh"
#include "residual.cuh"
}

// The fused forms (the default) or the plain ones, for the whole program.
static bool fused = true;

void block_set_fused(bool on) { fused = on; }
bool block_fused(void) { return fused; }

//> block-forward-cuda
static void block_forward_plain(float *out, BlockCacheCuda *cache,
                                const float *inp, const BlockWeights *w,
                                Activation act, float dropout_p,
                                uint64_t seed, uint64_t offset, int B, int T,
                                int C, int NH, int F) {
    BlockCacheCuda *c = cache;
    size_t n = (size_t)B * T * C;
    if (dropout_p > 0 && (!c->sa.mask || !c->ff.mask))
        die("block_forward_cuda: dropout %g, but the cache has no masks",
            dropout_p);
    // res1 = x + dropout(attn(ln_1(x)))
    unsigned long before = cuda_writes();   // (in bf16, with its copy)
    uint16_t *norm16 = gemm_bf16_copy_begin(c->sa.norm, n, c->sa_norm16);
    layernorm_forward_copy_cuda(c->sa.norm, norm16, c->sa.mean, c->sa.rstd,
                                inp, w->ln_1_w, w->ln_1_b, B, T, C);
    gemm_bf16_copy_end(before, c->sa.norm, n);
    mha_forward_cuda(c->res1, &c->attn, c->sa.norm, w->attn_c_attn_w,
                     w->attn_c_attn_b, w->attn_c_proj_w, w->attn_c_proj_b,
                     NULL, true, B, T, C, NH);
    sublayer_add_cuda(c->res1, c->sa.mask, inp, dropout_p, seed, offset, n);
    // out = res1 + dropout(mlp(ln_2(res1)))
    before = cuda_writes();
    norm16 = gemm_bf16_copy_begin(c->ff.norm, n, c->ff_norm16);
    layernorm_forward_copy_cuda(c->ff.norm, norm16, c->ff.mean, c->ff.rstd,
                                c->res1, w->ln_2_w, w->ln_2_b, B, T, C);
    gemm_bf16_copy_end(before, c->ff.norm, n);
    ffn_forward_cuda(out, &c->mlp, c->ff.norm, w->mlp_c_fc_w, w->mlp_c_fc_b,
                     w->mlp_c_proj_w, w->mlp_c_proj_b, act, B, T, C, F);
    sublayer_add_cuda(out, c->ff.mask, c->res1, dropout_p, seed, offset + n,
                      n);
    c->dropout_p = dropout_p;
    c->act = act;
}
//< block-forward-cuda

//> block-backward-cuda
static void block_backward_plain(float *dinp, const BlockWeights *g,
                                 BlockScratchCuda *scratch,
                                 const float *dout,
                                 const BlockCacheCuda *cache,
                                 const float *inp, const BlockWeights *w,
                                 int B, int T, int C, int NH, int F) {
    BlockScratchCuda *s = scratch;
    const BlockCacheCuda *c = cache;
    size_t n = (size_t)B * T * C;
    bool dropped = c->dropout_p > 0;   // else: no masks, nothing dropped
    // out = res1 + dropout(mlp(ln_2(res1))): dout reaches res1 by the
    // skip, and through the mlp and ln_2 (dres and dy set: their first
    // terms)
    sublayer_add_backward_set_cuda(s->dres, false, s->dy, dout,
                                   dropped ? c->ff.mask : NULL, n);
    ffn_backward_set_cuda(s->dsub, g->mlp_c_fc_w, g->mlp_c_fc_b,
                          g->mlp_c_proj_w, g->mlp_c_proj_b, &s->mlp, s->dy,
                          &c->mlp, c->ff.norm, w->mlp_c_fc_w,
                          w->mlp_c_proj_w, c->act, B, T, C, F);
    layernorm_backward_cuda(s->dres, g->ln_2_w, g->ln_2_b, s->dsub, c->res1,
                            w->ln_2_w, c->ff.mean, c->ff.rstd, B, T, C);
    // res1 = inp + dropout(attn(ln_1(inp))): the same again, into dinp
    // (set by the skip, then added to)
    sublayer_add_backward_set_cuda(dinp, false, s->dy, s->dres,
                                   dropped ? c->sa.mask : NULL, n);
    mha_backward_set_cuda(s->dsub, g->attn_c_attn_w, g->attn_c_attn_b,
                          g->attn_c_proj_w, g->attn_c_proj_b, &s->attn,
                          s->dy, &c->attn, c->sa.norm, w->attn_c_attn_w,
                          w->attn_c_proj_w, B, T, C, NH);
    layernorm_backward_cuda(dinp, g->ln_1_w, g->ln_1_b, s->dsub, inp,
                            w->ln_1_w, c->sa.mean, c->sa.rstd, B, T, C);
}
//< block-backward-cuda

// ---- the fused forms ----------------------------------------------------
// The same block with fewer passes over memory (the chapter's "Fewer
// passes, fewer launches" counts them). Forward: the attention's c_proj
// writes its product without the bias, and one kernel adds the bias,
// drops out, adds the stream and normalises it for the FFN
// (residual_layernorm_forward_cuda); the FFN adds c_fc's bias in its
// GELU's pass and leaves c_proj's to the last add (sublayer_bias_add_
// cuda). Backward: without dropout, the gradient that reaches a
// sub-layer's output is the block's dout itself, so it is passed as it
// is (no pass copies it), and the skip's term joins LayerNorm's in
// LayerNorm's own pass (layernorm_backward_skip_cuda). With dropout, one
// pass per sub-layer applies the mask.

//> block-fused-cuda
static void block_forward_fused(float *out, BlockCacheCuda *c,
                                const float *inp, const BlockWeights *w,
                                Activation act, float p, uint64_t seed,
                                uint64_t offset, int B, int T, int C, int NH,
                                int F) {
    int N = B * T;
    size_t n = (size_t)N * C;
    if (p > 0 && (!c->sa.mask || !c->ff.mask))
        die("block_forward_cuda: dropout %g, but the cache has no masks", p);
    unsigned long before = cuda_writes();   // ln_1, as the plain form
    uint16_t *norm16 = gemm_bf16_copy_begin(c->sa.norm, n, c->sa_norm16);
    layernorm_forward_copy_cuda(c->sa.norm, norm16, c->sa.mean, c->sa.rstd,
                                inp, w->ln_1_w, w->ln_1_b, B, T, C);
    gemm_bf16_copy_end(before, c->sa.norm, n);
    // res1 = x + dropout(attn(ln_1(x))), c_proj's bias added here, and
    // ln_2(res1) in the same pass (which also writes res1, the mask and
    // the statistics: no product reads those, so no bf16 copy of them
    // can go stale)
    mha_forward_cuda(c->res1, &c->attn, c->sa.norm, w->attn_c_attn_w,
                     w->attn_c_attn_b, w->attn_c_proj_w, NULL, NULL, true,
                     B, T, C, NH);
    before = cuda_writes();
    norm16 = gemm_bf16_copy_begin(c->ff.norm, n, c->ff_norm16);
    residual_layernorm_forward_cuda(c->res1, c->ff.norm, norm16, c->ff.mean,
                                    c->ff.rstd, c->sa.mask, inp, c->res1,
                                    w->attn_c_proj_b, p, seed, offset,
                                    w->ln_2_w, w->ln_2_b, N, C);
    gemm_bf16_copy_end(before, c->ff.norm, n);
    // out = res1 + dropout(mlp(ln_2(res1))), c_proj's bias added here
    ffn_forward_fused_cuda(out, &c->mlp, c->ff.norm, w->mlp_c_fc_w,
                           w->mlp_c_fc_b, w->mlp_c_proj_w, act, B, T, C,
                           F);
    sublayer_bias_add_cuda(out, c->ff.mask, c->res1, w->mlp_c_proj_b, p,
                           seed, offset + n, N, C);
    c->dropout_p = p;
    c->act = act;
}

static void block_backward_fused(float *dinp, const BlockWeights *g,
                                 BlockScratchCuda *s, const float *dout,
                                 const BlockCacheCuda *c, const float *inp,
                                 const BlockWeights *w, int B, int T, int C,
                                 int NH, int F) {
    size_t n = (size_t)B * T * C;
    bool dropped = c->dropout_p > 0;
    // out = res1 + dropout(mlp(ln_2(res1))): the mlp's output gets dout
    // (times the mask); res1 gets dout by the skip, added in ln_2's pass
    const float *dy = dout;
    if (dropped) {
        dropout_backward_set_cuda(s->dy, dout, c->ff.mask, n);
        dy = s->dy;
    }
    ffn_backward_fused_set_cuda(s->dsub, g->mlp_c_fc_w, g->mlp_c_fc_b,
                                g->mlp_c_proj_w, g->mlp_c_proj_b, &s->mlp,
                                dy, &c->mlp, c->ff.norm, w->mlp_c_fc_w,
                                w->mlp_c_fc_b, w->mlp_c_proj_w, c->act, B,
                                T, C, F);
    layernorm_backward_skip_cuda(s->dres, dout, g->ln_2_w, g->ln_2_b,
                                 s->dsub, c->res1, w->ln_2_w, c->ff.mean,
                                 c->ff.rstd, B, T, C);
    // res1 = inp + dropout(attn(ln_1(inp))): the same again, into dinp
    dy = s->dres;
    if (dropped) {
        dropout_backward_set_cuda(s->dy, s->dres, c->sa.mask, n);
        dy = s->dy;
    }
    mha_backward_set_cuda(s->dsub, g->attn_c_attn_w, g->attn_c_attn_b,
                          g->attn_c_proj_w, g->attn_c_proj_b, &s->attn, dy,
                          &c->attn, c->sa.norm, w->attn_c_attn_w,
                          w->attn_c_proj_w, B, T, C, NH);
    layernorm_backward_skip_cuda(dinp, s->dres, g->ln_1_w, g->ln_1_b,
                                 s->dsub, inp, w->ln_1_w, c->sa.mean,
                                 c->sa.rstd, B, T, C);
}
//< block-fused-cuda

void block_forward_cuda(float *out, BlockCacheCuda *cache, const float *inp,
                        const BlockWeights *w, Activation act,
                        float dropout_p, uint64_t seed, uint64_t offset,
                        int B, int T, int C, int NH, int F) {
    (fused ? block_forward_fused : block_forward_plain)(
        out, cache, inp, w, act, dropout_p, seed, offset, B, T, C, NH, F);
}

void block_backward_set_cuda(float *dinp, const BlockWeights *g,
                             BlockScratchCuda *scratch, const float *dout,
                             const BlockCacheCuda *cache, const float *inp,
                             const BlockWeights *w, int B, int T, int C,
                             int NH, int F) {
    (fused ? block_backward_fused : block_backward_plain)(
        dinp, g, scratch, dout, cache, inp, w, B, T, C, NH, F);
}
