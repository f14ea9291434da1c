// gpt.h - the whole GPT: nanoGPT's model, written out in C.
//
//   x      = wte[idx] + pos                 (B,T,C) token + position
//            pos: the learned table wpe (block_size, C), or the fixed
//            sinusoidal table (positional.h), which is not a parameter
//   x      = dropout(x)
//   x      = block_l(x), l = 0 .. n_layer-1 (chapter 4's Pre-LN block)
//   h      = ln_f(x)                        (B,T,C)
//   logits = h @ wte^T                      (B,T,V) the head is wte itself
//   loss   = mean over targets != -1 of -log softmax(logits)[target]
//
// Every parameter lives in one contiguous buffer (params) and every
// gradient in another of the same layout (grads); the model's named
// pointers are views into them, in nanoGPT's state_dict order. The LM head
// is tied to the token embedding: there is one matrix, and its gradient
// gathers both uses.
#ifndef CH5_GPT_H
#define CH5_GPT_H

#include <stdbool.h>
#include <stddef.h>

#include "activation.h"
#include "block.h"
#include "error.h"
#include "rng.h"

typedef enum { POS_LEARNED, POS_SINUSOIDAL } PosKind;

//> gpt-config
typedef struct {
    int vocab_size;     // V: characters in the vocabulary
    int block_size;     // the longest context the model sees
    int n_layer;        // L: blocks
    int n_head;         // NH: attention heads per block
    int n_embd;         // C: channels
    int n_ffn;          // F: hidden units of each FFN (GPT-2: 4C)
    float dropout;      // in training, after the embeddings and each
                        // sub-layer; 0 turns it off
    bool bias;          // biases in every Linear and LayerNorm (GPT-2)
    PosKind positional; // learned wpe, or the fixed sinusoidal table
    Activation act;     // the FFN's GELU: GELU_EXACT (nanoGPT) or
                        // GELU_TANH (GPT-2)
} GptConfig;
//< gpt-config

// The course notes' model: V from the data, block 128, 4 layers, 4 heads, 128
// wide, FFN 512, dropout 0.1, no biases, learned positions, exact GELU.
GptConfig gpt_config_default(int vocab_size);

// 0 when every field is usable (all sizes >= 1, n_embd a multiple of
// n_head, dropout in [0, 1), nothing so large that a tensor overflows,
// act one of the two GELUs), else -1 with a message naming the field.
int gpt_config_check(const GptConfig *cfg, Error *err);

// GPT-2's FFN width for n_embd channels: 4 * n_embd (INT_MAX when that
// overflows, which gpt_config_check then refuses as too large).
int gpt_ffn_width(int n_embd);

// "learned" / "sinusoidal", and back (-1 for anything else).
const char *pos_kind_name(PosKind k);
int pos_kind_parse(const char *s, PosKind *out);

// "exact" / "tanh" (chapter 3's activation_name), and back: -1 for
// anything else, RELU's "relu" included (a GPT's FFN is a GELU).
int gelu_kind_parse(const char *s, Activation *out);

//> gpt-weights
// The weights of the whole model (or their gradients): views into one
// buffer. wpe is NULL with sinusoidal positions; the biases are NULL
// without bias.
typedef struct {
    float *wte;          // (V, C)  token embedding, also the LM head
    float *wpe;          // (block_size, C) or NULL
    BlockWeights *h;     // n_layer blocks
    float *ln_f_w;       // (C,)
    float *ln_f_b;       // (C,) or NULL
} GptWeights;

// One named tensor of the model, in nanoGPT's state_dict order.
typedef struct {
    char name[64];       // "transformer.h.0.attn.c_attn.weight"
    size_t offset;       // where it starts in params (and grads)
    int ndim;            // 1 or 2
    int shape[2];
    bool decay;          // 2-D: gets weight decay in chapter 6's AdamW
} GptTensor;

// Describes the view data of a model whose parameters start at params
// as the next entry of a tensor list: t[*n], then *n += 1. Chapter 7's
// encoder-decoder lists its tensors the same way.
void tensor_list_add(GptTensor *t, int *n, const float *params,
                     const char *name, const float *data, int ndim, int d0,
                     int d1);

typedef struct {
    GptConfig cfg;
    size_t num_params;   // the length of params and grads
    float *params;       // every parameter, contiguous
    float *grads;        // the same layout; NULL until gpt_alloc_grads
    GptWeights w;        // views into params
    GptWeights g;        // views into grads (all NULL without grads)
    GptTensor *tensors;  // n_tensors of them
    int n_tensors;
    float *pos_table;    // (block_size, C) sinusoidal table, or NULL
} Gpt;
//< gpt-weights

// Allocates the model for cfg (checked first) with every parameter 0.
// Returns 0, or -1 with a message. gpt_free releases and clears.
int gpt_create(Gpt *m, const GptConfig *cfg, Error *err);
void gpt_free(Gpt *m);
int gpt_alloc_grads(Gpt *m, Error *err);
void gpt_zero_grads(Gpt *m);

// GPT-2's initialisation, drawn from rng in state_dict order: every
// Linear and Embedding weight normal(0, 0.02), except the two residual
// projections of each block (attn.c_proj, mlp.c_proj), normal(0,
// 0.02 / sqrt(2 * n_layer)); biases 0; LayerNorm weights 1.
void gpt_init(Gpt *m, Rng *rng);

// Parameters by the formula, the tied head counted once:
//   V*C + block_size*C (learned positions only) + C (ln_f) + L * (12C^2 + 2C)
// and with bias, C more for ln_f and 11C more per block. Equals the
// num_params of a created model.
size_t gpt_param_count(const GptConfig *cfg);

// The length of the tensor list of a model of L layers, at most: every
// block has at most BLOCK_MAX_TENSORS, and wte, wpe and ln_f two more.
size_t gpt_max_tensors(int L);

// The floats' worth that gpt_create allocates for cfg: the parameters,
// the sinusoidal table, the tensor list and the blocks' views.
size_t gpt_model_floats(const GptConfig *cfg);

// The forward pass's memory for B sequences of up to T tokens: the
// residual stream after each layer, every block's cache, ln_f, logits and
// the cross-entropy's rows. One GptActs per (B, T) shape in use; the
// model's weights are not in it, so many may share one model.
typedef struct {
    int B, T;            // the most it was allocated for
    int cur_B, cur_T;    // the shape of the last forward pass
    float *x0;           // (B,T,C) embeddings, after dropout
    float *emb_mask;     // (B,T,C) their dropout mask
    float *res;          // (L, B,T,C) the stream after each block
    BlockCache *blocks;  // L caches
    BlockScratch scratch;// one for every block's backward pass
    float *lnf;          // (B,T,C) ln_f's output
    float *lnf_mean, *lnf_rstd;  // (B,T)
    float *logits;       // (B,T,V)
    float *dlogits;      // (B,T,V)
    float *dx;           // (B,T,C) gradient of the stream
    float *dx2;          // (B,T,C) the same, for the next layer down,
                         // and first the gradient of ln_f's output
    float dropout_p;     // of the last forward pass
    int n_targets;       // targets that were not -1 in it
    float *mem;
} GptActs;

int gpt_acts_alloc(GptActs *a, const GptConfig *cfg, int B, int T,
                   Error *err);

// The floats gpt_acts_alloc allocates for (cfg, B, T), from the same
// tables, without allocating: what a memory report shows and what a
// program checks before it allocates.
size_t gpt_acts_floats(const GptConfig *cfg, int B, int T);

// The floats' worth that gpt_score allocates for a text of n ids.
size_t gpt_score_floats(const GptConfig *cfg, size_t n);
void gpt_acts_free(GptActs *a, const GptConfig *cfg);

//> gpt-api
// The forward pass over idx (B, T), T <= block_size, every id in [0, V).
// Fills a->logits (B, T, V). With targets (B, T) (-1 = ignore), *loss is
// the mean cross-entropy over the other targets (0 when all are -1); with
// targets NULL, loss may be NULL. train: dropout at cfg.dropout, drawn
// from rng; otherwise none and rng may be NULL. Returns 0, or -1 with a
// message (bad id, T too long, shape beyond a).
int gpt_forward(const Gpt *m, GptActs *a, const int *idx,
                const int *targets, int B, int T, bool train, Rng *rng,
                float *loss, Error *err);

// 0 when each of the n ids is in [0, V) and each target (when targets is
// not NULL) is -1 or in [0, V); else -1 with a message naming the first
// that is not. gpt_forward checks its batch with it, and so does chapter
// 8's GPU model, before ids it would use as indices leave the host.
int gpt_check_tokens(const GptConfig *cfg, const int *idx,
                     const int *targets, size_t n, Error *err);

// Inference on one sequence idx (T,), dropout off: the stack runs on all
// T tokens, but ln_f and the head only on the last one, whose V logits
// go to logits. Returns 0, or -1 with a message.
int gpt_forward_last(const Gpt *m, GptActs *a, const int *idx, int T,
                     float *logits, Error *err);

// The mean next-token loss of a text (ids, n of them) over its
// non-overlapping windows: x = ids[i .. i+T-1], y = ids[i+1 .. i+T] for
// i = 0, T, 2T, ... while i + T + 1 <= n, with T = block_size (what
// ./ch5 --score prints). -1 with a message when n < T + 1.
int gpt_score(const Gpt *m, const int *ids, size_t n, double *loss,
              Error *err);

// The backward pass of the last gpt_forward on a (which had targets):
// accumulates (+=) d loss / d params into m->grads.
void gpt_backward(Gpt *m, GptActs *a, const int *idx, const int *targets);
//< gpt-api

#endif
