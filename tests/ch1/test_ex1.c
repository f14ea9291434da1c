// Tests of the chapter 1 exercises. Expected values come from the text
// itself or were computed independently (Python, by hand), never from the
// reference solutions.
//
// The wrong versions each exercise's tests are meant to catch (each was
// tried as a change of the reference solution, graded with `make check
// EXERCISES=<that copy>`, and scored below full marks):
//   1.1  the code points not sorted, or sorted largest first; an empty
//        text accepted; an unknown code point encoded as id 0; a negative
//        id, or id V, accepted by decode; ids counted from 1. Equivalent,
//        so not caught: comparing with sorted[i - 1] instead of the last
//        kept value while compacting in place (the two are equal).
//   1.2  offsets drawn below n - T + 1 (the last target read past the
//        end), below n - T - 1 (the last window never comes, and n = T + 1
//        breaks), or below n; y not shifted by one; one offset for the
//        whole batch; two draws per row (one for x, one for y); rows
//        written at b instead of b * T.
//   1.3  rounding, or ceil, instead of floor; val starting one past the
//        cut; (size_t)train_frac * n; a fixed 90%; val given all n ids;
//        the product in float (caught by the new 0.53 * 100 case).
//   1.4  the pairs taken as i <= n (reading past the end) or through
//        n - 1 in size_t (wraps at n = 0); counts transposed, or set to 1
//        instead of incremented; the row total summed over a column; no
//        alpha * V (or only alpha) in the denominator, no alpha in the
//        numerator; the mean over n instead of n - 1; log2; P(a | b)
//        instead of P(b | a).
//   1.5  no overlong, surrogate or above-U+10FFFF check; no continuation
//        check, or only its top bit (caught by the new "\xc3\xc3\xa9"
//        case); bad_offset at the bad continuation byte instead of the
//        sequence's start; a 2-byte lead's mask too narrow (& 0x0f); the
//        bytes counted instead of the code points; the cut-off test
//        missing or off by one (caught by the new cases whose bytes past
//        n would complete the sequence). Equivalent, so not caught: 0xc0
//        and 0xc1 accepted as leads, and 0xf5 .. 0xf7 (the overlong and
//        the above-U+10FFFF checks reject what they start); a 3- or
//        4-byte lead's mask one bit too wide (the bit is 0 in every lead
//        accepted).
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ch1_exercises.h"
#include "check_util.h"
#include "utf8.h"

// ---- 1.1 vocabulary, encode, decode ----------------------------------------

static size_t to_cps(const char *s, uint32_t *out) {
    long n = utf8_decode(s, strlen(s), out, NULL);
    ck_assert_int_ge(n, 0);
    return (size_t)n;
}

START_TEST(ex1_1_small_vocab) {
    uint32_t text[32];
    size_t n = to_cps("hello world", text);
    Vocab v = {0};
    ck_assert_int_eq(ex_vocab_build(&v, text, n), 0);
    ck_assert_int_eq(v.size, 8);
    const uint32_t want[8] = {' ', 'd', 'e', 'h', 'l', 'o', 'r', 'w'};
    for (int i = 0; i < 8; i++) ck_assert_uint_eq(v.chars[i], want[i]);
    vocab_free(&v);
}
END_TEST

START_TEST(ex1_1_unicode_sorted_by_code_point) {
    uint32_t text[32];
    size_t n = to_cps("Grüße, Gruß", text);  // G r u ß e , ü space
    Vocab v = {0};
    ck_assert_int_eq(ex_vocab_build(&v, text, n), 0);
    const uint32_t want[] = {' ', ',', 'G', 'e', 'r', 'u', 0xdf, 0xfc};
    ck_assert_int_eq(v.size, 8);
    for (int i = 0; i < 8; i++) ck_assert_uint_eq(v.chars[i], want[i]);
    int ids[32];
    uint32_t back[32];
    ck_assert_int_eq(ex_encode(&v, text, n, ids), 0);
    ck_assert_int_eq(ids[2], 7);                       // 'ü' is the largest
    ck_assert_int_eq(ex_decode(&v, ids, n, back), 0);
    ck_assert_mem_eq(back, text, n * sizeof *text);
    vocab_free(&v);
}
END_TEST

START_TEST(ex1_1_shakespeare_round_trip) {
    size_t bytes;
    char *raw = read_file(SHAKESPEARE_PATH, &bytes, NULL);
    ck_assert_msg(raw != NULL, "run 'make data' first");
    uint32_t *text = malloc(bytes * sizeof *text);
    size_t n = (size_t)utf8_decode(raw, bytes, text, NULL);
    Vocab v = {0};
    ck_assert_int_eq(ex_vocab_build(&v, text, n), 0);
    ck_assert_int_eq(v.size, 65);                 // the canonical count
    ck_assert_uint_eq(v.chars[0], '\n');
    ck_assert_uint_eq(v.chars[1], ' ');
    ck_assert_uint_eq(v.chars[64], 'z');
    uint32_t s[32], back[32];
    int ids[32];
    size_t m = to_cps("hii there", s);
    ck_assert_int_eq(ex_encode(&v, s, m, ids), 0);
    const int want[] = {46, 47, 47, 1, 58, 46, 43, 56, 43};  // nanoGPT's
    for (size_t i = 0; i < m; i++) ck_assert_int_eq(ids[i], want[i]);
    m = to_cps("To be or not to be", s);
    ck_assert_int_eq(ex_encode(&v, s, m, ids), 0);
    ck_assert_int_eq(ex_decode(&v, ids, m, back), 0);
    ck_assert_mem_eq(back, s, m * sizeof *s);
    vocab_free(&v);
    free(text);
    free(raw);
}
END_TEST

START_TEST(ex1_1_errors) {
    uint32_t text[8];
    size_t n = to_cps("abc", text);
    Vocab v = {0};
    ck_assert_int_eq(ex_vocab_build(&v, text, 0), -1);     // empty text
    ck_assert_int_eq(ex_vocab_build(&v, text, n), 0);
    int ids[8] = {0, 1, 2, 3};
    uint32_t unknown[2] = {'a', 'z'}, out[8];
    ck_assert_int_eq(ex_encode(&v, unknown, 2, ids), -1);  // 'z' unknown
    ids[3] = 3;
    ck_assert_int_eq(ex_decode(&v, ids, 4, out), -1);      // id 3 >= V
    ids[3] = -1;
    ck_assert_int_eq(ex_decode(&v, ids, 4, out), -1);
    vocab_free(&v);
}
END_TEST

TCase *ex1_1_tcase(void) {
    TCase *tc = tcase_new("ex1.1", "ch1 exercises");
    tcase_add_test(tc, ex1_1_small_vocab);
    tcase_add_test(tc, ex1_1_unicode_sorted_by_code_point);
    tcase_add_test(tc, ex1_1_shakespeare_round_trip);
    tcase_add_test(tc, ex1_1_errors);
    return tc;
}

// ---- 1.2 get_batch ---------------------------------------------------------

START_TEST(ex1_2_matches_the_rng) {
    // ids[i] = 1000 + i, so every value tells where it came from.
    enum { N = 500, B = 6, T = 9 };
    int ids[N], x[B * T], y[B * T];
    for (int i = 0; i < N; i++) ids[i] = 1000 + i;
    Rng rng, expect;
    rng_seed(&rng, 1337);
    rng_seed(&expect, 1337);
    ex_get_batch(x, y, ids, N, B, T, &rng);
    for (int b = 0; b < B; b++) {
        int off = (int)rng_below(&expect, N - T);   // the draw for row b
        for (int t = 0; t < T; t++) {
            ck_assert_int_eq(x[b * T + t], 1000 + off + t);
            ck_assert_int_eq(y[b * T + t], 1000 + off + t + 1);
        }
    }
    // exactly one draw per row: both generators are at the same place
    ck_assert_uint_eq(rng_u32(&rng), rng_u32(&expect));
}
END_TEST

START_TEST(ex1_2_reaches_the_last_window) {
    // n = T + 2 leaves exactly two valid windows: offsets 0 and 1. The
    // largest offset must come up, and nothing past the end may be read
    // (a sentinel follows the data).
    enum { T = 16, N = T + 2, B = 64 };
    int buf[N + 4], x[B * T], y[B * T];
    for (int i = 0; i < N; i++) buf[i] = i;
    for (int i = N; i < N + 4; i++) buf[i] = -777;
    Rng rng;
    rng_seed(&rng, 7);
    ex_get_batch(x, y, buf, N, B, T, &rng);
    int seen[2] = {0, 0};
    for (int b = 0; b < B; b++) {
        int off = x[b * T];
        ck_assert_msg(off == 0 || off == 1, "row %d starts at offset %d, "
                      "valid offsets are 0 and 1", b, off);
        seen[off]++;
        ck_assert_int_eq(y[b * T + T - 1], off + T);     // never -777
    }
    ck_assert_msg(seen[1] > 0, "the last valid window (offset n - T - 1) "
                  "never came up in %d rows: off-by-one in the range", B);
    ck_assert_msg(seen[0] > 0, "offset 0 never came up in %d rows", B);
}
END_TEST

START_TEST(ex1_2_single_window) {
    // n = T + 1: the only window is the whole array.
    enum { T = 5, B = 3 };
    int ids[T + 1] = {4, 8, 15, 16, 23, 42}, x[B * T], y[B * T];
    Rng rng;
    rng_seed(&rng, 1);
    ex_get_batch(x, y, ids, T + 1, B, T, &rng);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            ck_assert_int_eq(x[b * T + t], ids[t]);
            ck_assert_int_eq(y[b * T + t], ids[t + 1]);
        }
}
END_TEST

TCase *ex1_2_tcase(void) {
    TCase *tc = tcase_new("ex1.2", "ch1 exercises");
    tcase_add_test(tc, ex1_2_matches_the_rng);
    tcase_add_test(tc, ex1_2_reaches_the_last_window);
    tcase_add_test(tc, ex1_2_single_window);
    return tc;
}

// ---- 1.3 split --------------------------------------------------------------

START_TEST(ex1_3_ninety_ten) {
    int ids[10] = {0};
    Split tr, va;
    ex_split(ids, 10, 0.9, &tr, &va);
    ck_assert_ptr_eq(tr.ids, ids);
    ck_assert_uint_eq(tr.n, 9);
    ck_assert_ptr_eq(va.ids, ids + 9);
    ck_assert_uint_eq(va.n, 1);
    // Tiny Shakespeare's size: int(0.9 * 1115394) = 1003854 in Python
    static int big[1115394];
    ex_split(big, 1115394, 0.9, &tr, &va);
    ck_assert_uint_eq(tr.n, 1003854);
    ck_assert_uint_eq(va.n, 111540);
    ck_assert_ptr_eq(va.ids, big + 1003854);
    // 0.53 * 100 is 53 in double (Python's int(0.53 * 100) too); in
    // float, 0.53f * 100 = 52.999996 rounds down to 52
    ex_split(big, 100, 0.53, &tr, &va);
    ck_assert_uint_eq(tr.n, 53);
    ck_assert_uint_eq(va.n, 47);
}
END_TEST

START_TEST(ex1_3_edges) {
    int ids[7] = {0};
    Split tr, va;
    ex_split(ids, 7, 0.5, &tr, &va);                 // 3.5 -> 3
    ck_assert_uint_eq(tr.n, 3);
    ck_assert_uint_eq(va.n, 4);
    ex_split(ids, 7, 1.0, &tr, &va);
    ck_assert_uint_eq(tr.n, 7);
    ck_assert_uint_eq(va.n, 0);
    ck_assert_ptr_eq(va.ids, ids + 7);
    ex_split(ids, 7, 0.0, &tr, &va);
    ck_assert_uint_eq(tr.n, 0);
    ck_assert_ptr_eq(va.ids, ids);
    ck_assert_uint_eq(va.n, 7);
}
END_TEST

TCase *ex1_3_tcase(void) {
    TCase *tc = tcase_new("ex1.3", "ch1 exercises");
    tcase_add_test(tc, ex1_3_ninety_ten);
    tcase_add_test(tc, ex1_3_edges);
    return tc;
}

// ---- 1.4 bigram --------------------------------------------------------------

START_TEST(ex1_4_counts) {
    const int ids[] = {0, 1, 0, 1, 1, 2};
    long counts[9] = {0};
    ex_bigram_count(counts, ids, 6, 3);
    const long want[9] = {0, 2, 0,  1, 1, 1,  0, 0, 0};
    for (int i = 0; i < 9; i++)
        ck_assert_msg(counts[i] == want[i], "counts[%d][%d] = %ld, want %ld",
                      i / 3, i % 3, counts[i], want[i]);
    ex_bigram_count(counts, ids, 1, 3);        // one id: no pair, no change
    ex_bigram_count(counts, ids, 0, 3);        // none (n - 1 must not wrap)
    for (int i = 0; i < 9; i++) ck_assert_int_eq(counts[i], want[i]);
}
END_TEST

START_TEST(ex1_4_loss_by_hand) {
    // counts [[0,2],[1,1]] (from 0 1 0 1 1); val 0 1 1 with add-1:
    // P(1|0) = 3/4, P(1|1) = 2/4 -> (ln 4/3 + ln 2) / 2
    const long counts[4] = {0, 2, 1, 1};
    const int val[3] = {0, 1, 1};
    double got = ex_bigram_loss(counts, 2, val, 3, 1.0);
    double want = (log(4.0 / 3.0) + log(2.0)) / 2;
    ck_assert_double_eq_tol(got, want, 1e-12);
    // alpha 0.5: P(1|0) = 2.5/3, P(1|1) = 1.5/3
    got = ex_bigram_loss(counts, 2, val, 3, 0.5);
    want = (log(3.0 / 2.5) + log(3.0 / 1.5)) / 2;
    ck_assert_double_eq_tol(got, want, 1e-12);
    // one id or none: no pair to average, NAN (not 0, and no endless loop)
    for (size_t n = 0; n < 2; n++) {
        got = ex_bigram_loss(counts, 2, val, n, 1.0);
        ck_assert_msg(isnan(got), "ex_bigram_loss of %zu id%s = %g, want NAN "
                      "(no pair)", n, n ? "" : "s", got);
    }
}
END_TEST

START_TEST(ex1_4_shakespeare) {
    // Counted on train, scored on val with add-1; the value was computed
    // independently in Python (2.4818894321).
    size_t bytes;
    char *raw = read_file(SHAKESPEARE_PATH, &bytes, NULL);
    ck_assert_msg(raw != NULL, "run 'make data' first");
    uint32_t *text = malloc(bytes * sizeof *text);
    size_t n = (size_t)utf8_decode(raw, bytes, text, NULL);
    Vocab v;
    vocab_build(&v, text, n, NULL);
    int *ids = malloc(n * sizeof *ids);
    vocab_encode(&v, text, n, ids, NULL);
    size_t cut = n * 9 / 10;
    long *counts = calloc((size_t)v.size * v.size, sizeof *counts);
    ex_bigram_count(counts, ids, cut, v.size);
    double loss = ex_bigram_loss(counts, v.size, ids + cut, n - cut, 1.0);
    ck_assert_double_eq_tol(loss, 2.4818894321, 1e-9);
    free(counts);
    free(ids);
    vocab_free(&v);
    free(text);
    free(raw);
}
END_TEST

TCase *ex1_4_tcase(void) {
    TCase *tc = tcase_new("ex1.4", "ch1 exercises");
    tcase_add_test(tc, ex1_4_counts);
    tcase_add_test(tc, ex1_4_loss_by_hand);
    tcase_add_test(tc, ex1_4_shakespeare);
    return tc;
}

// ---- 1.5 UTF-8 ---------------------------------------------------------------

START_TEST(ex1_5_valid) {
    // 'a' (1 byte), U+00E9 (2), U+20AC (3), U+1F600 (4)
    const char s[] = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
    uint32_t out[16];
    size_t bad = 99;
    ck_assert_int_eq(ex_utf8_decode(s, sizeof s - 1, out, &bad), 4);
    ck_assert_uint_eq(out[0], 0x61);
    ck_assert_uint_eq(out[1], 0xe9);
    ck_assert_uint_eq(out[2], 0x20ac);
    ck_assert_uint_eq(out[3], 0x1f600);
    // the extremes of each length, and an empty input
    const char e[] = "\x7f\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf"
                     "\xf0\x90\x80\x80\xf4\x8f\xbf\xbf";
    const uint32_t want[] = {0x7f, 0x80, 0x7ff, 0x800, 0xffff, 0x10000,
                             0x10ffff};
    ck_assert_int_eq(ex_utf8_decode(e, sizeof e - 1, out, &bad), 7);
    for (int i = 0; i < 7; i++) ck_assert_uint_eq(out[i], want[i]);
    ck_assert_int_eq(ex_utf8_decode("", 0, out, &bad), 0);
}
END_TEST

static void expect_bad(const char *s, size_t n, size_t offset) {
    uint32_t out[16];
    size_t bad = 12345;
    long got = ex_utf8_decode(s, n, out, &bad);
    ck_assert_msg(got == -1, "decoding %zu malformed bytes returned %ld, "
                  "want -1", n, got);
    ck_assert_msg(bad == offset, "bad_offset %zu, want %zu", bad, offset);
}

START_TEST(ex1_5_malformed) {
    expect_bad("ab\xff" "c", 4, 2);          // 0xff never starts a char
    expect_bad("a\x80", 2, 1);               // a lone continuation byte
    expect_bad("ab\xe2\x82", 4, 2);          // cut off by the end
    expect_bad("\xc3(", 2, 0);               // missing continuation
    expect_bad("x\xc0\xaf", 3, 1);           // overlong '/'
    expect_bad("\xe0\x80\xaf", 3, 0);        // overlong, 3 bytes
    expect_bad("ok\xed\xa0\x80", 5, 2);      // surrogate U+D800
    expect_bad("\xf4\x90\x80\x80", 4, 0);    // U+110000
    // a lead byte where a continuation byte must be (0xc3 has its top
    // bit set, but not the pattern 10xxxxxx)
    expect_bad("\xc3\xc3\xa9", 3, 0);
    // cut off by n although the bytes after n would complete it: the
    // decoder must not read past n
    expect_bad("ab\xe2\x82\xac", 4, 2);
    expect_bad("\xf0\x9f\x98\x80", 3, 0);
}
END_TEST

TCase *ex1_5_tcase(void) {
    TCase *tc = tcase_new("ex1.5", "ch1 exercises");
    tcase_add_test(tc, ex1_5_valid);
    tcase_add_test(tc, ex1_5_malformed);
    return tc;
}
