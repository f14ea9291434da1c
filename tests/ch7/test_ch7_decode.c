// Tests of chapter 7's decoding (decode.c) and the cached state it runs
// on (seq2seq_encode, seq2seq_step, seq2seq_state_reorder), with small
// random models whose weights are scaled up so that the next-token
// distributions are peaked and differ from one position to the next.
// Most models are untied with a trick that gives every target token a
// bias: the decoder's final LayerNorm keeps its feature 0 at 1 (weight
// 0, bias 1), so column 0 of the generator adds a constant to each
// token's logit. It makes <pad> (and in the enumerable model <bos>) all
// but impossible, and moves <eos> up or down to vary the lengths; one
// test makes <pad> likely instead, to see a <pad> fed back hidden by the
// cached step as the full forward pass hides it.
//
// Each test below names the wrong versions it catches; those marked (*)
// were tried as edits of decode.c or seq2seq.c and seen to fail it.
//
// decode_step_matches_forward: seq2seq_step's logits at every position
//   equal seq2seq_forward's (teacher-forced, padded sources, <pad>s in
//   the targets, tied and untied), within 1e-5, and a full state refuses
//   another step. A step with the next position's sinusoid (*), without
//   the source mask (*) or without the target mask (*: it read a <pad>
//   the forward pass hides), or with stale self-attention keys, fails it.
// decode_reorder_moves_the_cache: rows that took over other rows'
//   positions (seq2seq_state_reorder within each source, with copies:
//   from = {2, 0, 2 | 4, 4, 3}, then {1, 1, 0 | 5, 3, 4}) give the
//   logits of the prefixes they took over, as the full forward pass and
//   as a fresh state fed those prefixes from the start (<pad>s among
//   them). A reorder that moves only the keys (*), or not the target
//   mask (*), or nothing, fails it; a row of another source (*) or out
//   of range must be refused with a message.
// decode_drop_keeps_the_rest: after seq2seq_state_drop of a source in
//   the middle (the last source's rows move into its place) and then of
//   the last, each row left gives the logits of its own source and
//   tokens, as the full forward pass; a source out of range is refused
//   with a message. A drop that moves only the self-attention keys and
//   values (*), not the target mask (*), or that moves nothing, fails it.
// decode_greedy_matches_uncached: greedy_decode against greedy decoding
//   without any cache, written here: at every step the full forward pass
//   over the prefix so far and the argmax of its last position. Batches
//   of sources of different lengths (one of padding only) where
//   sentences end at different steps, some at once and some at their
//   length limit, the limit set by extra, by the state's T and by
//   max_out, in states for exactly the batch and for more and longer
//   sources. Same tokens, lengths and done flags, and the unused room of
//   the output left as it was. A limit one short (*) or counted over the
//   padded source (*), <eos> copied into the output (*), or a state for
//   more sources than the call (*: seq2seq_step read and wrote the
//   allocated rows, past the caller's arrays) fails it.
// decode_pad_matches_uncached: models whose output layer prefers <pad>
//   (its bias raised), so that decoding writes <pad>s and feeds them
//   back: greedy_decode gives the uncached greedy's tokens, <pad>s
//   included, and every answer of a beam of 3 scores the log P that the
//   full forward pass gives it, over length. At least 20 <pad>s written
//   and 10 tokens chosen after one. A step that reads a <pad> fed back
//   (*), or a reorder (*) or a drop (*) that leaves the target mask,
//   fails it.
// decode_beam1_is_greedy: beam width 1 with alpha 0 gives exactly
//   greedy's output, on 24 random models (tied and untied, with and
//   without the bias trick). A beam that drops the hypotheses reaching
//   the length limit (*), or a greedy limit one short (*), fails it.
// decode_ties_take_the_lowest_id: models in which two pairs of tokens
//   (<eos> and 6, 4 and 8) have equal logits at every step, exactly
//   (each one's generator row holds one bias and zeros), one pair holding
//   the largest logit at a quarter or a half of the steps: greedy_decode,
//   and beam_decode of width 1 with alpha 0, give the output of decode.h's
//   rule (of equal logits the lowest id) worked out without a cache, with
//   <eos> the lower of its pair and then the higher; ties decide at least
//   10 choices of each pair. An argmax that takes the last of equal
//   maxima (*), or a beam that ranks equal candidates by the higher token
//   (*), fails it.
// decode_beam_ties_follow_the_order: a model whose parameters are all 0,
//   so that every logit ties, and beams of width 1 to 3: the answer that
//   the order of candidates names (the lower row, then the lower token,
//   the first of equal scores kept), worked out by hand, with its score.
//   Ranking equal candidates by the higher row (*) or the higher token
//   (*), or an equal score replacing the best (*), fails it.
// decode_beam_finds_the_best: a model small enough to enumerate every
//   output (target symbols 3 and 4, <eos> 2; outputs of at most 4
//   tokens): the log-probability of each sequence from the full forward
//   pass (log-softmax in double), its score log P / |y|^alpha with the
//   <eos> counted, and the best for alpha 0, 0.6 and 1, with the length
//   limit set by extra and by max_out. A beam of 32 (wide enough to
//   keep every hypothesis) returns that best sequence with its done flag
//   and its score within 1e-5, on 12 models of 3 sources each. Not
//   counting the <eos> in |y| (*) or counting one at the length limit
//   too (*), a bound over the current length instead of the limit
//   (stopping too early) (*), stopping at the first finished hypothesis
//   (*), forgetting to reorder the cache (*), or dropping the beams that
//   reach the limit (*): each returns a worse sequence or a wrong score.
//   Then the case that makes beam search worth having is shown to occur
//   (at least 10 times): greedy's output is not the best, and a beam of
//   2 or 3 finds the best.
// decode_bad_calls: a state of the wrong copies, <bos> or <eos> outside
//   the vocabulary, beam 0, -1 or 65, alpha out of [0, 2], negative
//   extra, no output room, more or longer sources than the state holds,
//   a source id out of range: each returns -1 with a message, no crash,
//   and the state still decodes afterwards.
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "decode.h"
#include "mem.h"
#include "rng.h"
#include "seq2seq.h"

enum { PAD = 0, BOS = 1, EOS = 2, MAX_LEN = 16, UNUSED = -7 };
#define STEP_ATOL 1e-5
#define STEP_RTOL 1e-5
#define SCORE_TOL 1e-5
#define IMPOSSIBLE (-60.0f)   // the bias of a token the test rules out

// ---- models ----------------------------------------------------------------

typedef struct {
    bool tie;
    float scale;        // every parameter multiplied by it
    bool biased;        // the token-bias trick (untied only)
    float eos_bias;     // with it: <eos>'s bias; <pad>'s is IMPOSSIBLE
    bool no_bos;        // with it: <bos> impossible too
    bool pad_too;       // with it: <pad>'s bias is pad_bias instead
    float pad_bias;
} ModelSpec;

static void model_make(Seq2Seq *m, int V, const ModelSpec *ms,
                       uint64_t seed) {
    Seq2SeqConfig c = seq2seq_config_default(V, MAX_LEN);
    c.n_enc = 1, c.n_dec = 2, c.n_head = 2, c.n_embd = 16, c.n_ffn = 32;
    c.tie = ms->tie;
    Error err;
    ck_assert_msg(seq2seq_create(m, &c, &err) == 0, "%s", err.msg);
    Rng rng;
    rng_seed(&rng, seed);
    seq2seq_init(m, &rng);
    for (size_t i = 0; i < m->num_params; i++) m->params[i] *= ms->scale;
    if (!ms->biased) return;
    ck_assert(!ms->tie);
    int C = c.n_embd;
    m->w.dec_ln_w[0] = 0.0f;
    m->w.dec_ln_b[0] = 1.0f;
    for (int v = 0; v < V; v++) m->w.generator[(size_t)v * C] = 0.0f;
    m->w.generator[(size_t)PAD * C] = ms->pad_too ? ms->pad_bias : IMPOSSIBLE;
    m->w.generator[(size_t)EOS * C] = ms->eos_bias;
    if (ms->no_bos) m->w.generator[(size_t)BOS * C] = IMPOSSIBLE;
}

// B sources of S ids in [1, V), source b with n[b] real tokens, then pad.
static void make_sources(int *src, int B, int S, const int *n, int V,
                         Rng *rng) {
    for (int b = 0; b < B; b++)
        for (int s = 0; s < S; s++)
            src[b * S + s] =
                s < n[b] ? 1 + (int)rng_below(rng, (uint32_t)(V - 1)) : PAD;
}

static int real_len(const int *src, int S) {
    int n = 0;
    for (int s = 0; s < S; s++) n += src[s] != PAD;
    return n;
}

static int min3(int a, int b, int c) {
    int m = a < b ? a : b;
    return m < c ? m : c;
}

static DecodeConfig dconf(int extra, int beam, float alpha) {
    DecodeConfig dc = decode_config_default();
    dc.bos = BOS, dc.eos = EOS, dc.extra = extra, dc.beam = beam;
    dc.alpha = alpha;
    return dc;
}

// ---- the full forward pass, without a cache --------------------------------

typedef struct {
    Seq2SeqActs a;
    int S;
} Ref;

static void ref_alloc(Ref *r, const Seq2Seq *m, int B, int S) {
    Error err;
    ck_assert_msg(seq2seq_acts_alloc(&r->a, &m->cfg, B, S, MAX_LEN, &err)
                  == 0, "%s", err.msg);
    r->S = S;
}

// The logits (V,) of the last position after <bos> y[0..n) of one source
// (S ids, padded as it is), from the full forward pass.
static const float *ref_last(Ref *r, const Seq2Seq *m, const int *src,
                             const int *y, int n) {
    int tgt[MAX_LEN];
    ck_assert_int_lt(n, MAX_LEN);
    tgt[0] = BOS;
    memcpy(tgt + 1, y, (size_t)n * sizeof *y);
    Error err;
    ck_assert_msg(seq2seq_forward(m, &r->a, src, tgt, NULL, 1, r->S, n + 1,
                                  0.0f, false, NULL, NULL, &err) == 0,
                  "%s", err.msg);
    return seq2seq_logits(&r->a) + (size_t)n * m->cfg.tgt_vocab;
}

// The first of the largest: of equal logits, the lowest id (decode.h).
static int argmax(const float *z, int V) {
    int y = 0;
    for (int v = 1; v < V; v++)
        if (z[v] > z[y]) y = v;
    return y;
}

static void log_softmax(double *lp, const float *z, int V) {
    double mx = z[0], sum = 0;
    for (int v = 1; v < V; v++) mx = z[v] > mx ? z[v] : mx;
    for (int v = 0; v < V; v++) sum += exp((double)z[v] - mx);
    for (int v = 0; v < V; v++) lp[v] = (double)z[v] - mx - log(sum);
}

// Greedy decoding of one source without a cache, with <eos> eos: returns
// the length, the tokens in y, whether it ended with <eos> in *done.
static int ref_greedy_eos(Ref *r, const Seq2Seq *m, const int *src,
                          int limit, int eos, int *y, bool *done) {
    int n = 0;
    *done = false;
    while (n < limit) {
        int v = argmax(ref_last(r, m, src, y, n), m->cfg.tgt_vocab);
        if (v == eos) {
            *done = true;
            break;
        }
        y[n++] = v;
    }
    return n;
}

static int ref_greedy(Ref *r, const Seq2Seq *m, const int *src, int limit,
                      int *y, bool *done) {
    return ref_greedy_eos(r, m, src, limit, EOS, y, done);
}

// ---- seq2seq_step against the forward pass ---------------------------------

START_TEST(decode_step_matches_forward) {
    enum { V = 9, B = 3, S = 5, T = 7 };
    for (int tie = 0; tie < 2; tie++) {
        ModelSpec ms = {.tie = tie, .scale = 2.0f};
        Seq2Seq m;
        model_make(&m, V, &ms, 11 + tie);
        Rng rng;
        rng_seed(&rng, 5 + tie);
        int n[B] = {5, 2, 3}, src[B * S], tgt[B * T];
        make_sources(src, B, S, n, V, &rng);
        for (int i = 0; i < B * T; i++)
            tgt[i] = 1 + (int)rng_below(&rng, V - 1);
        for (int b = 0; b < B; b++) tgt[b * T] = BOS;
        // <pad>s fed back, as decoding may: the forward pass hides them
        // from the later positions, and so must the step
        tgt[0 * T + 2] = tgt[1 * T + 1] = tgt[1 * T + 3] = PAD;
        Seq2SeqActs a;
        Error err;
        ck_assert(seq2seq_acts_alloc(&a, &m.cfg, B, S, T, &err) == 0);
        ck_assert_msg(seq2seq_forward(&m, &a, src, tgt, NULL, B, S, T, 0.0f,
                                      false, NULL, NULL, &err) == 0,
                      "%s", err.msg);
        const float *want = seq2seq_logits(&a);
        Seq2SeqState st;
        ck_assert_msg(seq2seq_state_alloc(&st, &m.cfg, B, S, T, 1, &err)
                      == 0, "%s", err.msg);
        ck_assert_msg(seq2seq_encode(&m, &st, src, B, S, 1, &err) == 0,
                      "%s", err.msg);
        float logits[B * V];
        for (int t = 0; t < T; t++) {
            int tok[B];
            for (int b = 0; b < B; b++) tok[b] = tgt[b * T + t];
            ck_assert_int_eq(seq2seq_state_len(&st), t);
            ck_assert_msg(seq2seq_step(&m, &st, tok, logits, &err) == 0,
                          "%s", err.msg);
            for (int b = 0; b < B; b++) {
                char what[64];
                snprintf(what, sizeof what, "tie %d row %d position %d",
                         tie, b, t);
                ck_assert_close_f(what, logits + b * V,
                                  want + ((size_t)b * T + t) * V, V,
                                  STEP_ATOL, STEP_RTOL);
            }
        }
        // the state is full now
        int tok[B] = {3, 3, 3};
        ck_assert_int_eq(seq2seq_step(&m, &st, tok, logits, &err), -1);
        ck_assert(err.msg[0] != '\0');
        seq2seq_state_free(&st, &m.cfg);
        seq2seq_acts_free(&a, &m.cfg);
        seq2seq_free(&m);
    }
}
END_TEST

// ---- seq2seq_state_reorder -------------------------------------------------

START_TEST(decode_reorder_moves_the_cache) {
    enum { V = 9, B = 2, K = 3, R = B * K, S = 4, T = 7, T0 = 3, T1 = 2 };
    ModelSpec ms = {.tie = true, .scale = 2.0f};
    Seq2Seq m;
    model_make(&m, V, &ms, 21);
    Rng rng;
    rng_seed(&rng, 22);
    int n[B] = {4, 2}, src[B * S];
    make_sources(src, B, S, n, V, &rng);
    // each row's tokens: T0 before the first reorder, T1 between the two,
    // one after the second
    int seq[R][T];
    for (int r = 0; r < R; r++)
        for (int t = 0; t < T; t++)
            seq[r][t] = t == 0 ? BOS : 1 + (int)rng_below(&rng, V - 1);
    // <pad>s in rows that others take over, in each phase: the rows that
    // take them over must hide them too
    seq[2][1] = seq[4][2] = seq[3][T0] = PAD;
    const int from1[R] = {2, 0, 2, 4, 4, 3};
    const int from2[R] = {1, 1, 0, 5, 3, 4};
    // what each row has been fed after p reorders: eff[p][r]. Before
    // the first, its own tokens; after it, those of from1[r] until T0;
    // after the second, eff[1][from2[r]] until T0 + T1
    int eff[3][R][T];
    for (int r = 0; r < R; r++)
        for (int t = 0; t < T; t++) {
            eff[0][r][t] = seq[r][t];
            eff[1][r][t] = t < T0 ? seq[from1[r]][t] : seq[r][t];
        }
    for (int r = 0; r < R; r++)
        for (int t = 0; t < T; t++)
            eff[2][r][t] = t < T0 + T1 ? eff[1][from2[r]][t] : seq[r][t];
    Error err;
    Seq2SeqState st, fresh;
    ck_assert(seq2seq_state_alloc(&st, &m.cfg, B, S, T, K, &err) == 0);
    ck_assert(seq2seq_state_alloc(&fresh, &m.cfg, B, S, T, K, &err) == 0);
    ck_assert_int_eq(seq2seq_state_rows(&st), R);
    ck_assert(seq2seq_encode(&m, &st, src, B, S, K, &err) == 0);
    ck_assert(seq2seq_encode(&m, &fresh, src, B, S, K, &err) == 0);
    // the forward pass of each phase's sequences, each source repeated
    int src_rep[R * S], tgt[R * T];
    for (int r = 0; r < R; r++)
        memcpy(src_rep + r * S, src + (r / K) * S, S * sizeof *src);
    Seq2SeqActs a;
    ck_assert(seq2seq_acts_alloc(&a, &m.cfg, R, S, T, &err) == 0);
    float *fwd[3];
    for (int p = 0; p < 3; p++) {
        for (int r = 0; r < R; r++)
            memcpy(tgt + r * T, eff[p][r], T * sizeof *tgt);
        ck_assert_msg(seq2seq_forward(&m, &a, src_rep, tgt, NULL, R, S, T,
                                      0.0f, false, NULL, NULL, &err) == 0,
                      "%s", err.msg);
        fwd[p] = xmalloc((size_t)R * T * V * sizeof *fwd[p]);
        memcpy(fwd[p], seq2seq_logits(&a), (size_t)R * T * V * sizeof
               *fwd[p]);
    }
    float got[R * V], want[R * V];
    int refused[][R] = {
        {3, 1, 2, 3, 4, 5},    // row 0 from source 1's row 3
        {0, 1, 2, 3, 4, 2},    // row 5 from source 0's row 2
        {0, 1, 2, 3, 4, 6},    // out of range
        {-1, 1, 2, 3, 4, 5},
    };
    for (int t = 0; t < T; t++) {
        if (t == T0 || t == T0 + T1) {
            const int *from = t == T0 ? from1 : from2;
            ck_assert_msg(seq2seq_state_reorder(&st, from, &err) == 0, "%s",
                          err.msg);
            for (size_t i = 0; i < sizeof refused / sizeof refused[0];
                 i++) {
                err.msg[0] = '\0';
                ck_assert_int_eq(seq2seq_state_reorder(&st, refused[i],
                                                       &err), -1);
                ck_assert(err.msg[0] != '\0');
            }
        }
        // the fresh state is fed the final sequences from the start
        int p = t < T0 ? 0 : t < T0 + T1 ? 1 : 2, tok[R], tok_fresh[R];
        for (int r = 0; r < R; r++)
            tok[r] = seq[r][t], tok_fresh[r] = eff[2][r][t];
        ck_assert(seq2seq_step(&m, &st, tok, got, &err) == 0);
        ck_assert(seq2seq_step(&m, &fresh, tok_fresh, want, &err) == 0);
        for (int r = 0; r < R; r++) {
            char what[64];
            snprintf(what, sizeof what, "row %d position %d", r, t);
            ck_assert_close_f(what, got + r * V,
                              fwd[p] + ((size_t)r * T + t) * V, V,
                              STEP_ATOL, STEP_RTOL);
            if (p < 2) continue;
            snprintf(what, sizeof what, "row %d position %d (fresh)", r, t);
            ck_assert_close_f(what, got + r * V, want + r * V, V,
                              STEP_ATOL, STEP_RTOL);
        }
    }
    for (int p = 0; p < 3; p++) free(fwd[p]);
    seq2seq_acts_free(&a, &m.cfg);
    seq2seq_state_free(&st, &m.cfg);
    seq2seq_state_free(&fresh, &m.cfg);
    seq2seq_free(&m);
}
END_TEST

// ---- seq2seq_state_drop ----------------------------------------------------

START_TEST(decode_drop_keeps_the_rest) {
    enum { V = 9, B = 3, K = 2, R = B * K, S = 4, T = 5 };
    ModelSpec ms = {.tie = true, .scale = 2.0f};
    Seq2Seq m;
    model_make(&m, V, &ms, 31);
    Rng rng;
    rng_seed(&rng, 32);
    int n[B] = {4, 2, 3}, src[B * S];
    make_sources(src, B, S, n, V, &rng);
    int seq[R][T];
    for (int r = 0; r < R; r++)
        for (int t = 0; t < T; t++)
            seq[r][t] = t == 0 ? BOS : 1 + (int)rng_below(&rng, V - 1);
    seq[4][1] = seq[5][1] = PAD;   // in source 2's rows, which move
    // the forward pass of every row's whole sequence
    int src_rep[R * S], tgt[R * T];
    for (int r = 0; r < R; r++) {
        memcpy(src_rep + r * S, src + (r / K) * S, S * sizeof *src);
        memcpy(tgt + r * T, seq[r], T * sizeof *tgt);
    }
    Error err;
    Seq2SeqActs a;
    ck_assert(seq2seq_acts_alloc(&a, &m.cfg, R, S, T, &err) == 0);
    ck_assert_msg(seq2seq_forward(&m, &a, src_rep, tgt, NULL, R, S, T, 0.0f,
                                  false, NULL, NULL, &err) == 0,
                  "%s", err.msg);
    const float *fwd = seq2seq_logits(&a);
    Seq2SeqState st;
    ck_assert(seq2seq_state_alloc(&st, &m.cfg, B, S, T, K, &err) == 0);
    ck_assert(seq2seq_encode(&m, &st, src, B, S, K, &err) == 0);
    // the sources in the state, by slot: source 0 is dropped after
    // position 1 (source 2 moves into its place), then the one in slot
    // 1 (source 1, the last: nothing moves) after position 2
    int who[B] = {0, 1, 2}, have = B;
    float got[R * V];
    for (int t = 0; t < T; t++) {
        if (t == 2 || t == 3) {
            int drop = t == 2 ? 0 : 1, bad[] = {-1, have};
            for (int i = 0; i < 2; i++) {
                err.msg[0] = '\0';
                ck_assert_int_eq(seq2seq_state_drop(&st, bad[i], &err), -1);
                ck_assert(err.msg[0] != '\0');
            }
            ck_assert_msg(seq2seq_state_drop(&st, drop, &err) == 0, "%s",
                          err.msg);
            who[drop] = who[--have];
        }
        int tok[R];
        for (int j = 0; j < have * K; j++)
            tok[j] = seq[who[j / K] * K + j % K][t];
        ck_assert(seq2seq_step(&m, &st, tok, got, &err) == 0);
        for (int j = 0; j < have * K; j++) {
            int r = who[j / K] * K + j % K;
            char what[64];
            snprintf(what, sizeof what, "row %d of source %d, position %d",
                     j, who[j / K], t);
            ck_assert_close_f(what, got + j * V, fwd + ((size_t)r * T + t) * V,
                              V, STEP_ATOL, STEP_RTOL);
        }
    }
    ck_assert_int_eq(have, 1);
    seq2seq_acts_free(&a, &m.cfg);
    seq2seq_state_free(&st, &m.cfg);
    seq2seq_free(&m);
}
END_TEST

// ---- greedy decoding against the uncached version --------------------------

typedef struct {
    int short_len, at_limit, empty;   // sentences seen of each kind
    int mixed;                        // batches where done lengths differ
    int pads, after_pad;              // <pad>s written, tokens after one
} Seen;

// One batch: greedy_decode (a state for Bst >= B sources of Sst >= S
// tokens and T positions, output rows of max_out) against ref_greedy,
// source by source.
static void greedy_case(const Seq2Seq *m, const int *src, int B, int S,
                        int Bst, int Sst, int T, int extra, int max_out,
                        Seen *seen) {
    Error err;
    Seq2SeqState st;
    ck_assert_msg(seq2seq_state_alloc(&st, &m->cfg, Bst, Sst, T, 1, &err)
                  == 0, "%s", err.msg);
    DecodeConfig dc = dconf(extra, 1, 0.0f);
    int *out = xmalloc((size_t)B * max_out * sizeof *out);
    int *len = xmalloc((size_t)B * sizeof *len);
    bool *done = xmalloc((size_t)B * sizeof *done);
    for (int i = 0; i < B * max_out; i++) out[i] = UNUSED;
    ck_assert_msg(greedy_decode(m, &st, src, B, S, &dc, out, max_out, len,
                                done, &err) == 0, "%s", err.msg);
    Ref r;
    ref_alloc(&r, m, 1, S);
    int y[MAX_LEN], lo = MAX_LEN, hi = -1;   // the done lengths
    for (int b = 0; b < B; b++) {
        int limit = min3(real_len(src + b * S, S) + extra, T, max_out);
        bool rdone;
        int rn = ref_greedy(&r, m, src + b * S, limit, y, &rdone);
        ck_assert_msg(len[b] == rn && done[b] == rdone,
                      "source %d (limit %d): length %d done %d, "
                      "uncached %d done %d", b, limit, len[b], done[b], rn,
                      rdone);
        for (int i = 0; i < rn; i++)
            ck_assert_msg(out[b * max_out + i] == y[i],
                          "source %d token %d: %d, uncached %d", b, i,
                          out[b * max_out + i], y[i]);
        for (int i = rn; i < max_out; i++)
            ck_assert_msg(out[b * max_out + i] == UNUSED,
                          "source %d: room %d written", b, i);
        for (int i = 0; i < rn; i++) {
            seen->pads += y[i] == PAD;
            seen->after_pad += i > 0 && y[i - 1] == PAD;
        }
        if (rdone && rn == 0) seen->empty++;
        if (rdone && rn > 0) seen->short_len++;
        if (!rdone) seen->at_limit++;
        if (rdone) lo = rn < lo ? rn : lo, hi = rn > hi ? rn : hi;
    }
    seen->mixed += hi > lo;
    free(out);
    free(len);
    free(done);
    seq2seq_acts_free(&r.a, &m->cfg);
    seq2seq_state_free(&st, &m->cfg);
}

START_TEST(decode_greedy_matches_uncached) {
    enum { V = 10, B = 6, S = 6 };
    Seen seen = {0};
    for (int i = 0; i < 6; i++) {
        ModelSpec ms = {.tie = false, .scale = 2.5f, .biased = true,
                        .eos_bias = 4.0f + 2.0f * (float)(i % 3)};
        Seq2Seq m;
        model_make(&m, V, &ms, 100 + i);
        Rng rng;
        rng_seed(&rng, 200 + i);
        int n[B] = {6, 1, 3, 0, 4, 2}, src[B * S];
        make_sources(src, B, S, n, V, &rng);
        // the limit from extra, from the state's T, from max_out
        greedy_case(&m, src, B, S, B, S, MAX_LEN, 2 + i % 3, MAX_LEN,
                    &seen);
        greedy_case(&m, src, B, S, B, S, 5, 4, MAX_LEN, &seen);
        greedy_case(&m, src, B, S, B, S, MAX_LEN, 6, 4, &seen);
        // in a state for more sources, and longer ones
        greedy_case(&m, src, B, S, B + 2, S + 3, MAX_LEN, 3, MAX_LEN,
                    &seen);
        greedy_case(&m, src + 2 * S, 1, S, B, S, MAX_LEN, 3, MAX_LEN,
                    &seen);
        seq2seq_free(&m);
    }
    // the batches held every kind of sentence
    ck_assert_msg(seen.short_len > 0 && seen.at_limit > 0 && seen.empty > 0
                  && seen.mixed > 0, "ended %d, at the limit %d, empty %d, "
                  "mixed batches %d", seen.short_len, seen.at_limit,
                  seen.empty, seen.mixed);
}
END_TEST

// ---- beam width 1 ----------------------------------------------------------

START_TEST(decode_beam1_is_greedy) {
    enum { V = 8, B = 4, S = 5, MO = 12 };
    for (int i = 0; i < 24; i++) {
        ModelSpec ms = {.tie = i % 3 == 0, .scale = 1.5f + 0.25f * (i % 5),
                        .biased = i % 3 != 0,
                        .eos_bias = -0.5f + 0.5f * (float)(i % 4)};
        Seq2Seq m;
        model_make(&m, V, &ms, 300 + i);
        Rng rng;
        rng_seed(&rng, 400 + i);
        int n[B], src[B * S];
        for (int b = 0; b < B; b++) n[b] = (int)rng_below(&rng, S + 1);
        make_sources(src, B, S, n, V, &rng);
        int extra = 1 + i % 6;
        Error err;
        Seq2SeqState st;
        ck_assert(seq2seq_state_alloc(&st, &m.cfg, B, S, MAX_LEN, 1, &err)
                  == 0);
        DecodeConfig dc = dconf(extra, 1, 0.0f);
        int out_g[B * MO], out_b[B * MO], len_g[B], len_b[B];
        bool done_g[B], done_b[B];
        float score[B];
        for (int j = 0; j < B * MO; j++) out_g[j] = out_b[j] = UNUSED;
        ck_assert_msg(greedy_decode(&m, &st, src, B, S, &dc, out_g, MO,
                                    len_g, done_g, &err) == 0,
                      "%s", err.msg);
        ck_assert_msg(beam_decode(&m, &st, src, B, S, &dc, out_b, MO,
                                  len_b, done_b, score, &err) == 0,
                      "%s", err.msg);
        for (int b = 0; b < B; b++) {
            ck_assert_msg(len_b[b] == len_g[b] && done_b[b] == done_g[b],
                          "model %d source %d: beam length %d done %d, "
                          "greedy %d done %d", i, b, len_b[b], done_b[b],
                          len_g[b], done_g[b]);
            ck_assert_msg(len_b[b] == 0 || (score[b] <= 0 &&
                                            isfinite(score[b])),
                          "model %d source %d: score %g", i, b, score[b]);
        }
        ck_assert_msg(memcmp(out_b, out_g, sizeof out_g) == 0,
                      "model %d: beam 1 and greedy give other tokens", i);
        seq2seq_state_free(&st, &m.cfg);
        seq2seq_free(&m);
    }
}
END_TEST

// ---- ties ------------------------------------------------------------------

// A model in which two pairs of target tokens have equal logits at every
// step, to the last bit: each one's row of the generator is 0 but for
// column 0, which the bias trick multiplies by exactly 1, so that its
// logit is beta + 0 + ... + 0 = beta, in whatever order a matrix product
// sums. <eos> and 6 make one pair, 4 and 8 the other; 3, 5, 7 and 9 keep
// their random rows. Pair `top` gets about the quantile q of the largest
// of those four logits over the positions of a teacher-forced batch
// (src, random targets), so that it holds the largest logit at about
// that share of the steps, whatever the scale of the model's logits; the
// other pair, 1 below it, never does.
enum { TV = 10 };
static const int TIE_PAIRS[2][2] = {{EOS, 6}, {4, 8}};

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static void tie_model(Seq2Seq *m, uint64_t seed, int top, double q,
                      const int *src, int B, int S) {
    ModelSpec ms = {.tie = false, .scale = 2.0f, .biased = true,
                    .no_bos = true};
    model_make(m, TV, &ms, seed);
    enum { T = 8 };
    int *tgt = xmalloc((size_t)B * T * sizeof *tgt);
    Rng rng;
    rng_seed(&rng, seed + 1);
    for (int i = 0; i < B * T; i++)
        tgt[i] = i % T == 0 ? BOS : 3 + (int)rng_below(&rng, TV - 3);
    Seq2SeqActs a;
    Error err;
    ck_assert(seq2seq_acts_alloc(&a, &m->cfg, B, S, T, &err) == 0);
    ck_assert_msg(seq2seq_forward(m, &a, src, tgt, NULL, B, S, T, 0.0f,
                                  false, NULL, NULL, &err) == 0, "%s",
                  err.msg);
    float *most = xmalloc((size_t)B * T * sizeof *most);
    for (int i = 0; i < B * T; i++) {
        const float *z = seq2seq_logits(&a) + (size_t)i * TV;
        most[i] = z[3];
        for (int v = 5; v < TV; v += 2) most[i] = fmaxf(most[i], z[v]);
    }
    // halfway between two of them, so that no step of the batch ties
    // with it (its first position, <bos>, is every decoding's first step)
    qsort(most, (size_t)B * T, sizeof *most, cmp_float);
    int at = (int)(q * (B * T - 2));
    float beta = 0.5f * (most[at] + most[at + 1]);
    int C = m->cfg.n_embd;
    for (int p = 0; p < 2; p++)
        for (int i = 0; i < 2; i++) {
            float *row = m->w.generator + (size_t)TIE_PAIRS[p][i] * C;
            memset(row, 0, (size_t)C * sizeof *row);
            row[0] = p == top ? beta : beta - 1.0f;
        }
    free(most);
    free(tgt);
    seq2seq_acts_free(&a, &m->cfg);
}

START_TEST(decode_ties_take_the_lowest_id) {
    enum { B = 5, S = 5, MO = 12, EXTRA = 4, MODELS = 6 };
    // the choices a tie made, per pair: a 4 written (8 tied with it), an
    // <eos> that ended a sentence (6 tied with it) or, when <eos> is 8, a
    // 2 written
    int decided[2] = {0, 0};
    for (int i = 0; i < MODELS; i++) {
        Rng rng;
        rng_seed(&rng, 900 + i);
        int n[B], src[B * S];
        for (int b = 0; b < B; b++) n[b] = 1 + (int)rng_below(&rng, S);
        make_sources(src, B, S, n, TV, &rng);
        // on top: <eos> and 6 a quarter of the steps (the sentences end
        // after a few tokens), or 4 and 8 half of them
        Seq2Seq m;
        tie_model(&m, 800 + i, i % 2, i % 2 ? 0.5 : 0.25, src, B, S);
        Ref r;
        ref_alloc(&r, &m, 1, S);
        // <eos> the lower of its pair (2, tied with 6), then the higher
        // (8, tied with 4: never chosen, so every sentence runs to its
        // limit)
        for (int e = 0; e < 2; e++) {
            DecodeConfig dc = dconf(EXTRA, 1, 0.0f);
            dc.eos = e == 0 ? EOS : 8;
            Error err;
            Seq2SeqState st;
            ck_assert(seq2seq_state_alloc(&st, &m.cfg, B, S, MAX_LEN, 1,
                                          &err) == 0);
            int out[2][B * MO], len[2][B];
            bool done[2][B];
            for (int j = 0; j < B * MO; j++) out[0][j] = out[1][j] = UNUSED;
            ck_assert_msg(greedy_decode(&m, &st, src, B, S, &dc, out[0], MO,
                                        len[0], done[0], &err) == 0,
                          "%s", err.msg);
            ck_assert_msg(beam_decode(&m, &st, src, B, S, &dc, out[1], MO,
                                      len[1], done[1], NULL, &err) == 0,
                          "%s", err.msg);
            seq2seq_state_free(&st, &m.cfg);
            for (int b = 0; b < B; b++) {
                const int *sb = src + b * S;
                int limit = min3(real_len(sb, S) + EXTRA, MAX_LEN, MO);
                int y[MAX_LEN];
                bool rdone;
                int rn = ref_greedy_eos(&r, &m, sb, limit, dc.eos, y, &rdone);
                // the premise: each pair's logits equal at every position
                const float *z = ref_last(&r, &m, sb, y, rn) - (size_t)rn * TV;
                for (int t = 0; t <= rn; t++)
                    for (int p = 0; p < 2; p++)
                        ck_assert_msg(z[t * TV + TIE_PAIRS[p][0]]
                                      == z[t * TV + TIE_PAIRS[p][1]],
                                      "model %d: the logits of %d and %d "
                                      "differ at position %d", i,
                                      TIE_PAIRS[p][0], TIE_PAIRS[p][1], t);
                for (int k = 0; k < 2; k++) {
                    const char *who = k ? "beam 1, alpha 0" : "greedy";
                    ck_assert_msg(len[k][b] == rn && done[k][b] == rdone,
                                  "model %d, <eos> %d, source %d, %s: "
                                  "length %d done %d, by the rule %d done "
                                  "%d", i, dc.eos, b, who, len[k][b],
                                  done[k][b], rn, rdone);
                    for (int t = 0; t < rn; t++)
                        ck_assert_msg(out[k][b * MO + t] == y[t],
                                      "model %d, <eos> %d, source %d, %s: "
                                      "token %d is %d, by the rule (the "
                                      "lowest id of equal logits) %d", i,
                                      dc.eos, b, who, t, out[k][b * MO + t],
                                      y[t]);
                }
                for (int t = 0; t < rn; t++) {
                    decided[1] += y[t] == 4;
                    decided[0] += y[t] == EOS;
                }
                decided[0] += rdone;
            }
        }
        seq2seq_acts_free(&r.a, &m.cfg);
        seq2seq_free(&m);
    }
    ck_assert_msg(decided[0] >= 10 && decided[1] >= 10, "too few ties "
                  "decided a choice: %d between <eos> and 6, %d between 4 "
                  "and 8", decided[0], decided[1]);
}
END_TEST

// A model whose parameters are all 0: every logit of every step is 0, so
// each candidate of a beam ties with every other of its step, and only
// the order decides: the lower row first, then the lower token, and a
// hypothesis that scores the same as the best does not replace it.
// <pad> is the last id (6), which no output that follows the rule holds.
START_TEST(decode_beam_ties_follow_the_order) {
    enum { ZV = 7, ZPAD = 6, B = 2, S = 3, MO = 8, EXTRA = 2 };
    Seq2SeqConfig c = seq2seq_config_default(ZV, MAX_LEN);
    c.n_enc = 1, c.n_dec = 1, c.n_head = 2, c.n_embd = 8, c.n_ffn = 8;
    c.pad = ZPAD;
    Seq2Seq m;
    Error err;
    ck_assert_msg(seq2seq_create(&m, &c, &err) == 0, "%s", err.msg);
    const int src[B * S] = {3, 4, ZPAD, 5, 5, 5};   // limits 4 and 5
    const double lp = -log((double)ZV);   // every token's log-probability
    // <eos> 3 comes after the k best (k <= 3) at every step: the beams
    // are the 0s of row 0 and what follows them, every one reaches the
    // limit, and the first of the equal finished ones, all 0s, is the
    // answer. <eos> 0 comes first: it ends the empty output, which no
    // longer one can beat with alpha 0.
    const struct { int eos, k; float alpha; } cs[] = {
        {3, 1, 0.0f}, {3, 2, 0.0f}, {3, 3, 0.0f}, {3, 2, 1.0f},
        {3, 3, 1.0f}, {0, 1, 0.0f}, {0, 2, 0.0f}, {0, 3, 0.0f}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        DecodeConfig dc = dconf(EXTRA, cs[i].k, cs[i].alpha);
        dc.eos = cs[i].eos;
        Seq2SeqState st;
        ck_assert(seq2seq_state_alloc(&st, &c, B, S, MAX_LEN, cs[i].k, &err)
                  == 0);
        int out[B * MO], len[B];
        bool done[B];
        float score[B];
        for (int j = 0; j < B * MO; j++) out[j] = UNUSED;
        ck_assert_msg(beam_decode(&m, &st, src, B, S, &dc, out, MO, len,
                                  done, score, &err) == 0, "%s", err.msg);
        seq2seq_state_free(&st, &c);
        for (int b = 0; b < B; b++) {
            int n = 0;
            for (int j = 0; j < S; j++) n += src[b * S + j] != ZPAD;
            int want = dc.eos == 0 ? 0 : n + EXTRA;
            bool want_done = dc.eos == 0;
            double want_score = (want + want_done) * lp
                                / pow(want + want_done, dc.alpha);
            ck_assert_msg(len[b] == want && done[b] == want_done,
                          "<eos> %d, beam %d, alpha %g, source %d: length "
                          "%d done %d, want %d done %d", dc.eos, dc.beam,
                          dc.alpha, b, len[b], done[b], want, want_done);
            for (int t = 0; t < want; t++)
                ck_assert_msg(out[b * MO + t] == 0, "<eos> %d, beam %d, "
                              "alpha %g, source %d: token %d is %d, want 0 "
                              "(the lowest row, then the lowest id, and the "
                              "first of equal scores)", dc.eos, dc.beam,
                              dc.alpha, b, t, out[b * MO + t]);
            ck_assert_msg(fabs(score[b] - want_score) <= SCORE_TOL,
                          "<eos> %d, beam %d, alpha %g, source %d: score "
                          "%.7g, want %.7g", dc.eos, dc.beam, dc.alpha, b,
                          score[b], want_score);
        }
    }
    seq2seq_free(&m);
}
END_TEST

// ---- beam search against every output --------------------------------------

enum { EV = 5, SYM0 = 3, N_SYM = 2, MAX_Y = 6 };

typedef struct {
    int y[MAX_Y], n;
    bool eos;
    double logp;
} Hyp;

typedef struct {
    Hyp *h;
    int n, cap;
} Hyps;

// Every output of one source up to the length limit: the symbols only
// (<pad> and <bos> have the bias IMPOSSIBLE), each ending with <eos> or
// stopping at the limit, with its exact log P.
static void enumerate(Hyps *all, Ref *r, const Seq2Seq *m, const int *src,
                      int limit, int *y, int n, double logp) {
    double lp[EV];
    log_softmax(lp, ref_last(r, m, src, y, n), EV);
    Hyp h = {.n = n, .eos = true, .logp = logp + lp[EOS]};
    memcpy(h.y, y, (size_t)n * sizeof *y);
    ck_assert_int_lt(all->n, all->cap);
    all->h[all->n++] = h;
    for (int s = SYM0; s < SYM0 + N_SYM; s++) {
        y[n] = s;
        if (n + 1 < limit) {
            enumerate(all, r, m, src, limit, y, n + 1, logp + lp[s]);
        } else {
            Hyp e = {.n = n + 1, .eos = false, .logp = logp + lp[s]};
            memcpy(e.y, y, (size_t)(n + 1) * sizeof *y);
            ck_assert_int_lt(all->n, all->cap);
            all->h[all->n++] = e;
        }
    }
}

static double hyp_score(const Hyp *h, double alpha) {
    return h->logp / pow((double)(h->n + h->eos), alpha);
}

// The best of all for alpha, and the gap to the second best.
static const Hyp *best_hyp(const Hyps *all, double alpha, double *gap) {
    const Hyp *best = NULL;
    double second = -INFINITY;
    for (int i = 0; i < all->n; i++) {
        double s = hyp_score(&all->h[i], alpha);
        if (!best || s > hyp_score(best, alpha)) {
            if (best) second = hyp_score(best, alpha);
            best = &all->h[i];
        } else if (s > second) {
            second = s;
        }
    }
    *gap = hyp_score(best, alpha) - second;
    return best;
}

static const Hyp *find_hyp(const Hyps *all, const int *y, int n, bool eos) {
    for (int i = 0; i < all->n; i++)
        if (all->h[i].n == n && all->h[i].eos == eos
            && memcmp(all->h[i].y, y, (size_t)n * sizeof *y) == 0)
            return &all->h[i];
    return NULL;
}

// beam_decode of one source (B = 1) with width k.
static void beam_one(const Seq2Seq *m, const int *src, int S, int k,
                     float alpha, int extra, int max_out, int *y, int *n,
                     bool *eos, float *score) {
    Error err;
    Seq2SeqState st;
    ck_assert(seq2seq_state_alloc(&st, &m->cfg, 1, S, MAX_LEN, k, &err)
              == 0);
    DecodeConfig dc = dconf(extra, k, alpha);
    ck_assert_msg(beam_decode(m, &st, src, 1, S, &dc, y, max_out, n, eos,
                              score, &err) == 0, "%s", err.msg);
    seq2seq_state_free(&st, &m->cfg);
}

START_TEST(decode_beam_finds_the_best) {
    enum { B = 3, S = 2, EXTRA = 2, WIDE = 32 };
    const float alphas[] = {0.0f, 0.6f, 1.0f};
    const int n_alpha = sizeof alphas / sizeof alphas[0];
    Hyps all = {.cap = 256};
    all.h = xmalloc((size_t)all.cap * sizeof *all.h);
    int checked = 0, close_calls = 0, greedy_beaten = 0;
    for (int i = 0; i < 12; i++) {
        ModelSpec ms = {.tie = false, .scale = 0.75f + 0.25f * (i % 4),
                        .biased = true,
                        .eos_bias = -1.0f + 0.5f * (float)(i % 6),
                        .no_bos = true};
        Seq2Seq m;
        model_make(&m, EV, &ms, 500 + i);
        Rng rng;
        rng_seed(&rng, 600 + i);
        int n[B] = {2, 1, 0}, src[B * S];
        make_sources(src, B, S, n, EV, &rng);
        Ref r;
        ref_alloc(&r, &m, 1, S);
        Error err;
        Seq2SeqState gst;
        ck_assert(seq2seq_state_alloc(&gst, &m.cfg, B, S, MAX_LEN, 1, &err)
                  == 0);
        for (int b = 0; b < B; b++) {
            const int *sb = src + b * S;
            // the limit from extra (n + 2 <= 4), then from max_out (3)
            for (int cap = 0; cap < 2; cap++) {
                int max_out = cap ? 3 : MAX_Y;
                int limit = min3(n[b] + EXTRA, MAX_LEN, max_out);
                int y[MAX_Y];
                all.n = 0;
                enumerate(&all, &r, &m, sb, limit, y, 0, 0.0);
                int gy[MAX_Y], gn;
                bool gdone;
                DecodeConfig dc = dconf(EXTRA, 1, 0.0f);
                ck_assert(greedy_decode(&m, &gst, sb, 1, S, &dc, gy, max_out,
                                        &gn, &gdone, &err) == 0);
                const Hyp *g = find_hyp(&all, gy, gn, gdone);
                ck_assert_msg(g != NULL, "greedy's output not enumerated");
                for (int ai = 0; ai < n_alpha; ai++) {
                    double alpha = alphas[ai], gap;
                    const Hyp *best = best_hyp(&all, alpha, &gap);
                    int by[MAX_Y], bn;
                    bool bdone;
                    float score;
                    beam_one(&m, sb, S, WIDE, alphas[ai], EXTRA, max_out,
                             by, &bn, &bdone, &score);
                    const Hyp *got = find_hyp(&all, by, bn, bdone);
                    ck_assert_msg(got != NULL, "model %d source %d: beam's "
                                  "output (length %d, done %d) is not a "
                                  "possible one", i, b, bn, bdone);
                    ck_assert_msg(fabs(score - hyp_score(got, alpha))
                                  <= SCORE_TOL, "model %d source %d alpha "
                                  "%g: score %.7g, its output's %.7g", i, b,
                                  alpha, score, hyp_score(got, alpha));
                    ck_assert_msg(fabs(score - hyp_score(best, alpha))
                                  <= SCORE_TOL, "model %d source %d alpha "
                                  "%g limit %d: beam's score %.7g (length "
                                  "%d, done %d), the best %.7g (length %d, "
                                  "done %d)", i, b, alpha, limit, score, bn,
                                  bdone, hyp_score(best, alpha), best->n,
                                  best->eos);
                    if (gap < 1e-4) {   // a near tie: either will do
                        close_calls++;
                        continue;
                    }
                    ck_assert(got == best);
                    checked++;
                    // greedy's output is not the best: does a narrow
                    // beam find it?
                    if (hyp_score(g, alpha) < hyp_score(best, alpha) - 1e-4)
                        for (int k = 2; k <= 3; k++) {
                            beam_one(&m, sb, S, k, alphas[ai], EXTRA,
                                     max_out, by, &bn, &bdone, &score);
                            if (find_hyp(&all, by, bn, bdone) == best) {
                                greedy_beaten++;
                                break;
                            }
                        }
                }
            }
        }
        seq2seq_state_free(&gst, &m.cfg);
        seq2seq_acts_free(&r.a, &m.cfg);
        seq2seq_free(&m);
    }
    free(all.h);
    ck_assert_msg(close_calls <= checked / 10, "%d near ties, %d checked",
                  close_calls, checked);
    ck_assert_msg(greedy_beaten >= 10, "%d sources where a beam of 2 or 3 "
                  "beats greedy decoding", greedy_beaten);
}
END_TEST

// ---- a model that writes <pad> ---------------------------------------------

// The log P of y[0..n) (and of an <eos> after it when eos) from the full
// forward pass, in double.
static double ref_logp(Ref *r, const Seq2Seq *m, const int *src,
                       const int *y, int n, bool eos) {
    int V = m->cfg.tgt_vocab;
    double *lp = xmalloc((size_t)V * sizeof *lp), sum = 0;
    for (int t = 0; t < n + eos; t++) {
        log_softmax(lp, ref_last(r, m, src, y, t), V);
        sum += lp[t < n ? y[t] : EOS];
    }
    free(lp);
    return sum;
}

START_TEST(decode_pad_matches_uncached) {
    enum { V = 10, B = 6, S = 6, K = 3, MO = MAX_LEN };
    Seen seen = {0};
    int beam_pads = 0;
    for (int i = 0; i < 6; i++) {
        ModelSpec ms = {.tie = false, .scale = 2.5f, .biased = true,
                        .eos_bias = 3.0f, .pad_too = true,
                        .pad_bias = 4.0f + 0.5f * (float)i};
        Seq2Seq m;
        model_make(&m, V, &ms, 800 + i);
        Rng rng;
        rng_seed(&rng, 900 + i);
        int n[B] = {6, 1, 3, 2, 4, 5}, src[B * S];
        make_sources(src, B, S, n, V, &rng);
        greedy_case(&m, src, B, S, B, S, MAX_LEN, 8, MAX_LEN, &seen);
        // beam search: each answer's score is its log P from the forward
        // pass, normalised
        Ref r;
        ref_alloc(&r, &m, 1, S);
        for (int b = 0; b < B; b++) {
            int y[MO], len;
            bool eos;
            float score;
            beam_one(&m, src + b * S, S, K, 1.0f, 8, MO, y, &len, &eos,
                     &score);
            double want = ref_logp(&r, &m, src + b * S, y, len, eos)
                          / (double)(len + eos);
            ck_assert_msg(fabs(score - want) <= SCORE_TOL, "model %d "
                          "source %d: beam's score %.7g, the forward pass "
                          "gives its output %.7g", i, b, score, want);
            for (int t = 0; t < len; t++) beam_pads += y[t] == PAD;
        }
        seq2seq_acts_free(&r.a, &m.cfg);
        seq2seq_free(&m);
    }
    ck_assert_msg(seen.pads >= 20 && seen.after_pad >= 10 && beam_pads >= 10,
                  "too few <pad>s written: greedy %d (%d tokens after one), "
                  "beam %d", seen.pads, seen.after_pad, beam_pads);
}
END_TEST

// ---- bad calls -------------------------------------------------------------

START_TEST(decode_bad_calls) {
    enum { V = 7, B = 2, S = 3, MO = 8 };
    ModelSpec ms = {.tie = true, .scale = 1.0f};
    Seq2Seq m;
    model_make(&m, V, &ms, 700);
    int src[B * S] = {3, 4, 0, 5, 0, 0};
    Error err;
    Seq2SeqState st1, st2;
    ck_assert(seq2seq_state_alloc(&st1, &m.cfg, B, S, MAX_LEN, 1, &err)
              == 0);
    ck_assert(seq2seq_state_alloc(&st2, &m.cfg, B, S, MAX_LEN, 2, &err)
              == 0);
    int out[B * MO], len[B];
    bool done[B];
    float score[B];
    DecodeConfig good = dconf(3, 2, 1.0f);
    ck_assert(greedy_decode(&m, &st1, src, B, S, &good, out, MO, len, done,
                            &err) == 0);
    ck_assert(beam_decode(&m, &st2, src, B, S, &good, out, MO, len, done,
                          score, &err) == 0);
    struct {
        const char *what;
        DecodeConfig dc;
        bool greedy_too;   // also wrong for greedy decoding
    } bad[] = {
        {"bos -1", good, true},  {"bos V", good, true},
        {"eos V", good, true},   {"eos -1", good, true},
        {"beam 0", good, false}, {"beam 65", good, false},
        {"beam -1", good, false}, {"alpha -0.5", good, true},
        {"alpha NaN", good, true}, {"extra -1", good, true},
    };
    bad[0].dc.bos = -1, bad[1].dc.bos = V, bad[2].dc.eos = V;
    bad[3].dc.eos = -1, bad[4].dc.beam = 0, bad[5].dc.beam = 65;
    bad[6].dc.beam = -1, bad[7].dc.alpha = -0.5f, bad[8].dc.alpha = NAN;
    bad[9].dc.extra = -1;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err.msg[0] = '\0';
        ck_assert_msg(beam_decode(&m, &st2, src, B, S, &bad[i].dc, out, MO,
                                  len, done, score, &err) == -1
                      && err.msg[0], "beam, %s: accepted", bad[i].what);
        if (!bad[i].greedy_too) continue;
        err.msg[0] = '\0';
        ck_assert_msg(greedy_decode(&m, &st1, src, B, S, &bad[i].dc, out,
                                    MO, len, done, &err) == -1
                      && err.msg[0], "greedy, %s: accepted", bad[i].what);
    }
    // a state with the wrong copies: 2 for greedy, 1 and 2 for beam 3
    DecodeConfig k3 = good;
    k3.beam = 3;
    ck_assert_int_eq(greedy_decode(&m, &st2, src, B, S, &good, out, MO, len,
                                   done, &err), -1);
    ck_assert_int_eq(beam_decode(&m, &st1, src, B, S, &k3, out, MO, len,
                                 done, score, &err), -1);
    ck_assert_int_eq(beam_decode(&m, &st2, src, B, S, &k3, out, MO, len,
                                 done, score, &err), -1);
    // no output room, more sources or longer ones than the state holds,
    // a source id out of range
    ck_assert_int_eq(greedy_decode(&m, &st1, src, B, S, &good, out, 0, len,
                                   done, &err), -1);
    ck_assert_int_eq(beam_decode(&m, &st2, src, B, S, &good, out, 0, len,
                                 done, score, &err), -1);
    int big[(B + 1) * (S + 1)];
    for (int i = 0; i < (B + 1) * (S + 1); i++) big[i] = 3;
    ck_assert_int_eq(greedy_decode(&m, &st1, big, B + 1, S, &good, out, MO,
                                   len, done, &err), -1);
    ck_assert_int_eq(greedy_decode(&m, &st1, big, B, S + 1, &good, out, MO,
                                   len, done, &err), -1);
    ck_assert_int_eq(beam_decode(&m, &st2, big, B + 1, S, &good, out, MO,
                                 len, done, score, &err), -1);
    int odd[B * S] = {3, V, 0, 5, 0, 0};
    ck_assert_int_eq(greedy_decode(&m, &st1, odd, B, S, &good, out, MO, len,
                                   done, &err), -1);
    ck_assert_int_eq(beam_decode(&m, &st2, odd, B, S, &good, out, MO, len,
                                 done, score, &err), -1);
    // and the state still decodes after all that
    int len2[B];
    ck_assert(greedy_decode(&m, &st1, src, B, S, &good, out, MO, len2, done,
                            &err) == 0);
    seq2seq_state_free(&st1, &m.cfg);
    seq2seq_state_free(&st2, &m.cfg);
    seq2seq_free(&m);
}
END_TEST

Suite *ch7_decode_suite(void) {
    Suite *s = suite_create("ch7_decode");
    TCase *tc = tcase_new("decode", "ch7");
    tcase_add_test(tc, decode_step_matches_forward);
    tcase_add_test(tc, decode_reorder_moves_the_cache);
    tcase_add_test(tc, decode_drop_keeps_the_rest);
    tcase_add_test(tc, decode_greedy_matches_uncached);
    tcase_add_test(tc, decode_pad_matches_uncached);
    tcase_add_test(tc, decode_beam1_is_greedy);
    tcase_add_test(tc, decode_ties_take_the_lowest_id);
    tcase_add_test(tc, decode_beam_ties_follow_the_order);
    tcase_add_test(tc, decode_beam_finds_the_best);
    tcase_add_test(tc, decode_bad_calls);
    suite_add_tcase(s, tc);
    return s;
}
