// seq2seq.h - the whole encoder-decoder Transformer of "Attention Is All
// You Need", Pre-LN as the Annotated Transformer builds it:
//
//   source ids (B, S) -> embed * sqrt(C) + sinusoid -> dropout
//                     -> n_enc encoder layers (chapter 4's block, not
//                        causal, the source padding mask, ReLU)
//                     -> LayerNorm                      = the memory
//   target ids (B, T) -> embed * sqrt(C) + sinusoid -> dropout
//                     -> n_dec decoder layers (decoder.h: each reads the
//                        memory)
//                     -> LayerNorm -> generator         = logits (B, T, V)
//
// and the loss of chapter 7's smoothing.h on the logits. The target the
// decoder reads is the sentence shifted right: <bos> y1 y2 ... and the
// one it predicts is y1 y2 ... <eos>. Padding is one id (cfg.pad) in
// both: the masks are made from it, so the model never reads a pad and
// the loss ignores every pad target.
//
// With tie (the default) source and target share one vocabulary and one
// embedding matrix, which is also the generator's weight: three uses of
// one (V, C) tensor, as in section 3.4 of the paper. Without it the
// model has three (src_embed, tgt_embed, generator).
//
// Every parameter is in one buffer (params), every gradient in another
// of the same layout (grads), with named views, as chapter 5's GPT; the
// names are those of the PyTorch module in tests/reference/gen_ch7_model.py.
#ifndef CH7_SEQ2SEQ_H
#define CH7_SEQ2SEQ_H

#include <stdbool.h>
#include <stddef.h>

#include "block.h"
#include "decoder.h"
#include "error.h"
#include "gpt.h"
#include "rng.h"
#include "smoothing.h"

//> seq2seq-config
typedef struct {
    int src_vocab;      // source ids are in [0, src_vocab)
    int tgt_vocab;      // target ids in [0, tgt_vocab); = src_vocab if tie
    int max_len;        // the longest source or target (the sinusoid table)
    int n_enc, n_dec;   // encoder and decoder layers
    int n_head;         // NH: attention heads in every attention
    int n_embd;         // C: d_model
    int n_ffn;          // F: hidden units of each FFN (the paper: 4C)
    float dropout;      // after the embeddings and every sub-layer
    bool bias;          // biases in every Linear and LayerNorm
    bool tie;           // one embedding for source, target and generator
    Activation act;       // the FFNs' activation: RELU (the paper) or GELU
    int pad;            // the padding id, the same in both vocabularies
} Seq2SeqConfig;
//< seq2seq-config

// A small model for the synthetic tasks: C 64, 2 + 2 layers, 4 heads,
// ReLU, tied, bias, no dropout, pad 0.
Seq2SeqConfig seq2seq_config_default(int vocab_size, int max_len);

// 0, or -1 with a message naming the first bad field.
int seq2seq_config_check(const Seq2SeqConfig *cfg, Error *err);

typedef struct {
    float *src_embed;     // (Vs, C)
    float *tgt_embed;     // (Vt, C): src_embed when tied
    float *generator;     // (Vt, C): src_embed when tied
    BlockWeights *enc;    // n_enc encoder layers
    float *enc_ln_w, *enc_ln_b;   // (C,) the encoder's final LayerNorm
    DecoderWeights *dec;  // n_dec decoder layers
    float *dec_ln_w, *dec_ln_b;   // (C,) the decoder's
} Seq2SeqWeights;

typedef struct {
    Seq2SeqConfig cfg;
    size_t num_params;
    float *params, *grads;    // grads NULL until seq2seq_alloc_grads
    Seq2SeqWeights w, g;      // views into params and grads
    GptTensor *tensors;       // every tensor: name, offset, shape, decay
    int n_tensors;
    float *pos_table;         // (max_len, C) the sinusoids
} Seq2Seq;

// 0, or -1 with a message for a bad config. The parameters are zero until
// seq2seq_init or a load.
int seq2seq_create(Seq2Seq *m, const Seq2SeqConfig *cfg, Error *err);
void seq2seq_free(Seq2Seq *m);
int seq2seq_alloc_grads(Seq2Seq *m, Error *err);
void seq2seq_zero_grads(Seq2Seq *m);
size_t seq2seq_param_count(const Seq2SeqConfig *cfg);

// The length of a model's tensor list, at most, and the floats' worth
// that seq2seq_create allocates: the parameters, the sinusoids, the
// tensor list and the layers' views.
size_t seq2seq_max_tensors(const Seq2SeqConfig *cfg);
size_t seq2seq_model_floats(const Seq2SeqConfig *cfg);

// Xavier-uniform (Glorot) for every matrix, the embedding included, as
// the Annotated Transformer: U(-a, a), a = sqrt(6 / (fan_in + fan_out));
// biases 0, LayerNorm weights 1.
void seq2seq_init(Seq2Seq *m, Rng *rng);

// What a forward pass keeps for the backward pass, for B sentences of S
// source and T target tokens, counted in tokens: it holds any batch of B'
// sentences with S' <= S, T' <= T, B'S' <= BS and B'T' <= BT (a batch of
// short sentences has more of them), packed at the front of every buffer.
typedef struct Seq2SeqActs Seq2SeqActs;

//> seq2seq-api
// The forward pass of a batch: the encoder over src, the decoder over
// tgt_in, the logits, and with tgt_out the label-smoothed loss (eps in
// [0, 1); 0: plain cross-entropy) over its non-pad targets. train: with
// the config's dropout (rng draws the masks). Returns 0, or -1 with a
// message for an id outside its vocabulary, S or T beyond max_len or the
// activations, or a batch with no target to learn from.
int seq2seq_forward(const Seq2Seq *m, Seq2SeqActs *a,
                    const int *src,       // (B, S) pad after the end
                    const int *tgt_in,    // (B, T) <bos> y1 ... pad
                    const int *tgt_out,   // (B, T) y1 ... <eos> pad, or NULL
                    int B, int S, int T, float eps, bool train, Rng *rng,
                    SmoothedLoss *loss, Error *err);

// Its backward pass, after a seq2seq_forward with tgt_out that returned
// 0: accumulates (+=) every parameter's gradient into m->grads.
void seq2seq_backward(Seq2Seq *m, Seq2SeqActs *a);
//< seq2seq-api

// The activations' memory, for the capacity (B, S, T) above: *_floats
// counts without allocating.
int seq2seq_acts_alloc(Seq2SeqActs *a, const Seq2SeqConfig *cfg, int B,
                       int S, int T, Error *err);
void seq2seq_acts_free(Seq2SeqActs *a, const Seq2SeqConfig *cfg);
size_t seq2seq_acts_floats(const Seq2SeqConfig *cfg, int B, int S, int T);

// After a forward pass: the logits (B, T, V), and the cross-attention
// weights (B, NH, T, S) of decoder layer l.
const float *seq2seq_logits(const Seq2SeqActs *a);
const float *seq2seq_cross_weights(const Seq2SeqActs *a, int l);

// ---- decoding, one position at a time ---------------------------------------

// The state of decoding R rows (sentences, or beams of sentences): the
// encoder's output and source mask of each row, every decoder layer's
// caches (decoder_step's), and one position's work space.
typedef struct Seq2SeqState Seq2SeqState;

//> seq2seq-step-api
// Runs the encoder once over B sources and makes R = B * copies rows of
// decoding state, rows b * copies .. b * copies + copies - 1 all reading
// source b (copies > 1: the beams of beam search), with no target
// position yet. Returns 0, or -1 with a message.
int seq2seq_encode(const Seq2Seq *m, Seq2SeqState *st, const int *src,
                   int B, int S, int copies, Error *err);

// Feeds one target token to every row (tokens (R,), at the next
// position) and writes each row's next-token logits (R, V). Returns 0,
// or -1 with a message when the state is full (max target length) or an
// id is out of range.
int seq2seq_step(const Seq2Seq *m, Seq2SeqState *st, const int *tokens,
                 float *logits, Error *err);

// Beam search's bookkeeping: row r takes over the target positions so
// far of row from[r], a row of the same source (from[r] / copies ==
// r / copies). Returns 0, or -1 with a message for any other from[r].
int seq2seq_state_reorder(Seq2SeqState *st, const int *from, Error *err);

// Drops source b (0 <= b < the sources in the state), whose decoding is
// over: the last source's rows take its place (nothing moves when b is
// the last), and the state holds one source fewer, so that the next
// steps run only the rows still decoding. Returns 0, or
// -1 with a message for any other b.
int seq2seq_state_drop(Seq2SeqState *st, int b, Error *err);
//< seq2seq-step-api

// For at most B sources of S tokens, each decoded as `copies` rows of at
// most T target positions.
int seq2seq_state_alloc(Seq2SeqState *st, const Seq2SeqConfig *cfg, int B,
                        int S, int T, int copies, Error *err);
void seq2seq_state_free(Seq2SeqState *st, const Seq2SeqConfig *cfg);
size_t seq2seq_state_floats(const Seq2SeqConfig *cfg, int B, int S, int T,
                            int copies);
// Rows in the state, and positions fed so far.
int seq2seq_state_rows(const Seq2SeqState *st);
int seq2seq_state_len(const Seq2SeqState *st);

// ---- memory ----------------------------------------------------------------

struct Seq2SeqActs {
    int B, S, T;              // allocated for: B*S, B*T tokens
    int cur_B, cur_S, cur_T;  // the last forward pass's
    float dropout_p, eps;     // of the last forward pass
    const int *src, *tgt_in, *tgt_out;   // its ids (the caller's)
    int *src_mask, *tgt_mask;  // (B,S), (B,T): 1 = a real token
    // encoder
    float *src_x;             // (B,S,C) embeddings after dropout
    float *src_drop;          // (B,S,C) their dropout mask
    float *enc_res;           // (Le,B,S,C) the stream after each layer
    BlockCache *enc;          // Le caches
    BlockScratch enc_scratch;
    float *memory;            // (B,S,C) the final LayerNorm's output
    float *enc_mean, *enc_rstd;   // (B,S)
    float *dmemory;           // (B,S,C)
    float *enc_dx, *enc_dx2;  // (B,S,C) gradients of the stream
    // decoder
    float *tgt_x, *tgt_drop;  // (B,T,C)
    float *dec_res;           // (Ld,B,T,C)
    DecoderCache *dec;        // Ld caches
    DecoderScratch dec_scratch;
    float *dec_out;           // (B,T,C) the final LayerNorm's output
    float *dec_mean, *dec_rstd;   // (B,T)
    float *logits, *dlogits;  // (B,T,V)
    float *dec_dx, *dec_dx2;  // (B,T,C)
    int n_targets;            // non-pad targets of the last forward pass
    float *mem;
    int *imem;
};

struct Seq2SeqState {
    int B, S, T, copies, R;   // allocated for; R = B * copies rows
    int cur_S;                // the sources' length
    int cur_R;                // the rows in use: the last encode's B * copies,
                              // less those of dropped sources
    int len;                  // target positions fed so far
    int n_dec;                // decoder layers
    int *src_mask;            // (R, S) each row's source mask
    int *enc_mask;            // (B, S) the sources'
    int *tgt_mask;            // (R, T) 1 where the token fed is no <pad>
    int *tgt_prev;            // (R, T) the reorder's copy of it

    float *memory;            // (R, S, C)
    DecoderStep *layers;      // Ld, each with its caches for R rows
    float *x, *y;             // (R, C) the stream
    float *mean, *rstd;       // (R,)
    // the encoder's work space, for B sources
    BlockCache enc;           // one cache, reused by every layer
    float *enc_a, *enc_b;     // (B,S,C) the stream, ping-pong
    float *enc_mean, *enc_rstd;   // (B,S)
    float *swap;              // (R, T, C) the reorder's copy
    bool *kept;               // (R,) the rows the reorder keeps in swap
    float *mem;
    int *imem;
};

#endif
