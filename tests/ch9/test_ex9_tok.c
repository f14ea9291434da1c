// Tests of exercises 9.1 and 9.2. Expected values come from Hugging Face's
// bytes_to_unicode() and tiktoken's BPE (tests/reference/ch9_tok/
// expected.json, written by tests/reference/gen_ch9_tokenizer.py), from
// GPT-2's published vocabulary (the space is "Ġ", '\n' is "Ċ") and from
// merges worked out by hand, never from the reference solutions or the
// chapter's own table and merge loop. The small merge tables of 9.2 are
// read by the chapter's loader (gpt2_tok_from_text), whose tests are in
// test_ch9_tokenizer.c.
//
// The wrong versions each exercise's tests are meant to catch (each was
// tried as a change of the reference solution, graded with `make check
// EXERCISES=<that copy>`, and scored below full marks):
//   9.1  the space taken as printable ('!' - 1 as the first byte); the
//        soft hyphen 0xad or DEL 0x7f taken as printable; 0xa0 taken as
//        printable or 0xac left out; the others numbered from 255 or
//        from 0, or as 256 + b; the counter moved for every byte; the
//        identity.
//   9.2  the first mergeable pair from the left instead of the lowest
//        rank; the highest rank; only the first occurrence of the pair
//        merged per pass (shows on a table where a merge ranks before the
//        merge that makes one of its parts); overlapping pairs merged
//        ("a a a" -> "aa aa"); merging from right to left; one pass and
//        no repeat; the old count returned.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ch9_exercises.h"
#include "check_util.h"
#include "mem.h"
#include "tok_fixture.h"

// ---- 9.1 the bytes-to-unicode table -------------------------------------

START_TEST(ex9_1_gpt2_characters) {
    // what GPT-2's vocab.json shows: "Ġthe", "Ċ", and the printable bytes
    uint32_t cp[256];
    memset(cp, 0xff, sizeof cp);
    ex_bytes_to_unicode(cp);
    static const struct { int b; uint32_t cp; } known[] = {
        {' ', 0x120}, {'\n', 0x10a}, {0, 0x100}, {'\t', 0x109},
        {0x7f, 0x121}, {0xa0, 0x142}, {0xad, 0x143}, {'!', '!'},
        {'A', 'A'}, {'~', '~'}, {0xa1, 0xa1}, {0xac, 0xac}, {0xae, 0xae},
        {0xe9, 0xe9}, {0xff, 0xff},
    };
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
        ck_assert_msg(cp[known[k].b] == known[k].cp, "byte 0x%02x: U+%04X, "
                      "expected U+%04X", known[k].b, cp[known[k].b],
                      known[k].cp);
}
END_TEST

START_TEST(ex9_1_whole_table) {
    uint32_t cp[256];
    memset(cp, 0xff, sizeof cp);
    ex_bytes_to_unicode(cp);
    Json *x = tokfx_expected();
    const Json *table = tokfx_get(x, "bytes_to_unicode", JSON_ARRAY);
    ck_assert_int_eq(table->n, 256);
    for (int b = 0; b < 256; b++) {
        int64_t want;
        json_int64(&table->items[b], &want);
        ck_assert_msg(cp[b] == (uint32_t)want, "byte 0x%02x: U+%04X, "
                      "Hugging Face's table says U+%04X", b, cp[b],
                      (unsigned)want);
    }
    json_free(x);
}
END_TEST

TCase *ex9_1_tcase(void) {
    TCase *tc = tcase_new("ex9.1", "ch9 exercises");
    tcase_add_test(tc, ex9_1_gpt2_characters);
    tcase_add_test(tc, ex9_1_whole_table);
    return tc;
}

// ---- 9.2 BPE merges of one pre-token ----------------------------------------

// Merges the bytes of piece with the student's function and compares
// with want (n_want ids).
static void check_merge(const Gpt2Tokenizer *t, const char *what,
                        const char *piece, size_t n, const int *want,
                        int n_want) {
    int *ids = xmalloc((n + 1) * sizeof *ids);
    for (size_t i = 0; i < n; i++) ids[i] = t->byte_id[(unsigned char)piece[i]];
    int k = ex_bpe_merge(t, ids, (int)n);
    char g[256], w[256];
    bool same = k == n_want;
    for (int i = 0; same && i < k; i++) same = ids[i] == want[i];
    ck_assert_msg(same, "%s: %s, expected %s", what,
                  tokfx_show(g, sizeof g, ids, k < 0 ? 0 : k),
                  tokfx_show(w, sizeof w, want, n_want));
    free(ids);
}

// Merges a piece of ASCII letters in a small tokenizer (tokfx_small: the
// bytes are their own ids, merge i makes 256 + i).
#define MERGE(t, piece, ...) do {                                          \
        static const int want_[] = {__VA_ARGS__};                          \
        check_merge(t, piece, piece, strlen(piece), want_,                 \
                    (int)(sizeof want_ / sizeof want_[0]));                \
    } while (0)

START_TEST(ex9_2_lowest_rank) {
    // (b, c) ranks first: "abc" is a + bc, though (a, b) comes first in
    // the piece, and (ab, c) would then make abc
    static const char *const merges[] = {"b c", "a b", "ab c"};
    Gpt2Tokenizer t;
    tokfx_small(&t, merges, 3, true);
    MERGE(&t, "abc", 'a', 256);
    MERGE(&t, "abab", 257, 257);
    MERGE(&t, "xabcy", 'x', 'a', 256, 'y');
    gpt2_tok_free(&t);
}
END_TEST

START_TEST(ex9_2_overlap) {
    static const char *const merges[] = {"a a", "aa a"};
    Gpt2Tokenizer t;
    tokfx_small(&t, merges, 2, true);
    MERGE(&t, "aa", 256);
    MERGE(&t, "aaa", 257);           // aa a, then aaa
    MERGE(&t, "aaaa", 256, 256);     // aa aa: no merge joins them
    MERGE(&t, "aaaaa", 256, 257);    // aa aa a, then aa aaa
    MERGE(&t, "baaab", 'b', 257, 'b');
    gpt2_tok_free(&t);
}
END_TEST

START_TEST(ex9_2_repeat) {
    static const char *const merges[] = {"a b", "ab c", "d e", "abc d"};
    Gpt2Tokenizer t;
    tokfx_small(&t, merges, 4, true);
    MERGE(&t, "abcd", 259);          // ab c d, abc d, abcd
    MERGE(&t, "abcde", 257, 258);    // (d, e) ranks before (abc, d)
    MERGE(&t, "dabcab", 'd', 257, 256);
    gpt2_tok_free(&t);
}
END_TEST

START_TEST(ex9_2_every_occurrence) {
    // rank 0 joins ab and a, but ab is made by rank 1: once (a, b) is the
    // lowest pair, all of its occurrences merge before (ab, a) is looked
    // at again (GPT-2's encoder.py). Merging one occurrence at a time
    // gives aba, b, and so does Hugging Face's tokenizers on this table;
    // GPT-2's own merges.txt never ranks a merge before one that makes
    // its parts, and there the two ways agree.
    static const char *const merges[] = {"ab a", "a b"};
    Gpt2Tokenizer t;
    tokfx_small(&t, merges, 2, true);
    MERGE(&t, "abab", 257, 257);
    MERGE(&t, "ababa", 257, 256);
    gpt2_tok_free(&t);
}
END_TEST

START_TEST(ex9_2_edges) {
    static const char *const merges[] = {"a b"};
    Gpt2Tokenizer t;
    tokfx_small(&t, merges, 1, true);
    int ids[4] = {-7, -7, -7, -7};
    ck_assert_int_eq(ex_bpe_merge(&t, ids, 0), 0);
    MERGE(&t, "a", 'a');
    MERGE(&t, "ba", 'b', 'a');
    ids[0] = t.eot, ids[1] = 'a', ids[2] = 'b';   // ids, not bytes
    ck_assert_int_eq(ex_bpe_merge(&t, ids, 3), 2);
    ck_assert(ids[0] == t.eot && ids[1] == 256);
    gpt2_tok_free(&t);
}
END_TEST

START_TEST(ex9_2_tiktoken_pieces) {
    // pieces of Tiny Shakespeare and of the hard-text catalogue, with the
    // ids of tiktoken's BPE, in the tokenizer trained on Shakespeare
    Gpt2Tokenizer t;
    tokfx_load(&t);
    Json *x = tokfx_expected();
    const Json *pieces = tokfx_get(x, "pieces", JSON_ARRAY);
    ck_assert_int_ge(pieces->n, 100);
    for (int p = 0; p < pieces->n; p++) {
        size_t n;
        int m, *want;
        char *piece = tokfx_entry(&pieces->items[p], &n, &want, &m);
        char what[256], e[200];
        snprintf(what, sizeof what, "piece %d \"%s\"", p,
                 tokfx_escape(e, sizeof e, piece, n));
        check_merge(&t, what, piece, n, want, m);
        free(want);
        free(piece);
    }
    json_free(x);
    gpt2_tok_free(&t);
}
END_TEST

TCase *ex9_2_tcase(void) {
    TCase *tc = tcase_new("ex9.2", "ch9 exercises");
    tcase_add_test(tc, ex9_2_lowest_rank);
    tcase_add_test(tc, ex9_2_overlap);
    tcase_add_test(tc, ex9_2_repeat);
    tcase_add_test(tc, ex9_2_every_occurrence);
    tcase_add_test(tc, ex9_2_edges);
    tcase_add_test(tc, ex9_2_tiktoken_pieces);
    return tc;
}
