// Tests of chapter 7's byte-pair encoding (bpe.c). What each catches:
//
// bpe_multi30k_round_trip: a tokenizer learnt on train.de and train.en
//   (2,000 merges) encodes every line of the six Multi30k files without
//   an <unk> (every character of val and test is in train), and decoding
//   gives each line back byte for byte (the TAB, the no-break spaces, the
//   double and trailing spaces of train.de). A piece rule that drops or
//   moves a space, or a merge that crosses a piece, fails it. Under
//   valgrind it takes every 16th line.
// bpe_by_hand: two corpora whose merges were worked out by hand, with a
//   tie in each (the smallest first id wins, then the smallest second);
//   the counts weighted by word frequency, pairs counted at every
//   position but merged without overlap (a a a -> aa a), learning that
//   stops when no pair is seen twice, the token strings, and encodings.
// bpe_char_mode: 0 merges is the character tokenizer.
// bpe_unknown_and_errors: characters outside the alphabet (a '\n' too)
//   become <unk>, which decodes as U+FFFD; invalid UTF-8, a NUL byte, an
//   empty text, a bad merge count and an id outside the vocabulary are
//   refused with a message.
// bpe_deterministic: learning twice, from copies of the text at other
//   addresses, gives the same string: nothing depends on pointers or on
//   the order of a hash table.
// bpe_matches_naive: encoding agrees with the definition (every merge, in
//   the order learnt, applied over the whole word from left to right) on
//   random words over a small alphabet, where pairs overlap often; and
//   the merges learnt agree with a naive learner that recounts every pair
//   before every merge.
// bpe_string_round_trip: the tokenizer as a string, read back, is the
//   same tokenizer (the same string, the same encodings), also through a
//   chapter 7 checkpoint's "vocab" metadata (JSON escapes of the TAB and
//   the no-break space).
// bpe_corrupt_strings: a string with one thing wrong (header, counts,
//   alphabet order or encoding, a merge of ids not yet made or of
//   specials, a repeated merge, text after the end), every prefix of a
//   valid string and random byte changes are refused with one line, or
//   (a byte change can make another valid string) read; never a crash,
//   and the caller's tokenizer is left as it was.
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpe.h"
#include "check_util.h"
#include "json.h"
#include "mem.h"
#include "rng.h"
#include "seq2seq.h"
#include "seq2seq_checkpoint.h"
#include "utf8.h"

#define M30K "data/multi30k/"

static const char *const M30K_FILES[6] = {
    "train.de", "train.en", "val.de", "val.en", "test_2016_flickr.de",
    "test_2016_flickr.en"};

// valgrind runs a program with its own libraries preloaded
static bool under_valgrind(void) {
    const char *p = getenv("LD_PRELOAD");
    return p && strstr(p, "vgpreload");
}

static char *load(const char *name, size_t *len) {
    char path[128];
    snprintf(path, sizeof path, M30K "%s", name);
    Error err;
    char *s = read_file(path, len, &err);
    ck_assert_msg(s, "%s (make data fetches Multi30k)", err.msg);
    return s;
}

static Bpe learn(const char *text, int merges) {
    Bpe t;
    Error err;
    size_t n = strlen(text);
    ck_assert_msg(bpe_learn(&t, &text, &n, 1, merges, &err) == 0, "%s",
                  err.msg);
    return t;
}

// Encodes s, checks that it decodes to s, returns the ids in ids.
// (ck_assert* records where it is each time it passes, which valgrind
// makes slow: called once a line, this tests with if and fails with
// ck_abort_msg.)
static int round_trip(Bpe *t, const char *s, size_t n, int *ids) {
    Error err;
    int k = bpe_encode(t, s, n, ids, &err);
    if (k < 0) ck_abort_msg("%s", err.msg);
    size_t len;
    char *d = bpe_decode(t, ids, k, &len, &err);
    if (!d) ck_abort_msg("%s", err.msg);
    if (len != n || memcmp(d, s, n) != 0)
        ck_abort_msg("'%.*s' decodes to '%s'", (int)n, s, d);
    free(d);
    return k;
}

START_TEST(bpe_multi30k_round_trip) {
    char *text[6];
    size_t len[6];
    for (int k = 0; k < 6; k++) text[k] = load(M30K_FILES[k], &len[k]);
    Bpe t;
    Error err;
    ck_assert_msg(bpe_learn(&t, (const char *const *)text, len, 2, 2000,
                            &err) == 0, "%s", err.msg);
    ck_assert_int_eq(t.n_merges, 2000);
    int *ids = xmalloc(4096 * sizeof *ids);
    int step = under_valgrind() ? 16 : 1;
    for (int k = 0; k < 6; k++) {
        int line = 0;
        for (size_t i = 0; i < len[k]; line++) {
            size_t e = i;
            while (e < len[k] && text[k][e] != '\n') e++;
            if (e - i >= 4096)
                ck_abort_msg("%s line %d: too long", M30K_FILES[k], line + 1);
            if (line % step == 0) {
                int n = round_trip(&t, text[k] + i, e - i, ids);
                for (int j = 0; j < n; j++)
                    if (ids[j] < BPE_ALPHA)   // no ck_assert in the loop:
                        ck_abort_msg("%s line %d: token %d is %d",  // slow
                                     M30K_FILES[k], line + 1, j, ids[j]);
            }
            i = e + 1;
        }
        ck_assert_int_eq(line, k < 2 ? 29000 : k < 4 ? 1014 : 1000);
    }
    free(ids);
    bpe_free(&t);
    for (int k = 0; k < 6; k++) free(text[k]);
}
END_TEST

static void same_ids(const char *what, const int *got, int n,
                     const int *want, int m) {
    bool same = n == m;
    for (int i = 0; same && i < n; i++) same = got[i] == want[i];
    if (same) return;
    char g[256] = "", w[256] = "";
    for (int i = 0; i < n && strlen(g) < 200; i++)
        snprintf(g + strlen(g), sizeof g - strlen(g), " %d", got[i]);
    for (int i = 0; i < m && strlen(w) < 200; i++)
        snprintf(w + strlen(w), sizeof w - strlen(w), " %d", want[i]);
    ck_abort_msg("%s: ids%s, want%s", what, g, w);
}

static void same_merges(const Bpe *t, const int *want, int m) {
    same_ids("the merges", t->merges, 2 * t->n_merges, want, 2 * m);
}

static void token_is(const Bpe *t, int id, const char *want) {
    char buf[64];
    bpe_token_text(t, id, buf, sizeof buf);
    ck_assert_msg(strcmp(buf, want) == 0, "token %d prints '%s', want '%s'",
                  id, buf, want);
}

START_TEST(bpe_by_hand) {
    // hug x10, pug x5, pun x12, bun x4, hugs x5, one word a line.
    // Alphabet b g h n p s u = ids 4..10. Counts: ug 20, pu 17, un 16, hu
    // 15, gs 5, bu 4. ug -> 11; then un 16 -> 12; h ug 15 -> 13; p un 12
    // -> 14; then p ug 5 and hug s 5 tie: (8, 11) before (13, 9), so pug
    // -> 15, hugs -> 16; b un 4 -> 17; nothing is left.
    static const struct { const char *w; int n; } words[] = {
        {"hug", 10}, {"pug", 5}, {"pun", 12}, {"bun", 4}, {"hugs", 5}};
    char text[512] = "";
    for (int r = 0; r < 12; r++)   // interleaved, so order does not help
        for (int k = 0; k < 5; k++)
            if (r < words[k].n) {
                strcat(text, words[k].w);
                strcat(text, "\n");
            }
    Bpe t = learn(text, 100);
    ck_assert_int_eq(t.n_chars, 7);
    static const int m1[] = {10, 5, 10, 7, 6, 11, 8, 12, 8, 11, 13, 9, 4, 12};
    same_merges(&t, m1, 7);
    ck_assert_int_eq(t.vocab_size, 4 + 7 + 7);
    static const char *const s1[] = {"ug", "un", "hug", "pun", "pug", "hugs",
                                     "bun"};
    for (int i = 0; i < 7; i++) token_is(&t, 11 + i, s1[i]);
    token_is(&t, 0, "<pad>");
    token_is(&t, 3, "<unk>");
    int ids[16];
    static const int e1[] = {16, 3, 17, 3, 6, 10, 9};   // hugs␣bun␣hus
    same_ids("hugs bun hus", ids, round_trip(&t, "hugs", 4, ids), e1, 1);
    Error err;
    int n = bpe_encode(&t, "hugs bun hus", 12, ids, &err);
    same_ids("hugs bun hus", ids, n, e1, 7);
    bpe_free(&t);
    Bpe t3 = learn(text, 3);   // the first three only
    same_merges(&t3, m1, 3);
    bpe_free(&t3);

    // "aaa aaa aa": pieces aaa, ␣aaa, ␣aa; ' ' = 4, a = 5. (a, a) counts
    // 2 + 2 + 1 = 5 -> 6, merged without overlap: aa a, ␣ aa a, ␣ aa.
    // Then (aa, a) and (␣, aa) both count 2: (4, 6) wins -> 7 "▁aa".
    // Then each pair is seen once: learning stops.
    Bpe u = learn("aaa aaa aa\n", 10);
    static const int m2[] = {5, 5, 4, 6};
    same_merges(&u, m2, 2);
    token_is(&u, 6, "aa");
    token_is(&u, 7, "\xe2\x96\x81" "aa");
    token_is(&u, 4, "\xe2\x96\x81");
    static const int e2[] = {6, 5, 7, 5, 7};
    same_ids("aaa aaa aa", ids, round_trip(&u, "aaa aaa aa", 10, ids), e2, 5);
    static const int e3[] = {6, 6};
    same_ids("aaaa", ids, round_trip(&u, "aaaa", 4, ids), e3, 2);
    static const int e4[] = {5, 4, 7, 4};   // a␣␣aa␣: a, ␣, ␣aa, ␣
    same_ids("'a  aa '", ids, round_trip(&u, "a  aa ", 6, ids), e4, 4);
    static const int e5[] = {4, 4, 4};
    same_ids("three spaces", ids, round_trip(&u, "   ", 3, ids), e5, 3);
    ck_assert_int_eq(round_trip(&u, "", 0, ids), 0);
    bpe_free(&u);
}
END_TEST

START_TEST(bpe_char_mode) {
    const char *s = "Zwei M\xc3\xa4nner\tstehen\xc2\xa0" "am Herd.\n";
    Bpe t = learn(s, 0);
    ck_assert_int_eq(t.n_merges, 0);
    ck_assert_int_eq(t.vocab_size, BPE_ALPHA + t.n_chars);
    int ids[64];
    size_t n = strlen(s) - 1;   // without the newline
    int k = round_trip(&t, s, n, ids);
    uint32_t cps[64];
    ck_assert_int_eq(k, (int)utf8_decode(s, n, cps, NULL));
    for (int i = 0; i < k; i++)
        ck_assert_msg(ids[i] >= BPE_ALPHA && t.chars[ids[i] - BPE_ALPHA]
                      == cps[i], "character %d", i);
    token_is(&t, ids[11], "<U+0009>");
    token_is(&t, ids[18], "<U+00A0>");
    token_is(&t, ids[6], "ä");
    bpe_free(&t);
}
END_TEST

START_TEST(bpe_unknown_and_errors) {
    Bpe t = learn("abc abc\n", 2);
    int ids[16];
    Error err;
    int n = bpe_encode(&t, "abzc\n\xc3\xa9", 7, ids, &err);
    ck_assert_int_eq(n, 5);
    ck_assert_int_eq(ids[1], BPE_UNK);   // z
    ck_assert_int_eq(ids[3], BPE_UNK);   // \n
    ck_assert_int_eq(ids[4], BPE_UNK);   // é
    size_t len;
    char *d = bpe_decode(&t, ids, n, &len, &err);
    ck_assert_str_eq(d, "ab\xef\xbf\xbd" "c\xef\xbf\xbd\xef\xbf\xbd");
    free(d);
    // specials decode to nothing
    int sp[4] = {TOK_BOS, ids[0], TOK_EOS, TOK_PAD};
    d = bpe_decode(&t, sp, 4, &len, &err);
    ck_assert_str_eq(d, "ab");
    free(d);
    int bad_id[2] = {ids[0], t.vocab_size};
    ck_assert_ptr_null(bpe_decode(&t, bad_id, 2, &len, &err));
    ck_assert_msg(strstr(err.msg, "outside the vocabulary"), "%s", err.msg);
    bad_id[1] = -1;
    ck_assert_ptr_null(bpe_decode(&t, bad_id, 2, &len, &err));
    ck_assert_int_eq(bpe_encode(&t, "a\xc3", 2, ids, &err), -1);
    ck_assert_msg(strstr(err.msg, "invalid UTF-8"), "%s", err.msg);
    bpe_free(&t);

    Bpe u;
    const char *bad[] = {"ok\n\xff", "ab\0c", ""};
    const size_t blen[] = {4, 4, 0};
    const char *want[] = {"text 1, line 2: invalid UTF-8 at byte 0",
                          "NUL", "empty"};
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(bpe_learn(&u, &bad[k], &blen[k], 1, 5, &err), -1);
        ck_assert_msg(strstr(err.msg, want[k]), "'%s' lacks '%s'", err.msg,
                      want[k]);
        ck_assert_ptr_null(u.chars);
    }
    const char *ok = "ab";
    size_t okn = 2;
    ck_assert_int_eq(bpe_learn(&u, &ok, &okn, 1, -1, &err), -1);
    ck_assert_msg(strstr(err.msg, "merges"), "%s", err.msg);
}
END_TEST

// Random lines over a few letters and spaces.
static char *random_text(Rng *rng, int lines, const char *letters) {
    size_t cap = (size_t)lines * 64 + 1, n = 0;
    char *s = xmalloc(cap);
    int L = (int)strlen(letters);
    for (int l = 0; l < lines; l++) {
        int len = (int)rng_below(rng, 40);
        for (int i = 0; i < len; i++)
            s[n++] = rng_below(rng, 5) == 0 ? ' '
                     : letters[rng_below(rng, (uint32_t)L)];
        s[n++] = '\n';
    }
    s[n] = '\0';
    return s;
}

START_TEST(bpe_deterministic) {
    size_t len[2];
    char *text[2];
    for (int k = 0; k < 2; k++) {
        text[k] = load(M30K_FILES[k], &len[k]);
        // the first 3,000 lines
        size_t i = 0;
        for (int l = 0; l < 3000; l++) i = strchr(text[k] + i, '\n') - text[k]
                                            + 1;
        len[k] = i;
    }
    Bpe a, b;
    Error err;
    ck_assert_msg(bpe_learn(&a, (const char *const *)text, len, 2, 1000,
                            &err) == 0, "%s", err.msg);
    // copies elsewhere, after other allocations
    char *junk = xmalloc(12345);
    char *copy[2];
    for (int k = 0; k < 2; k++)
        copy[k] = memcpy((char *)xmalloc(len[k] + 7) + 7, text[k], len[k]);
    ck_assert_msg(bpe_learn(&b, (const char *const *)copy, len, 2, 1000,
                            &err) == 0, "%s", err.msg);
    char *sa = bpe_to_string(&a, NULL), *sb = bpe_to_string(&b, NULL);
    ck_assert_int_eq(a.n_merges, 1000);
    ck_assert_msg(strcmp(sa, sb) == 0, "two learnings differ");
    free(sa), free(sb), free(junk);
    bpe_free(&a), bpe_free(&b);
    for (int k = 0; k < 2; k++) free(text[k]), free(copy[k] - 7);
}
END_TEST

// The definition of encoding a piece: every merge in order, each over the
// whole word from left to right.
static int naive_encode(const Bpe *t, const uint32_t *cps, int n, int *out) {
    for (int i = 0; i < n; i++) {
        int lo = 0;
        while (lo < t->n_chars && t->chars[lo] != cps[i]) lo++;
        out[i] = lo < t->n_chars ? BPE_ALPHA + lo : BPE_UNK;
    }
    for (int m = 0; m < t->n_merges; m++) {
        int a = t->merges[2 * m], b = t->merges[2 * m + 1], j = 0;
        for (int i = 0; i < n; j++)
            if (i + 1 < n && out[i] == a && out[i + 1] == b)
                out[j] = BPE_ALPHA + t->n_chars + m, i += 2;
            else out[j] = out[i++];
        n = j;
    }
    return n;
}

// A naive learner over the pieces of text: every pair recounted before
// each merge (ids stay below 128 here). Fills merges (2 per merge);
// returns how many.
static int naive_learn(const Bpe *t, const char *text, int max, int *merges) {
    int W = 0, cap = 4096;
    int (*w)[64] = xmalloc((size_t)cap * sizeof *w);
    int *wl = xmalloc((size_t)cap * sizeof *wl);
    long (*count)[128] = xmalloc(128 * sizeof *count);
    size_t n = strlen(text);
    for (size_t i = 0; i < n;) {   // every occurrence, not distinct words
        if (text[i] == '\n') { i++; continue; }
        size_t e = i + (text[i] == ' ');
        while (e < n && text[e] != ' ' && text[e] != '\n') e++;
        uint32_t cps[64];
        ck_assert_int_lt(W, cap);
        wl[W] = (int)utf8_decode(text + i, e - i, cps, NULL);
        for (int k = 0; k < wl[W]; k++) {
            int c = 0;
            while (t->chars[c] != cps[k]) c++;
            w[W][k] = BPE_ALPHA + c;
        }
        W++, i = e;
    }
    ck_assert_int_lt(BPE_ALPHA + t->n_chars + max, 128);
    int m = 0;
    for (; m < max; m++) {
        memset(count, 0, 128 * sizeof *count);
        for (int v = 0; v < W; v++)
            for (int j = 0; j + 1 < wl[v]; j++) count[w[v][j]][w[v][j + 1]]++;
        long best = 1;
        int ba = -1, bb = -1;
        for (int a = 0; a < 128; a++)     // ascending: the first of equal
            for (int b = 0; b < 128; b++) // counts is the smallest pair
                if (count[a][b] > best) best = count[a][b], ba = a, bb = b;
        if (ba < 0) break;
        merges[2 * m] = ba, merges[2 * m + 1] = bb;
        int x = BPE_ALPHA + t->n_chars + m;
        for (int v = 0; v < W; v++) {
            int j = 0;
            for (int i = 0; i < wl[v]; j++)
                if (i + 1 < wl[v] && w[v][i] == ba && w[v][i + 1] == bb)
                    w[v][j] = x, i += 2;
                else w[v][j] = w[v][i++];
            wl[v] = j;
        }
    }
    free(w), free(wl), free(count);
    return m;
}

START_TEST(bpe_matches_naive) {
    Rng rng;
    rng_seed(&rng, 7);
    for (int trial = 0; trial < 6; trial++) {
        // words over a, b (c, ä): ä is never in the text, an <unk>
        static const char *const letters[4] = {"a", "b", "c", "\xc3\xa4"};
        uint32_t nl = trial % 2 ? 2 : 4;
        char *text = random_text(&rng, 40, trial % 2 ? "ab" : "abcd");
        Bpe t = learn(text, 25 + 10 * trial);
        int want[2 * 100];
        int m = naive_learn(&t, text, 25 + 10 * trial, want);
        same_merges(&t, want, m);
        for (int k = 0; k < 300; k++) {
            char w[80];
            int n = 0, L = 1 + (int)rng_below(&rng, 30);
            if (rng_below(&rng, 2)) w[n++] = ' ';
            for (int i = 0; i < L; i++) {
                const char *c = letters[rng_below(&rng, nl)];
                memcpy(w + n, c, strlen(c));
                n += (int)strlen(c);
            }
            uint32_t cps[64];
            int nc = (int)utf8_decode(w, (size_t)n, cps, NULL);
            int got[64], ref[64];
            Error err;
            int g = bpe_encode(&t, w, (size_t)n, got, &err);
            int r = naive_encode(&t, cps, nc, ref);
            char what[96];
            snprintf(what, sizeof what, "trial %d, '%.*s'", trial, n, w);
            same_ids(what, got, g, ref, r);
            if (k % 2) {   // again, from the cache
                g = bpe_encode(&t, w, (size_t)n, got, &err);
                same_ids(what, got, g, ref, r);
            }
        }
        bpe_free(&t);
        free(text);
    }
}
END_TEST

START_TEST(bpe_string_round_trip) {
    size_t len;
    char *de = load("val.de", &len);
    Bpe t = learn(de, 300);
    size_t n1;
    char *s1 = bpe_to_string(&t, &n1);
    ck_assert_uint_eq(strlen(s1), n1);
    ck_assert_msg(strncmp(s1, "bpe1 ", 5) == 0, "%.20s", s1);
    Bpe u = {0};
    Error err;
    ck_assert_msg(bpe_from_string(&u, s1, &err) == 0, "%s", err.msg);
    char *s2 = bpe_to_string(&u, NULL);
    ck_assert_str_eq(s1, s2);
    ck_assert_int_eq(u.vocab_size, t.vocab_size);
    // the same encodings, line by line
    int *a = xmalloc(1024 * sizeof *a), *b = xmalloc(1024 * sizeof *b);
    for (size_t i = 0; i < len;) {
        size_t e = i;
        while (e < len && de[e] != '\n') e++;
        int na = bpe_encode(&t, de + i, e - i, a, &err);
        int nb = round_trip(&u, de + i, e - i, b);
        same_ids("a line of val.de", b, nb, a, na);
        i = e + 1;
    }
    // through a checkpoint's metadata
    Seq2SeqConfig cfg = seq2seq_config_default(u.vocab_size, 8);
    cfg.n_embd = 8, cfg.n_head = 2, cfg.n_ffn = 8, cfg.n_enc = 1;
    cfg.n_dec = 1;
    Seq2Seq m, back;
    ck_assert_msg(seq2seq_create(&m, &cfg, &err) == 0, "%s", err.msg);
    char path[64] = "/tmp/ch7_bpe_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_msg(seq2seq_save(path, &m, 3, s1, &err) == 0, "%s", err.msg);
    char *vocab = NULL;
    int step;
    ck_assert_msg(seq2seq_load(path, &back, &step, &vocab, &err) == 0, "%s",
                  err.msg);
    unlink(path);
    ck_assert_str_eq(vocab, s1);
    seq2seq_free(&m), seq2seq_free(&back);
    free(vocab), free(a), free(b), free(s1), free(s2), free(de);
    bpe_free(&t), bpe_free(&u);
}
END_TEST

static void refused(const char *what, const char *s, const char *want) {
    Bpe t = learn("xy\n", 0), keep = t;
    Error err;
    ck_assert_msg(bpe_from_string(&t, s, &err) == -1, "%s: read", what);
    ck_assert_msg(strstr(err.msg, "tokenizer string: ") == err.msg
                  && strstr(err.msg, want) && !strchr(err.msg, '\n'),
                  "%s: message '%s' lacks '%s'", what, err.msg, want);
    ck_assert_msg(t.n_chars == keep.n_chars && t.chars == keep.chars
                  && t.n_merges == keep.n_merges && t.merges == keep.merges
                  && t.vocab_size == keep.vocab_size && t.bytes == keep.bytes
                  && t.off == keep.off && t.tab == keep.tab,
                  "%s: *t changed", what);
    bpe_free(&t);
}

START_TEST(bpe_corrupt_strings) {
    // ids: 4 a, 5 b, 6 c; merge 0 = 7, merge 1 = 8
    const char *good = "bpe1 3 2\nabc\n4 5\n7 6\n";
    Bpe t;
    Error err;
    ck_assert_msg(bpe_from_string(&t, good, &err) == 0, "%s", err.msg);
    int ids[8];
    ck_assert_int_eq(bpe_encode(&t, "abc", 3, ids, &err), 1);
    ck_assert_int_eq(ids[0], 8);
    bpe_free(&t);
    static const struct { const char *what, *s, *want; } cs[] = {
        {"no header", "bpe2 3 2\nabc\n4 5\n7 6\n", "bpe1"},
        {"no alphabet size", "bpe1 x 2\nabc\n4 5\n7 6\n", "alphabet's size"},
        {"alphabet size 0", "bpe1 0 0\n\n", "alphabet's size"},
        {"leading zero", "bpe1 03 2\nabc\n4 5\n7 6\n", "alphabet's size"},
        {"negative merges", "bpe1 3 -2\nabc\n4 5\n7 6\n", "merges"},
        {"huge counts", "bpe1 1000000 16000000\nabc\n", "more than"},
        {"alphabet too short", "bpe1 4 0\nabc\n", "alphabet"},
        {"alphabet out of order", "bpe1 3 0\nacb\n", "ascending"},
        {"alphabet repeats", "bpe1 3 0\naab\n", "ascending"},
        {"alphabet not UTF-8", "bpe1 3 0\na\xc3(b\n", "UTF-8"},
        {"alphabet overlong", "bpe1 2 0\n\xc1\x81z\n", "UTF-8"},
        {"no newline after alphabet", "bpe1 3 2\nabcd4 5\n7 6\n", "newline"},
        {"merge of a special", "bpe1 3 2\nabc\n3 5\n7 6\n", "merge 1"},
        {"merge of an id to come", "bpe1 3 2\nabc\n4 7\n7 6\n", "merge 1"},
        {"merge of itself", "bpe1 3 2\nabc\n4 5\n8 6\n", "merge 2"},
        {"a repeated merge", "bpe1 3 2\nabc\n4 5\n4 5\n", "repeats merge 1"},
        {"too few merges", "bpe1 3 3\nabc\n4 5\n7 6\n", "merge 3"},
        {"a merge without b", "bpe1 3 2\nabc\n4 5\n7\n", "merge 2"},
        {"two spaces", "bpe1 3 2\nabc\n4  5\n7 6\n", "merge 1"},
        {"text after the end", "bpe1 3 2\nabc\n4 5\n7 6\nx", "after merge 2"},
        {"empty", "", "bpe1"},
    };
    for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++)
        refused(cs[k].what, cs[k].s, cs[k].want);
    // every prefix of a real tokenizer's string
    Bpe r = learn("Ein Mann\tgeht über die Straße. Ein Hund.\n", 12);
    char *s = bpe_to_string(&r, NULL);
    size_t n = strlen(s);
    for (size_t cut = 0; cut < n; cut++) {
        char *p = memcpy(xmalloc(cut + 1), s, cut);
        p[cut] = '\0';
        char what[48];
        snprintf(what, sizeof what, "the first %zu bytes", cut);
        refused(what, p, "");
        free(p);
    }
    // random byte changes: refused or read, never a crash
    Rng rng;
    rng_seed(&rng, 11);
    for (int k = 0; k < 2000; k++) {
        char *p = strdup(s);
        size_t at = rng_below(&rng, (uint32_t)n);
        p[at] = (char)(1 + rng_below(&rng, 255));
        Bpe u;
        if (bpe_from_string(&u, p, &err) == 0) bpe_free(&u);
        else ck_assert_msg(strstr(err.msg, "tokenizer string: ") == err.msg,
                           "%s", err.msg);
        free(p);
    }
    free(s);
    bpe_free(&r);
}
END_TEST

// A string whose merges each join the token before with itself: merge
// i is 2^(i+1) bytes long, so 40 of them in 200 bytes would ask for a
// terabyte. Refused, with one line; 20 of them (2 MiB in all) load.
static char *doubling(int merges) {
    StrBuf b = {0};
    sb_printf(&b, "bpe1 1 %d\na\n", merges);
    for (int i = 0; i < merges; i++)
        sb_printf(&b, "%d %d\n", BPE_ALPHA + i, BPE_ALPHA + i);
    return b.s;
}

START_TEST(bpe_doubling_merges) {
    char *s = doubling(40);
    refused("40 doubling merges", s, "more than 16777216 bytes");
    free(s);
    s = doubling(20);
    Bpe t;
    Error err;
    ck_assert_msg(bpe_from_string(&t, s, &err) == 0, "%s", err.msg);
    int id = t.vocab_size - 1;
    ck_assert_int_eq(t.off[id + 1] - t.off[id], 1 << 20);
    bpe_free(&t);
    free(s);
}
END_TEST

Suite *ch7_bpe_suite(void) {
    Suite *s = suite_create("ch7_bpe");
    TCase *tc = tcase_new("bpe", "ch7");
    tcase_add_test(tc, bpe_multi30k_round_trip);
    tcase_add_test(tc, bpe_by_hand);
    tcase_add_test(tc, bpe_char_mode);
    tcase_add_test(tc, bpe_unknown_and_errors);
    tcase_add_test(tc, bpe_deterministic);
    tcase_add_test(tc, bpe_matches_naive);
    tcase_add_test(tc, bpe_string_round_trip);
    tcase_add_test(tc, bpe_corrupt_strings);
    tcase_add_test(tc, bpe_doubling_merges);
    suite_add_tcase(s, tc);
    return s;
}
