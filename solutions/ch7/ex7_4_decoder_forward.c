// Exercise 7.4 - reference answer: chapter 4's two wrapped sub-layers for
// self-attention and the FFN, and the cross-attention wrapped by hand in
// between: its queries are ln_2 of the stream, its keys and values the
// memory as it is.
#include "block.h"
#include "ch7_exercises.h"
#include "residual.h"
#include "xattn.h"

int ex_decoder_forward(float *out, DecoderCache *cache, const float *x,
                       const float *memory, const DecoderWeights *w,
                       const int *tgt_mask, const int *src_mask,
                       Activation act, int B, int T, int Tk, int C, int NH,
                       int F, Error *err) {
    DecoderCache *c = cache;
    // res1 = x + self_attn(ln_1(x)), causal, the target's padding
    if (attn_sublayer_forward(c->res1, &c->sa, &c->self_attn, x, w->ln_1_w,
                              w->ln_1_b, w->self_attn_c_attn_w,
                              w->self_attn_c_attn_b, w->self_attn_c_proj_w,
                              w->self_attn_c_proj_b, tgt_mask, true, 0.0f,
                              NULL, B, T, C, NH, err) != 0)
        return -1;
    // res2 = res1 + cross_attn(ln_2(res1), memory), the source's padding
    sublayer_norm(&c->ca, c->res1, w->ln_2_w, w->ln_2_b, B, T, C);
    if (xattn_forward(c->res2, &c->cross_attn, c->ca.norm, memory,
                      w->cross_attn_q_proj_w, w->cross_attn_q_proj_b,
                      w->cross_attn_kv_proj_w, w->cross_attn_kv_proj_b,
                      w->cross_attn_out_proj_w, w->cross_attn_out_proj_b,
                      src_mask, B, T, Tk, C, NH, err) != 0
        || sublayer_add(c->res2, &c->ca, c->res1, 0.0f, NULL,
                        (size_t)B * T * C, err) != 0)
        return -1;
    // out = res2 + mlp(ln_3(res2))
    return ffn_sublayer_forward(out, &c->ff, &c->mlp, c->res2, w->ln_3_w,
                                w->ln_3_b, w->mlp_c_fc_w, w->mlp_c_fc_b,
                                w->mlp_c_proj_w, w->mlp_c_proj_b, act, 0.0f,
                                NULL, B, T, C, F, err);
}
