// ch7 - the encoder-decoder Transformer. A placeholder while the chapter's
// program is written: cross-attention and one Pre-LN decoder layer on a
// small random batch with padding, and the cross-attention weights of one
// head for one sentence. (The loss is in smoothing.c.)
//
//   ./ch7                  the defaults
//   ./ch7 --head 2 --seed 7
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "decoder.h"
#include "error.h"
#include "flags.h"
#include "mem.h"
#include "rng.h"
#include "xattn.h"

enum { B = 2, TQ = 5, TK = 6, C = 16, NH = 4, F = 64 };

// Source: sentence 0 has 6 real tokens, sentence 1 four and 2 of padding.
// Target: sentence 0 has 5 real positions, sentence 1 three.
static const int SRC_MASK[B * TK] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0};
static const int TGT_MASK[B * TQ] = {1, 1, 1, 1, 1, 1, 1, 1, 0, 0};

// Matrices N(0, 1/fan_in), biases 0, LayerNorm weights 1.
static void init_weights(const DecoderWeights *w, Rng *rng) {
    BlockTensor t[DECODER_MAX_TENSORS];
    int n = decoder_tensors(t, w, C, F);
    for (int i = 0; i < n; i++) {
        size_t len = (size_t)t[i].shape[0]
                     * (t[i].ndim == 2 ? t[i].shape[1] : 1);
        if (t[i].ndim == 2)
            rng_normal_fill(rng, t[i].data, len, 0.0f,
                            1.0f / sqrtf((float)t[i].shape[1]));
        else if (t[i].name[0] == 'l' && t[i].name[5] == 'w')  // ln_*.weight
            for (size_t j = 0; j < len; j++) t[i].data[j] = 1.0f;
    }
}

// The weights of head h for sentence b: target rows, source columns.
static void show_weights(const XattnCache *c, int b, int h) {
    printf("cross-attention weights, sentence %d, head %d (rows: target "
           "positions,\ncolumns: source positions)\n", b, h);
    printf("     ");
    for (int s = 0; s < TK; s++) {
        char label[16];
        snprintf(label, sizeof label, SRC_MASK[b * TK + s] ? "src %d"
                                                             : "pad %d", s);
        printf("%8s", label);
    }
    printf("\n");
    for (int t = 0; t < TQ; t++) {
        const float *row = c->att + (((size_t)b * NH + h) * TQ + t) * TK;
        printf("tgt %d", t);
        for (int s = 0; s < TK; s++) printf("%8.3f", (double)row[s]);
        printf("\n");
    }
}

int main(int argc, char **argv) {
    error_set_progname(argv[0]);
    int head = 0;
    uint64_t seed = 1337;
    Flag flags[] = {
        {"head", FLAG_INT, &head, "the head whose weights are shown"},
        {"seed", FLAG_U64, &seed, "random seed of inputs and weights"},
    };
    flags_parse(argc, argv, flags, sizeof flags / sizeof flags[0],
                "Chapter 7: runs cross-attention and one Pre-LN decoder "
                "layer on a small\nrandom batch with source and target "
                "padding, and prints one head's\ncross-attention weights.");
    if (head < 0 || head >= NH) flags_fail("--head must be in 0..%d", NH - 1);

    Rng rng;
    rng_seed(&rng, seed);
    size_t n = decoder_param_count(C, F, true);
    float *params = alloc_floats(n);
    DecoderWeights w;
    decoder_weights_point(&w, params, C, F, true);
    init_weights(&w, &rng);
    float *x = alloc_floats(B * TQ * C), *memory = alloc_floats(B * TK * C);
    float *out = alloc_floats(B * TQ * C);
    rng_normal_fill(&rng, x, B * TQ * C, 0.0f, 1.0f);
    rng_normal_fill(&rng, memory, B * TK * C, 0.0f, 1.0f);

    Error err;
    XattnCache xc;
    DecoderCache dc;
    if (xattn_cache_alloc(&xc, B, TQ, TK, C, NH, &err) != 0
        || xattn_forward(out, &xc, x, memory, w.cross_attn_q_proj_w,
                         w.cross_attn_q_proj_b, w.cross_attn_kv_proj_w,
                         w.cross_attn_kv_proj_b, w.cross_attn_out_proj_w,
                         w.cross_attn_out_proj_b, SRC_MASK, B, TQ, TK, C, NH,
                         &err) != 0)
        die("%s", err.msg);
    printf("== Chapter 7: cross-attention and a decoder layer ==\n");
    printf("B=%d target T=%d source Tk=%d C=%d NH=%d F=%d, %zu parameters "
           "per decoder layer\n\n", B, TQ, TK, C, NH, F, n);
    show_weights(&xc, 1, head);
    if (decoder_cache_alloc(&dc, B, TQ, TK, C, NH, F, &err) != 0
        || decoder_forward(out, &dc, x, memory, &w, TGT_MASK, SRC_MASK, RELU,
                           0.0f, NULL, B, TQ, TK, C, NH, F, &err) != 0)
        die("%s", err.msg);
    printf("\ndecoder layer (ReLU FFN): out[0, 0, 0..3] = %.4f %.4f %.4f "
           "%.4f\n", (double)out[0], (double)out[1], (double)out[2],
           (double)out[3]);
    xattn_cache_free(&xc);
    decoder_cache_free(&dc);
    free(params), free(x), free(memory), free(out);
    return 0;
}
