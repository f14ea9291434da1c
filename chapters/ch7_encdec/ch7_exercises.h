// ch7_exercises.h - the exercises of chapter 7. Your answers go in
// exercises/ch7/ (one file per exercise); `make check EXERCISES=exercises`
// grades them, and tests/ch7/test_ex7.c holds you to the contracts below.
//
// Six pieces of the encoder-decoder: the masks of a padded batch, the
// cross-attention, the label-smoothed loss, the decoder layer's wiring,
// and the two ways of decoding; the score of its translations, BLEU
// (7.7); and a merge step of the subword tokenizer (7.8). All tensors
// are float32 and row-major. You may use anything in common/ and in
// chapters 1 to 6, the parts of this chapter that each exercise names,
// and your own answers to other exercises. Calling the chapter's own
// version of what you are writing (print_attention_masks,
// xattn_forward, smoothed_xent_*, decoder_forward, greedy_decode,
// beam_decode, bleu_*, bpe_*) would pass and teach nothing.
#ifndef CH7_EXERCISES_H
#define CH7_EXERCISES_H

#include <stdbool.h>

#include "decode.h"
#include "decoder.h"
#include "error.h"
#include "seq2seq.h"

// Exercise 7.1 - the two attention masks of a batch of sentence pairs, as
// 0/1 ints, 1 = may attend. tgt (B, T) are the decoder's input ids, src
// (B, S) the encoder's, pad the padding id (any int; -1 works). For every
// sentence b, query position i and key position j:
//   self_mask[b][i][j]  = 1 when j <= i (causal) AND tgt[b][j] != pad
//   cross_mask[b][i][s] = 1 when src[b][s] != pad (never causal)
// Both are masks on the KEYS: a query row at a pad position is filled by
// the same rule as any other (the model computes it and ignores it). Pad
// is an id, not a length: a pad in the middle of a sentence is masked too.
// Every entry is written.
void ex_attention_masks(int *self_mask,    // (B, T, T) out
                        int *cross_mask,   // (B, T, S) out
                        const int *tgt,    // (B, T)
                        const int *src,    // (B, S)
                        int B, int T, int S, int pad);

// Exercise 7.2 - multi-head cross-attention, forward, as xattn.h defines
// it. Weights are stored as PyTorch stores them:
//   q   = x @ q_proj_w^T + q_proj_b             (B, Tq, C)
//   kv  = memory @ kv_proj_w^T + kv_proj_b      (B, Tk, 2C): channels
//         0..C-1 are the keys, C..2C-1 the values
//   per head h (HS = C / NH channels h*HS .. h*HS+HS-1 of q, k and v):
//       att = softmax(q_h k_h^T / sqrt(HS)) over the keys s whose
//             src_mask[b][s] is 1 (NULL: every key is real)
//       y_h = att @ v_h
//   y   = the heads side by side again           (B, Tq, C)
//   out = y @ out_proj_w^T + out_proj_b          (B, Tq, C)
// Tq and Tk differ, nothing is causal, every bias may be NULL (no bias).
// A sentence whose source is ALL padding has no key to attend to: its
// attention output y is all zeros (so out is out_proj_b, or zeros), never
// a NaN from a softmax over nothing. You may use chapter 2's
// linear_forward, heads_split, heads_merge and softmax_forward, but write
// the attention itself: attention_forward, mha_* and xattn_* would pass
// and teach nothing. Allocate what work space you need.
void ex_cross_attention(float *out,               // (B, Tq, C) out
                        const float *x,           // (B, Tq, C) queries
                        const float *memory,      // (B, Tk, C) encoder's
                        const float *q_proj_w,    // (C, C)
                        const float *q_proj_b,    // (C,) or NULL
                        const float *kv_proj_w,   // (2C, C)
                        const float *kv_proj_b,   // (2C,) or NULL
                        const float *out_proj_w,  // (C, C)
                        const float *out_proj_b,  // (C,) or NULL
                        const int *src_mask,      // (B, Tk) or NULL
                        int B, int Tq, int Tk, int C, int NH);

// Exercise 7.3 - label-smoothed cross-entropy, forward and backward in one
// call: PyTorch's
//   F.cross_entropy(logits, targets, ignore_index=pad, label_smoothing=eps)
// For a row z (V logits) with target y != pad, the smoothed target q gives
// eps/V to EVERY class (pad and y included) plus 1 - eps more to y, and
//   loss_row = -sum_j q_j log softmax(z)_j
//            = (lse - z_y) + eps * (z_y - mean_j z_j),  lse = log sum exp z
// Return the mean of loss_row over the n_valid rows whose target is not
// pad (0 when there are none), and write
//   dlogits[n][:] = (softmax(z) - q) / n_valid
// on those rows and zeros on the rows whose target is pad. dlogits is
// overwritten (not accumulated) and does not overlap logits. Logits as
// large as +-1000 must give finite, correct answers: take each row's
// maximum out before any exp; accumulate the loss in double. eps is in
// [0, 1]; targets are pad or in [0, V).
float ex_smoothed_xent(float *dlogits,        // (N, V) out
                       const float *logits,   // (N, V)
                       const int *targets,    // (N,)
                       int N, int V, int pad, float eps);

// Exercise 7.4 - the forward pass of one Pre-LN decoder layer (decoder.h),
// evaluation mode (no dropout):
//   res1 = x    + self_attn(ln_1(x))             causal, tgt_mask on keys
//   res2 = res1 + cross_attn(ln_2(res1), memory) src_mask on keys
//   out  = res2 + mlp(ln_3(res2))                activation act
// self_attn is chapter 2's mha_forward with weights self_attn_c_*,
// cross_attn this chapter's xattn_forward with cross_attn_* (queries from
// the decoder's stream, keys and values from memory, which is NOT
// normalised here: the encoder's final LayerNorm already did), mlp chapter
// 3's ffn_forward with mlp_c_*. You may call those, chapter 4's layernorm
// and the sub-layer helpers of block.h and residual.h (attn_sublayer_
// forward, ffn_sublayer_forward, sublayer_norm, sublayer_add) with
// dropout 0 and rng NULL. Use the cache's pieces as decoder_forward does
// (the wrappers sa, ca, ff, the streams res1 and res2, the caches
// self_attn, cross_attn and mlp), so that chapter 7's decoder_backward can
// run after your forward pass. Return 0, or -1 with err's message when a
// call you make fails. out is not x.
int ex_decoder_forward(float *out,               // (B, T, C)
                       DecoderCache *cache,
                       const float *x,           // (B, T, C)
                       const float *memory,      // (B, Tk, C)
                       const DecoderWeights *w,
                       const int *tgt_mask,      // (B, T) or NULL
                       const int *src_mask,      // (B, Tk) or NULL
                       Activation act, int B, int T, int Tk, int C, int NH,
                       int F, Error *err);

// Exercise 7.5 - greedy decoding with the cache, as greedy_decode
// (decode.h). Run seq2seq_encode(m, st, src, B, S, 1, err) once, then
// seq2seq_step, one call per position, feeding each row the token it
// chose last (dc->bos at the first step). Sentence b:
//   - its length limit is limit = (the number of ids in its source row
//     that are not m->cfg.pad) + dc->extra, but at most st->T and at most
//     max_out;
//   - at each step it takes the argmax of its logits (V =
//     m->cfg.tgt_vocab), the LOWEST id among equal maxima;
//   - the argmax dc->eos ends it: done[b] = true, and the <eos> is not
//     written to out;
//   - any other token is written to out[b * max_out + len[b]++]; when
//     len[b] reaches limit it ends (done[b] = false).
// A sentence with limit 0 ends before any step. A row that has ended may
// be fed anything (it does not change the others): stop calling
// seq2seq_step when every sentence has ended. Entries of out past len[b]
// are left as they were. done may be NULL. Callers give a valid dc and a
// state allocated with copies = 1 for at least B sources of S tokens.
// Returns 0, or -1 with err's message when a seq2seq_* call fails.
int ex_greedy_decode(const Seq2Seq *m, Seq2SeqState *st, const int *src,
                     int B, int S, const DecodeConfig *dc,
                     int *out,   // (B, max_out)
                     int max_out,
                     int *len,   // (B,)
                     bool *done, // (B,) or NULL
                     Error *err);

// Exercise 7.6 - beam search, as beam_decode (decode.h), exactly. With k =
// dc->beam, st is allocated with copies = k; seq2seq_encode(m, st, src, B,
// S, k, err) gives each source b the rows b*k .. b*k+k-1. Limits as in
// 7.5. A hypothesis y is a list of tokens after <bos>; log P(y) is the sum
// of its tokens' log-probabilities, each z_v - lse of the logits z of the
// step that chose it, with lse = max + log(sum exp(z - max)), summed in
// double (log P too). beam_decode takes the exponentials themselves in
// float (exp_fast, vectorised), which moves lse by about 1e-7, the same
// for every token of a row; exponentials in double are as good, and both
// pass: scores are compared to 1e-6 relative. A finished hypothesis scores
//     score = log P / n^alpha     (alpha = dc->alpha, in double)
// where n counts its tokens AND its <eos> if it ended with one.
//
// At the start source b has one live beam (row b*k, no tokens, log P 0);
// its other rows are dead; best[b] = -inf; every row is fed dc->bos. A
// source whose limit is 0 never searches. Step t = 0, 1, ... (live beams
// hold t tokens), after seq2seq_step gave every row's logits, for each
// source still searching:
//   1. candidates: every (live row r, token v), log P_r + (z_v - lse). Keep
//      the 2k best (fewer if there are fewer), ordered: higher log P
//      first, then lower r, then lower v.
//   2. walk them in that order while fewer than k new beams are made.
//      The i-th candidate (i = 0, 1, ... its place in the list, whatever
//      the tokens before it) with v == eos: if i < k, the row's t tokens
//      finish WITH <eos> (n = t + 1); if i >= k it is skipped. (Counting
//      only the <eos> candidates instead gives the same answers, and
//      passes: an <eos> at place k or later is reached only after an
//      <eos> at a place below k, of the same length and a log P at least
//      as large, which it cannot beat in step 3.) Any other
//      becomes new beam number n_new (row b*k + n_new) of t + 1 tokens:
//      parent r, log P the candidate's; if t + 1 >= limit it finishes
//      there WITHOUT <eos> (n = t + 1, and the row is not live), else it
//      is live. Rows b*k + n_new .. b*k+k-1 left over are dead.
//   3. a finished hypothesis replaces the source's answer only when its
//      score is strictly greater than best[b] (the first of equals stays).
//   4. the search of b goes on only if some live beam's log P / limit^alpha
//      (the best it could still reach) is strictly greater than best[b].
// When no source is searching, stop. Otherwise call
// seq2seq_state_reorder(st, from, err) with from[r] = the parent of new
// beam r, and from[r] = r for dead rows and every row of a source that
// stopped; next step, feed each new beam its last token (dead rows:
// anything, e.g. eos). There are at most max over b of limit steps.
// Output: source b's answer's tokens in out[b * max_out ..] (without the
// <eos>), len[b], done[b] = whether it ended with <eos>, score[b] =
// (float) its score; a source with limit 0 gets len 0, done false and
// score -inf. done and score may be NULL. Returns 0, or -1 with err's
// message when a seq2seq_* call fails.
int ex_beam_decode(const Seq2Seq *m, Seq2SeqState *st, const int *src,
                   int B, int S, const DecodeConfig *dc,
                   int *out,      // (B, max_out)
                   int max_out,
                   int *len,      // (B,)
                   bool *done,    // (B,) or NULL
                   float *score,  // (B,) or NULL
                   Error *err);

// Exercise 7.7 - BLEU's two halves, as bleu.h defines them (sacreBLEU's
// defaults). First one sentence: hyp (nh words) against its reference
// ref (nr words), each word a C string; two n-grams are equal when their
// words are (strcmp). For n = 1..4, write
//   totals[n-1] = the number of n-grams of hyp: nh - n + 1, or 0 when
//                 hyp is shorter than n words
//   counts[n-1] = the clipped matches: over the DISTINCT n-grams g of
//                 hyp, the sum of min(times g is in hyp, times in ref)
// "the the the the" against "the cat on the mat" matches 2 unigrams, not
// 4. Both arrays are overwritten. nh or nr may be 0. A few dozen words:
// comparing every pair of n-grams is fast enough.
void ex_bleu_ngram_stats(long counts[4],             // out
                         long totals[4],             // out
                         const char *const *hyp,     // (nh,) words
                         int nh,
                         const char *const *ref,     // (nr,) words
                         int nr);

// Then the corpus: from counts and totals summed over every sentence and
// the corpus lengths c = sys_len and r = ref_len (in words), return the
// score in percent and write the precisions (percent) and *bp:
//   *bp = 1 when c >= r (c = r = 0 included); exp(1 - r / c) when
//   0 < c < r; 0 when c = 0 < r.
//   When every count is 0: all precisions 0, return 0.
//   For n = 1, 2, 3, 4 in order, stopping at the first n whose total is 0
//   (its precision and those after it stay 0):
//     p_n = 100 * counts / totals, but when counts is 0 ("exp"
//     smoothing): the k-th such order (k = 1, 2, ...) gets
//     p_n = 100 / (2^k * totals).
//   score = *bp * exp((log p_1 + log p_2 + log p_3 + log p_4) / 4), with
//   log 0 taken as -9999999999 (so a precision left at 0 gives 0).
// All in double.
double ex_bleu_score(double precisions[4],           // out, percent
                     double *bp,                     // out
                     const long counts[4], const long totals[4],
                     long sys_len, long ref_len);

// Exercise 7.8 - one merge step of byte-pair encoding (bpe.h), on words
// given as symbol ids. Word w is syms[w][0 .. lens[w]-1] (ids >= 0; a
// length may be 0 or 1) and occurs freqs[w] >= 1 times in the corpus.
//   1. count every pair of adjacent symbols INSIDE a word (never the last
//      symbol of one word with the first of the next), at every position
//      (the word 5 5 5 holds (5, 5) twice), each times its word's freq;
//   2. take the pair (a, b) with the largest count; of equal counts the
//      smallest a, then the smallest b;
//   3. in every word, replace each (a, b) by new_id from left to right
//      without overlap (5 5 5 becomes new_id 5), and shorten lens[w].
// Write a and b to pair[0] and pair[1] and return the pair's count. A
// pair seen only once is merged too: when to stop is the caller's choice
// (bpe.c's learner stops before a pair seen fewer than twice, and so
// does the tests' loop that repeats this step). When no word has two
// symbols, return 0 and change nothing. bpe.c's learner does this for
// thousands of merges with counts kept up to date; here you count from
// scratch (in any way: sorting the pairs is one).
long ex_bpe_merge_step(int *const *syms, int *lens, const long *freqs,
                       int n_words, int new_id, int pair[2]);

#endif
