// Tests of chapter 1's own code: the vocabulary, the corpus, get_batch and
// the baselines, with their error messages.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bigram.h"
#include "check_util.h"
#include "dataset.h"
#include "utf8.h"
#include "vocab.h"

static Vocab vocab_of(const char *s) {
    uint32_t cps[64];
    long n = utf8_decode(s, strlen(s), cps, NULL);
    Vocab v;
    ck_assert_int_eq(vocab_build(&v, cps, (size_t)n, NULL), 0);
    return v;
}

START_TEST(vocab_encode_error_names_char_and_position) {
    Vocab v = vocab_of("abc");
    Error err;
    size_t n;
    int *ids = vocab_encode_utf8(&v, "abz", 3, &n, &err);
    ck_assert_ptr_null(ids);
    ck_assert_str_eq(err.msg, "'z' at position 2 is not in the vocabulary");
    ids = vocab_encode_utf8(&v, "a\xc3\xbc", 3, &n, &err);   // 'ü'
    ck_assert_ptr_null(ids);
    ck_assert_str_eq(err.msg, "'ü' (U+00FC) at position 1 is not in the "
                     "vocabulary");
    ids = vocab_encode_utf8(&v, "ab\xc3", 3, &n, &err);
    ck_assert_ptr_null(ids);
    ck_assert_str_eq(err.msg, "invalid UTF-8 at byte 2 (a 2-byte sequence "
                     "cut short)");
    vocab_free(&v);
}
END_TEST

START_TEST(vocab_decode_round_trip_and_errors) {
    Vocab v = vocab_of("Grüße\n");
    Error err;
    size_t n, len;
    int *ids = vocab_encode_utf8(&v, "üßG\n", 6, &n, &err);
    ck_assert_ptr_nonnull(ids);
    ck_assert_uint_eq(n, 4);
    char *s = vocab_decode(&v, ids, n, &len, &err);
    ck_assert_str_eq(s, "üßG\n");
    ck_assert_uint_eq(len, 6);
    free(s);
    ids[1] = 99;
    ck_assert_ptr_null(vocab_decode(&v, ids, n, NULL, &err));
    ck_assert_str_eq(err.msg, "token id 99 at position 1 is outside the "
                     "vocabulary (0..5)");
    ck_assert_int_eq(vocab_id(&v, 'x'), -1);
    Vocab bad;
    const uint32_t not_unicode[2] = {'a', 0x110000};
    ck_assert_int_eq(vocab_build(&bad, not_unicode, 2, &err), -1);
    ck_assert_str_eq(err.msg, "value 0x110000 at position 1 is not a Unicode "
                     "code point");
    ck_assert_int_eq(vocab_id(&v, '\n'), 0);
    free(ids);
    vocab_free(&v);
}
END_TEST

START_TEST(corpus_shakespeare) {
    Corpus c;
    Error err;
    ck_assert_msg(corpus_load(&c, SHAKESPEARE_PATH, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(c.n, 1115394);
    ck_assert_int_eq(c.vocab.size, 65);
    ck_assert_uint_eq(c.train.n, 1003854);
    ck_assert_uint_eq(c.val.n, 111540);
    // the first line of the play, encoded and decoded again
    char *s = vocab_decode(&c.vocab, c.ids, 14, NULL, NULL);
    ck_assert_str_eq(s, "First Citizen:");
    free(s);
    corpus_free(&c);
}
END_TEST

START_TEST(corpus_errors) {
    Corpus c;
    Error err;
    ck_assert_int_eq(corpus_load(&c, "no/such/file.txt", &err), -1);
    ck_assert_str_eq(err.msg, "cannot open no/such/file.txt: No such file or "
                     "directory");
    char path[] = "/tmp/ch1_badXXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "hello\xffworld", 11), 11);
    close(fd);
    ck_assert_int_eq(corpus_load(&c, path, &err), -1);
    ck_assert_msg(strstr(err.msg, "invalid UTF-8 at byte 5") != NULL,
                  "message was: %s", err.msg);
    FILE *f = fopen(path, "w");
    ck_assert_int_eq(fwrite("ab\0cd", 1, 5, f), 5);   // a NUL at byte 2
    fclose(f);
    ck_assert_int_eq(corpus_load(&c, path, &err), -1);
    ck_assert_msg(strstr(err.msg, "NUL byte (U+0000) at byte offset 2")
                  != NULL, "message was: %s", err.msg);
    f = fopen(path, "w");
    fclose(f);                                   // now empty
    ck_assert_int_eq(corpus_load(&c, path, &err), -1);
    ck_assert_msg(strstr(err.msg, "needs at least 2 characters") != NULL,
                  "message was: %s", err.msg);
    unlink(path);
}
END_TEST

START_TEST(get_batch_first_batch_as_pytorch) {
    // torch.manual_seed(1337); torch.randint(len(train) - 8, (4,)) picks the
    // windows nanoGPT's lecture shows: "Let's he", "for that", "nt that ",
    // "MEO:\nI p". Our MT19937 and rng_below draw the same offsets.
    Corpus c;
    Error err;
    ck_assert_msg(corpus_load(&c, SHAKESPEARE_PATH, &err) == 0, "%s", err.msg);
    Rng rng;
    rng_seed(&rng, 1337);
    int x[32], y[32];
    ck_assert_int_eq(get_batch(x, y, &c.train, 4, 8, &rng, &err), 0);
    const char *want[4] = {"Let's he", "for that", "nt that ", "MEO:\nI p"};
    for (int b = 0; b < 4; b++) {
        char *s = vocab_decode(&c.vocab, x + 8 * b, 8, NULL, NULL);
        ck_assert_str_eq(s, want[b]);
        free(s);
        for (int t = 0; t < 7; t++) ck_assert_int_eq(y[8 * b + t], x[8 * b + t + 1]);
    }
    corpus_free(&c);
}
END_TEST

START_TEST(get_batch_errors) {
    int ids[4] = {0, 1, 2, 3}, x[8], y[8];
    Split s = {ids, 4};
    Rng rng;
    rng_seed(&rng, 0);
    Error err;
    ck_assert_int_eq(get_batch(x, y, &s, 1, 4, &rng, &err), -1);
    ck_assert_str_eq(err.msg, "a block of 4 needs 5 tokens, this split has 4");
    ck_assert_int_eq(get_batch(x, y, &s, 0, 2, &rng, &err), -1);
    ck_assert_int_eq(get_batch(x, y, &s, 2, 3, &rng, &err), 0);
    for (int b = 0; b < 2; b++) ck_assert_int_eq(x[3 * b], 0);  // one window
}
END_TEST

START_TEST(baselines_shakespeare) {
    // Reference values computed independently in Python (add-1 smoothing,
    // counts from the first 90%, scored on the last 10%).
    Corpus c;
    Error err;
    ck_assert_msg(corpus_load(&c, SHAKESPEARE_PATH, &err) == 0, "%s", err.msg);
    int V = c.vocab.size;
    long *uni = calloc((size_t)V, sizeof *uni);
    long *bi = calloc((size_t)V * V, sizeof *bi);
    unigram_count(uni, c.train.ids, c.train.n, V);
    bigram_count(bi, c.train.ids, c.train.n, V);
    ck_assert_double_eq_tol(unigram_loss(uni, V, c.val.ids, c.val.n, 1.0),
                            3.3473303373, 1e-9);
    ck_assert_double_eq_tol(bigram_loss(bi, V, c.val.ids, c.val.n, 1.0),
                            2.4818894321, 1e-9);
    ck_assert_double_eq_tol(log(V), 4.1743872699, 1e-9);
    free(uni);
    free(bi);
    corpus_free(&c);
}
END_TEST

START_TEST(unigram_by_hand) {
    const int train[] = {0, 0, 1}, val[] = {0, 1};
    long counts[2] = {0, 0};
    unigram_count(counts, train, 3, 2);
    ck_assert_int_eq(counts[0], 2);
    // add-1: P(0) = 3/5, P(1) = 2/5
    ck_assert_double_eq_tol(unigram_loss(counts, 2, val, 2, 1.0),
                            -(log(0.6) + log(0.4)) / 2, 1e-12);
}
END_TEST

Suite *ch1_suite(void) {
    Suite *s = suite_create("ch1");
    TCase *tc = tcase_new("vocab", "ch1");
    tcase_add_test(tc, vocab_encode_error_names_char_and_position);
    tcase_add_test(tc, vocab_decode_round_trip_and_errors);
    suite_add_tcase(s, tc);
    tc = tcase_new("corpus", "ch1");
    tcase_add_test(tc, corpus_shakespeare);
    tcase_add_test(tc, corpus_errors);
    suite_add_tcase(s, tc);
    tc = tcase_new("batch", "ch1");
    tcase_add_test(tc, get_batch_first_batch_as_pytorch);
    tcase_add_test(tc, get_batch_errors);
    suite_add_tcase(s, tc);
    tc = tcase_new("baselines", "ch1");
    tcase_add_test(tc, baselines_shakespeare);
    tcase_add_test(tc, unigram_by_hand);
    suite_add_tcase(s, tc);
    return s;
}
