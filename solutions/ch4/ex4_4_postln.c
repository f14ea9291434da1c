// Exercise 4.4 - reference answer: the sub-layers of chapters 2 and 3 and
// this chapter's LayerNorm, composed in the Post-LN order.
#include <stdlib.h>

#include "ch4_exercises.h"
#include "layernorm.h"
#include "mem.h"

void ex_postln_block_forward(float *out, const float *inp,
                             const BlockWeights *w, int B, int T, int C,
                             int NH, int F) {
    size_t n = (size_t)B * T * C;
    float *h = alloc_floats(n), *s = alloc_floats(n);
    float *mean = alloc_floats((size_t)B * T), *rstd = alloc_floats(
        (size_t)B * T);
    MhaCache ac;
    FfnCache fc;
    if (mha_cache_alloc(&ac, B, T, C, NH, NULL) != 0
        || ffn_cache_alloc(&fc, B, T, C, F, NULL) != 0)
        abort();
    // h = ln_1(inp + attn(inp))
    mha_forward(s, &ac, inp, w->attn_c_attn_w, w->attn_c_attn_b,
                w->attn_c_proj_w, w->attn_c_proj_b, NULL, true, B, T, C, NH,
                NULL);
    for (size_t i = 0; i < n; i++) s[i] += inp[i];
    layernorm_forward(h, mean, rstd, s, w->ln_1_w, w->ln_1_b, B, T, C);
    // out = ln_2(h + mlp(h))
    ffn_forward(s, &fc, h, w->mlp_c_fc_w, w->mlp_c_fc_b, w->mlp_c_proj_w,
                w->mlp_c_proj_b, GELU_EXACT, B, T, C, F, NULL);
    for (size_t i = 0; i < n; i++) s[i] += h[i];
    layernorm_forward(out, mean, rstd, s, w->ln_2_w, w->ln_2_b, B, T, C);
    mha_cache_free(&ac);
    ffn_cache_free(&fc);
    free(h), free(s), free(mean), free(rstd);
}
