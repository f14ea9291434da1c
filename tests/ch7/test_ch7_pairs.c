// Tests of chapter 7's parallel corpus and its token-count batches
// (pairs.c) and of translating many sentences at once (translate.c).
// Expected values come from hand-made corpora (a byte is a token), the
// definitions (every pair once per epoch, no batch over its tokens), and
// decode.c's greedy_decode called sentence by sentence.
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_util.h"
#include "decode.h"
#include "pairs.h"
#include "rng.h"
#include "seq2seq.h"
#include "seq2seq_train.h"
#include "task.h"
#include "translate.h"

// A byte is a token: id TOK_FIRST + byte. A '#' fails, to test errors.
static int encode_bytes(const void *tok, const char *text, size_t len,
                        int *out, int cap, Error *err) {
    (void)tok;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '#') return error_set(err, "no '#' here");
        if ((int)i < cap) out[i] = TOK_FIRST + (unsigned char)text[i];
    }
    return (int)len > cap ? cap + 1 : (int)len;
}

static char dir[64];

static const char *write_file(const char *name, const char *text) {
    static char path[8][128];
    static int k;
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/ch7_pairs_XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(dir));
    }
    char *p = path[k++ % 8];
    snprintf(p, 128, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return p;
}

static void load(PairCorpus *c, const char *src, const char *tgt,
                 int max_len, bool drop, int *dropped) {
    Error err;
    int rc = pairs_load(c, write_file("s", src), write_file("t", tgt),
                        encode_bytes, NULL, max_len, drop, dropped, &err);
    ck_assert_msg(rc == 0, "%s", err.msg);
}

START_TEST(pairs_load_by_hand) {
    PairCorpus c;
    int dropped;
    // the third pair is too long on the target side; a line may be empty;
    // a file without a final newline still has its last line
    load(&c, "ab\nc\nxy\n\nlast", "AB\nCDE\nTOOLONG\n\nz", 4, true, &dropped);
    ck_assert_int_eq(dropped, 1);
    ck_assert_int_eq(c.n, 4);
    int want_line[] = {1, 2, 4, 5}, want_s[] = {2, 1, 0, 4},
        want_t[] = {2, 3, 0, 1};
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(c.line[i], want_line[i]);
        ck_assert_int_eq(pairs_src_len(&c, i), want_s[i]);
        ck_assert_int_eq(pairs_tgt_len(&c, i), want_t[i]);
    }
    ck_assert_int_eq(c.tgt[c.tgt_off[1] + 2], TOK_FIRST + 'E');
    ck_assert_int_eq(c.max_src, 4);
    ck_assert_int_eq(c.max_tgt, 3);
    pairs_free(&c);

    Error err;
    // a test set is never cut: too long is an error, naming file and line
    ck_assert_int_eq(pairs_load(&c, write_file("s", "a\nb\n"),
                                write_file("t", "a\nlong\n"), encode_bytes,
                                NULL, 3, false, &dropped, &err), -1);
    ck_assert_msg(strstr(err.msg, ":2: more than 3 tokens"), "%s", err.msg);
    ck_assert_int_eq(pairs_load(&c, write_file("s", "a\nb\n"),
                                write_file("t", "a\n"), encode_bytes, NULL,
                                3, false, &dropped, &err), -1);
    ck_assert_msg(strstr(err.msg, "has 2 lines but"), "%s", err.msg);
    ck_assert_int_eq(pairs_load(&c, write_file("s", "a\nb#\n"),
                                write_file("t", "a\nb\n"), encode_bytes,
                                NULL, 3, false, &dropped, &err), -1);
    ck_assert_msg(strstr(err.msg, "/s:2: no '#' here"), "%s", err.msg);
}
END_TEST

// A corpus of n pairs of random lengths 0..maxl.
static void random_corpus(PairCorpus *c, int n, int maxl, uint64_t seed) {
    Rng r;
    rng_seed(&r, seed);
    size_t cap = (size_t)n * (maxl + 2) + 1;
    char *s = malloc(cap), *t = malloc(cap);
    size_t a = 0, b = 0;
    for (int i = 0; i < n; i++) {
        int ls = (int)rng_below(&r, (uint32_t)maxl + 1);
        int lt = (int)rng_below(&r, (uint32_t)maxl + 1);
        for (int j = 0; j < ls; j++) s[a++] = (char)('a' + rng_below(&r, 5));
        for (int j = 0; j < lt; j++) t[b++] = (char)('a' + rng_below(&r, 5));
        s[a++] = '\n', t[b++] = '\n';
    }
    s[a] = t[b] = 0;
    int dropped;
    load(c, s, t, maxl, true, &dropped);
    ck_assert_int_eq(dropped, 0);
    free(s);
    free(t);
}

START_TEST(batches_cover_each_pair_once_an_epoch) {
    PairCorpus c;
    random_corpus(&c, 500, 30, 7);
    PairBatcher b;
    Error err;
    ck_assert_int_eq(batcher_init(&b, &c, 200, 11, &err), 0);
    int *seen = calloc((size_t)c.n, sizeof *seen);
    long slots = 0;
    for (long k = 0; k < 3L * b.n_batches; k++) {
        const PairBatch *pb = batcher_batch(&b, k);
        // within the limit, padded to its longest pair
        ck_assert_int_le(pb->rows * (pb->S + pb->T), 200);
        int maxs = 1, maxt = 1;
        for (int r = 0; r < pb->rows; r++) {
            int p = b.order[pb->first + r];
            seen[p]++;
            if (pairs_src_len(&c, p) > maxs) maxs = pairs_src_len(&c, p);
            if (pairs_tgt_len(&c, p) + 1 > maxt)
                maxt = pairs_tgt_len(&c, p) + 1;
        }
        ck_assert_int_eq(pb->S, maxs);
        ck_assert_int_eq(pb->T, maxt);
        if (k < b.n_batches) slots += (long)pb->rows * (pb->S + pb->T);
        if ((k + 1) % b.n_batches == 0)   // the end of an epoch
            for (int p = 0; p < c.n; p++)
                ck_assert_int_eq(seen[p], (int)((k + 1) / b.n_batches));
    }
    ck_assert_int_eq(slots, b.src_slots + b.tgt_slots);
    // sorted by length, a batch holds little padding
    ck_assert_double_lt(batcher_padding(&b), 0.25);
    // epochs differ in order, and batch k is a function of k alone
    PairBatcher b2;
    ck_assert_int_eq(batcher_init(&b2, &c, 200, 11, &err), 0);
    int differ = 0;
    for (long k = 2L * b.n_batches - 1; k >= 0; k--) {   // another order
        ck_assert_int_eq(batcher_batch(&b2, k) - b2.b,
                         batcher_batch(&b, k) - b.b);
        if (k < b.n_batches)
            differ += batcher_batch(&b, k) - b.b
                      != batcher_batch(&b, k + b.n_batches) - b.b;
    }
    ck_assert_int_gt(differ, 0);
    free(seen);
    batcher_free(&b2);
    batcher_free(&b);
    ck_assert_int_eq(batcher_init(&b, &c, 10, 11, &err), -1);
    ck_assert_msg(strstr(err.msg, "alone needs more than 10 tokens"), "%s",
                  err.msg);
    pairs_free(&c);
}
END_TEST

START_TEST(batch_fill_by_hand) {
    PairCorpus c;
    int dropped;
    load(&c, "ab\nc\n", "xyz\nw\n", 8, true, &dropped);
    PairBatcher b;
    Error err;
    ck_assert_int_eq(batcher_init(&b, &c, 100, 1, &err), 0);
    ck_assert_int_eq(b.n_batches, 1);
    const PairBatch *pb = batcher_batch(&b, 0);
    ck_assert_int_eq(pb->rows, 2);
    ck_assert_int_eq(pb->S, 2);
    ck_assert_int_eq(pb->T, 4);
    int src[4], in[8], out[8];
    batcher_fill(&b, pb, src, in, out);
    // sorted by target length: "c" -> "w" first, then "ab" -> "xyz"
    const int F = TOK_FIRST, P = TOK_PAD, BO = TOK_BOS, E = TOK_EOS;
    int want_src[] = {F + 'c', P, F + 'a', F + 'b'};
    int want_in[] = {BO, F + 'w', P, P, BO, F + 'x', F + 'y', F + 'z'};
    int want_out[] = {F + 'w', E, P, P, F + 'x', F + 'y', F + 'z', E};
    for (int i = 0; i < 4; i++) ck_assert_int_eq(src[i], want_src[i]);
    for (int i = 0; i < 8; i++) {
        ck_assert_int_eq(in[i], want_in[i]);
        ck_assert_int_eq(out[i], want_out[i]);
    }
    // as a PairSource: the batch's sizes come back, and too small a
    // capacity is refused
    PairSource ps = batcher_source(&b);
    int B = 2, S = 2, T = 4;
    ck_assert_int_eq(ps.fill(ps.self, NULL, src, in, out, &B, &S, &T, &err),
                     0);
    ck_assert_int_eq(B * 100 + S * 10 + T, 224);
    ck_assert_int_eq(b.drawn, 1);
    B = 2, S = 2, T = 3;
    ck_assert_int_eq(ps.fill(ps.self, NULL, src, in, out, &B, &S, &T, &err),
                     -1);
    batcher_free(&b);
    pairs_free(&c);
}
END_TEST

// translate_batch sorts, batches and restores the order: its outputs are
// greedy_decode's for each sentence alone, and an empty sentence's is
// empty (decoding a source of padding only would invent one: the
// model's greedy output for it is checked to be some tokens).
START_TEST(translate_batch_matches_one_by_one) {
    Seq2SeqConfig cfg = seq2seq_config_default(12, 16);
    cfg.n_embd = 8, cfg.n_head = 2, cfg.n_ffn = 16, cfg.n_enc = 1;
    cfg.n_dec = 1;
    Seq2Seq m;
    Error err;
    ck_assert_int_eq(seq2seq_create(&m, &cfg, &err), 0);
    Rng r;
    rng_seed(&r, 5);
    seq2seq_init(&m, &r);
    for (size_t i = 0; i < m.num_params; i++)   // a sharper model
        m.params[i] *= 3;
    int n = 9, off[10] = {0}, src[100];
    for (int i = 0; i < n; i++) {
        int len = i == 4 ? 0 : 1 + (int)rng_below(&r, 6);
        for (int j = 0; j < len; j++)
            src[off[i] + j] = TOK_FIRST + (int)rng_below(&r, 9);
        off[i + 1] = off[i] + len;
    }
    DecodeConfig dc = decode_config_default();
    dc.beam = 1, dc.extra = 5;
    int *out, out_off[10];
    ck_assert_int_eq(translate_batch(&m, src, off, n, &dc, 4, &out, out_off,
                                     &err), 0);
    Seq2SeqState st;
    ck_assert_int_eq(seq2seq_state_alloc(&st, &cfg, 1, 6, 16, 1, &err), 0);
    for (int i = 0; i < n; i++) {
        int len = off[i + 1] - off[i], one[16], got, s[6];
        for (int j = 0; j < (len ? len : 1); j++)
            s[j] = len ? src[off[i] + j] : TOK_PAD;
        ck_assert_int_eq(greedy_decode(&m, &st, s, 1, len ? len : 1, &dc,
                                       one, 16, &got, NULL, &err), 0);
        if (len == 0) {
            ck_assert_int_gt(got, 0);   // what it would invent
            got = 0;
        }
        ck_assert_int_eq(out_off[i + 1] - out_off[i], got);
        for (int j = 0; j < got; j++)
            ck_assert_int_eq(out[out_off[i] + j], one[j]);
    }
    free(out);
    seq2seq_state_free(&st, &cfg);
    seq2seq_free(&m);
}
END_TEST

// Sentence i's negative log-likelihood, summed over its targets y <eos>:
// the model run on the pair alone, unpadded, and the log-softmax of its
// logits in double. *n gets the count of its targets.
static double sentence_nll(Seq2SeqTrain *g, const PairCorpus *c, int i,
                           int *n) {
    int ls = pairs_src_len(c, i), lt = pairs_tgt_len(c, i), T = lt + 1;
    int src[16], in[17], out[17];
    ck_assert(ls >= 1 && lt < 16);
    memcpy(src, c->src + c->src_off[i], (size_t)ls * sizeof *src);
    in[0] = TOK_BOS;
    memcpy(in + 1, c->tgt + c->tgt_off[i], (size_t)lt * sizeof *in);
    memcpy(out, c->tgt + c->tgt_off[i], (size_t)lt * sizeof *out);
    out[lt] = TOK_EOS;
    Error err;
    ck_assert_msg(seq2seq_forward(&g->model, &g->acts, src, in, NULL, 1, ls,
                                  T, 0, false, NULL, NULL, &err) == 0,
                  "%s", err.msg);
    const float *logits = seq2seq_logits(&g->acts);
    int V = g->model.cfg.tgt_vocab;
    double sum = 0;
    for (int t = 0; t < T; t++) {
        const float *x = logits + (size_t)t * V;
        double max = x[0], z = 0;
        for (int v = 1; v < V; v++) max = x[v] > max ? x[v] : max;
        for (int v = 0; v < V; v++) z += exp(x[v] - max);
        sum += max + log(z) - x[out[t]];
    }
    *n = T;
    return sum;
}

// batcher_nll is the mean over every target token of the corpus (each
// sentence's <eos> included), against each sentence's nll computed alone
// (sentence_nll). The corpus is cut into batches of unequal token counts
// with padding, its sentences of unequal lengths, so that the plausible
// slips are far from it, which is checked first: the mean of the batches'
// means, the mean of the sentences' means, the pads in the count, and
// the training's label smoothing (0.1 here) in the loss.
START_TEST(batcher_nll_is_per_target_token) {
    Rng r;
    rng_seed(&r, 3);
    char s[400], t[400];
    size_t a = 0, k = 0;
    for (int i = 0; i < 40; i++) {
        int ls = 1 + (int)rng_below(&r, 8), lt = (int)rng_below(&r, 9);
        for (int j = 0; j < ls; j++) s[a++] = (char)('a' + rng_below(&r, 5));
        for (int j = 0; j < lt; j++) t[k++] = (char)('a' + rng_below(&r, 5));
        s[a++] = '\n', t[k++] = '\n';
    }
    s[a] = t[k] = 0;
    PairCorpus c;
    int dropped;
    load(&c, s, t, 8, true, &dropped);
    PairBatcher b;
    Error err;
    ck_assert_int_eq(batcher_init(&b, &c, 60, 1, &err), 0);
    Seq2SeqConfig cfg = seq2seq_config_default(TOK_FIRST + 'e' + 1, 16);
    cfg.n_embd = 8, cfg.n_head = 2, cfg.n_ffn = 16, cfg.n_enc = 1;
    cfg.n_dec = 1;
    Seq2Seq m;
    ck_assert_int_eq(seq2seq_create(&m, &cfg, &err), 0);
    rng_seed(&r, 5);
    seq2seq_init(&m, &r);
    for (size_t i = 0; i < m.num_params; i++)   // a sharper model
        m.params[i] *= 3;
    Seq2SeqTrain g;
    ck_assert_msg(seq2seq_train_init(&g, &m, b.max_rows, b.max_S, b.max_T,
                                     0.1f, &err) == 0, "%s", err.msg);
    // the sums by hand, and the slips' values
    double sum = 0, of_sentences = 0, of_batches = 0, smoothed = 0;
    long n = 0, slots = 0;
    for (int q = 0; q < b.n_batches; q++) {
        const PairBatch *pb = &b.b[q];
        double bsum = 0;
        int bn = 0;
        for (int row = 0; row < pb->rows; row++) {
            int i = b.order[pb->first + row], ni;
            double x = sentence_nll(&g, &c, i, &ni);
            bsum += x, bn += ni, of_sentences += x / ni / c.n;
        }
        sum += bsum, n += bn, slots += (long)pb->rows * pb->T;
        of_batches += bsum / bn / b.n_batches;
        batcher_fill(&b, pb, g.src, g.tgt_in, g.tgt_out);
        SmoothedLoss l;
        ck_assert_int_eq(seq2seq_forward(&g.model, &g.acts, g.src, g.tgt_in,
                                         g.tgt_out, pb->rows, pb->S, pb->T,
                                         0.1f, false, NULL, &l, &err), 0);
        smoothed += (double)l.loss * l.n_valid;
    }
    double want = sum / n;
    const double slips[4] = {of_batches, of_sentences, sum / slots,
                             smoothed / n};
    for (int i = 0; i < 4; i++)
        ck_assert_msg(fabs(slips[i] - want) > 1e-2, "slip %d: %.6f is not "
                      "far from %.6f", i, slips[i], want);
    double got = 0;
    ck_assert_msg(batcher_nll(&b, &g, &got, &err) == 0, "%s", err.msg);
    ck_assert_msg(fabs(got - want) < 1e-4, "batcher_nll %.6f, by hand %.6f "
                  "(a mean of batches %.6f, of sentences %.6f, pads "
                  "counted %.6f, smoothed %.6f)", got, want, of_batches,
                  of_sentences, sum / slots, smoothed / n);
    seq2seq_train_free(&g);
    batcher_free(&b);
    pairs_free(&c);
}
END_TEST

Suite *ch7_pairs_suite(void) {
    Suite *s = suite_create("ch7_pairs");
    TCase *tc = tcase_new("pairs", "ch7");
    tcase_add_test(tc, pairs_load_by_hand);
    tcase_add_test(tc, batches_cover_each_pair_once_an_epoch);
    tcase_add_test(tc, batch_fill_by_hand);
    tcase_add_test(tc, translate_batch_matches_one_by_one);
    tcase_add_test(tc, batcher_nll_is_per_target_token);
    suite_add_tcase(s, tc);
    return s;
}
