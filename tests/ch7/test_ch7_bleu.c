// Tests of chapter 7's scores (bleu.c) against sacreBLEU 2.6.0: its 13a
// tokenization of every sentence, BLEU's and chrF's statistics exactly,
// and their printed lines to the last digit, on the course's vectors
// (data/bleu/sacrebleu_2.6.0_vectors.json, skipped with a note when
// `make data` could not copy them) and on ours (tests/reference/
// ch7_bleu.json, tests/reference/gen_bleu.py). Then properties that a
// broken implementation can fail: a corpus scores 100 against itself;
// the order of the sentences and a split of the corpus do not change the
// statistics; 13a is idempotent where sacreBLEU's is; chrF ignores where
// the spaces are; malformed UTF-8 is an error that names the sentence.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bleu.h"
#include "bleu_cases.h"
#include "check_util.h"
#include "mem.h"

static void check_tokens(const BleuCase *bc, const char *key,
                         const char *const *lines, bool lowercase) {
    for (int k = 0; k < bc->n; k++) {
        Error err;
        char *t = bleu_tokenize_13a(lines[k], strlen(lines[k]), lowercase,
                                    &err);
        ck_assert_msg(t != NULL, "case %s: %s", bc->name, err.msg);
        const char *want = bleu_case_str(bc, key, k);
        ck_assert_msg(strcmp(t, want) == 0, "case %s: 13a of '%s' is '%s', "
                      "sacreBLEU's '%s'", bc->name, lines[k], t, want);
        free(t);
    }
}

static void check_close(const BleuCase *bc, const char *what, double got,
                        double want) {
    ck_assert_msg(fabs(got - want) <= 1e-12 * fabs(want) + 1e-300,
                  "case %s: %s %.17g, sacreBLEU's %.17g", bc->name, what,
                  got, want);
}

// BLEU of one case: statistics exactly, numbers to 1e-12, lines exactly.
static void check_bleu(const BleuCase *bc) {
    BleuResult r;
    Error err;
    ck_assert_msg(bleu_corpus(&r, bc->hyps, bc->refs, bc->n, bc->lowercase,
                              &err) == 0, "case %s: %s", bc->name, err.msg);
    for (int i = 0; i < BLEU_ORDER; i++) {
        ck_assert_msg(r.counts[i] == (long)bleu_case_num(bc, "counts", i)
                      && r.totals[i] == (long)bleu_case_num(bc, "totals", i),
                      "case %s: order %d: %ld of %ld match, sacreBLEU's "
                      "%.0f of %.0f", bc->name, i + 1, r.counts[i],
                      r.totals[i], bleu_case_num(bc, "counts", i),
                      bleu_case_num(bc, "totals", i));
        check_close(bc, "precision", r.precisions[i],
                    bleu_case_num(bc, "precisions", i));
    }
    ck_assert_msg(r.sys_len == (long)bleu_case_num(bc, "sys_len", -1)
                  && r.ref_len == (long)bleu_case_num(bc, "ref_len", -1),
                  "case %s: lengths %ld and %ld, sacreBLEU's %.0f and %.0f",
                  bc->name, r.sys_len, r.ref_len,
                  bleu_case_num(bc, "sys_len", -1),
                  bleu_case_num(bc, "ref_len", -1));
    check_close(bc, "bp", r.bp, bleu_case_num(bc, "bp", -1));
    check_close(bc, "score", r.score, bleu_case_num(bc, "score", -1));
    char line[512], want[512];
    bleu_format(line, sizeof line, &r, false);
    ck_assert_msg(strcmp(line, bleu_case_str(bc, "text", -1)) == 0,
                  "case %s: printed\n  %s\nsacreBLEU printed\n  %s",
                  bc->name, line, bleu_case_str(bc, "text", -1));
    const char *sig = bleu_case_str(bc, "signature", -1);
    ck_assert_str_eq(bleu_signature(bc->lowercase), sig);
    bleu_format(line, sizeof line, &r, true);
    snprintf(want, sizeof want, "BLEU|%s%s", sig,
             bleu_case_str(bc, "text", -1) + 4);
    ck_assert_str_eq(line, want);
}

START_TEST(bleu_course_vectors) {
    Json *root;
    const Json *cases = bleu_cases_load(BLEU_VECTORS, true, &root);
    if (!cases) return;
    for (int i = 0; i < cases->n; i++) {
        BleuCase bc;
        bleu_case_get(&bc, cases, i);
        // these vectors record the tokenization of the text as it is,
        // before any lowercasing
        check_tokens(&bc, "hyp_13a", bc.hyps, false);
        check_tokens(&bc, "ref_13a", bc.refs, false);
        check_bleu(&bc);
        bleu_case_free(&bc);
    }
    json_free(root);
}
END_TEST

START_TEST(bleu_our_cases) {
    Json *root;
    const Json *cases = bleu_cases_load(BLEU_FIXTURE, false, &root);
    for (int i = 0; i < cases->n; i++) {
        BleuCase bc;
        bleu_case_get(&bc, cases, i);
        check_tokens(&bc, "hyp_13a", bc.hyps, bc.lowercase);
        check_tokens(&bc, "ref_13a", bc.refs, bc.lowercase);
        check_bleu(&bc);
        bleu_case_free(&bc);
    }
    json_free(root);
}
END_TEST

START_TEST(chrf_our_cases) {
    Json *root;
    const Json *cases = bleu_cases_load(BLEU_FIXTURE, false, &root);
    for (int i = 0; i < cases->n; i++) {
        BleuCase bc;
        bleu_case_get(&bc, cases, i);
        ChrfResult r;
        Error err;
        ck_assert_msg(chrf_corpus(&r, bc.hyps, bc.refs, bc.n, bc.lowercase,
                                  &err) == 0, "case %s: %s", bc.name,
                      err.msg);
        const Json *st = json_get(bc.j, "chrf_stats");
        ck_assert(st && st->type == JSON_ARRAY && st->n == CHRF_ORDER);
        for (int n = 0; n < CHRF_ORDER; n++) {
            const Json *s = &st->items[n];
            ck_assert(s->type == JSON_ARRAY && s->n == 3);
            ck_assert_msg(r.hyp[n] == (long)s->items[0].num
                          && r.ref[n] == (long)s->items[1].num
                          && r.match[n] == (long)s->items[2].num,
                          "case %s: character %d-grams: hyp %ld ref %ld "
                          "match %ld, sacreBLEU's %.0f %.0f %.0f", bc.name,
                          n + 1, r.hyp[n], r.ref[n], r.match[n],
                          s->items[0].num, s->items[1].num,
                          s->items[2].num);
        }
        char line[256], want[256];
        chrf_format(line, sizeof line, &r, false);
        ck_assert_msg(strcmp(line, bleu_case_str(&bc, "chrf_text", -1)) == 0,
                      "case %s: printed '%s', sacreBLEU '%s'", bc.name, line,
                      bleu_case_str(&bc, "chrf_text", -1));
        const char *sig = bleu_case_str(&bc, "chrf_signature", -1);
        ck_assert_str_eq(chrf_signature(bc.lowercase), sig);
        chrf_format(line, sizeof line, &r, true);
        snprintf(want, sizeof want, "chrF2|%s%s", sig,
                 bleu_case_str(&bc, "chrf_text", -1) + 5);
        ck_assert_str_eq(line, want);
        bleu_case_free(&bc);
    }
    json_free(root);
}
END_TEST

// ---- properties -------------------------------------------------------------

// Every hypothesis and reference of our cases, as one corpus of lines.
static int all_lines(const char ***lines, Json **root) {
    const Json *cases = bleu_cases_load(BLEU_FIXTURE, false, root);
    int n = 0, cap = 16;
    *lines = xmalloc((size_t)cap * sizeof **lines);
    for (int i = 0; i < cases->n; i++) {
        BleuCase bc;
        bleu_case_get(&bc, cases, i);
        for (int k = 0; k < 2 * bc.n; k++) {
            if (n == cap) *lines = xrealloc(*lines, (size_t)(cap *= 2)
                                                    * sizeof **lines);
            (*lines)[n++] = k < bc.n ? bc.hyps[k] : bc.refs[k - bc.n];
        }
        bleu_case_free(&bc);
    }
    return n;
}

START_TEST(bleu_self_is_100) {
    const char **lines;
    Json *root;
    int n = all_lines(&lines, &root);
    BleuResult b;
    ChrfResult c;
    Error err;
    ck_assert(bleu_corpus(&b, lines, lines, n, false, &err) == 0);
    ck_assert(chrf_corpus(&c, lines, lines, n, false, &err) == 0);
    char line[512];
    bleu_format(line, sizeof line, &b, false);
    const char *want = "BLEU = 100.00 100.0/100.0/100.0/100.0 (BP = 1.000 "
                       "ratio = 1.000 hyp_len = ";
    ck_assert_msg(fabs(b.score - 100) < 1e-9 && b.bp == 1.0
                  && strncmp(line, want, strlen(want)) == 0,
                  "a corpus against itself: %s", line);
    for (int i = 0; i < BLEU_ORDER; i++)
        ck_assert_int_eq(b.counts[i], b.totals[i]);
    ck_assert_msg(fabs(c.score - 100) < 1e-9, "chrF %.17g", c.score);
    free(lines);
    json_free(root);
}
END_TEST

static void same_stats(const BleuResult *a, const BleuResult *b,
                       const char *what) {
    for (int i = 0; i < BLEU_ORDER; i++)
        ck_assert_msg(a->counts[i] == b->counts[i]
                      && a->totals[i] == b->totals[i], "%s: order %d: %ld/"
                      "%ld against %ld/%ld", what, i + 1, a->counts[i],
                      a->totals[i], b->counts[i], b->totals[i]);
    ck_assert_msg(a->sys_len == b->sys_len && a->ref_len == b->ref_len,
                  "%s: lengths differ", what);
}

START_TEST(bleu_order_and_split) {
    // hypotheses: every line; references: the same lines rotated by 3,
    // so that the sentence pairs overlap a little
    const char **lines;
    Json *root;
    int n = all_lines(&lines, &root);
    const char **refs = xmalloc((size_t)n * sizeof *refs);
    const char **rh = xmalloc((size_t)n * sizeof *rh);
    const char **rr = xmalloc((size_t)n * sizeof *rr);
    for (int i = 0; i < n; i++) refs[i] = lines[(i + 3) % n];
    for (int i = 0; i < n; i++) rh[i] = lines[n - 1 - i];
    for (int i = 0; i < n; i++) rr[i] = refs[n - 1 - i];
    Error err;
    BleuResult all, rev, a, b;
    ck_assert(bleu_corpus(&all, lines, refs, n, false, &err) == 0);
    ck_assert(bleu_corpus(&rev, rh, rr, n, false, &err) == 0);
    same_stats(&rev, &all, "the sentences in reverse order");
    ck_assert(all.score == rev.score);
    int h = n / 2;
    ck_assert(bleu_corpus(&a, lines, refs, h, false, &err) == 0);
    ck_assert(bleu_corpus(&b, lines + h, refs + h, n - h, false, &err) == 0);
    for (int i = 0; i < BLEU_ORDER; i++)
        a.counts[i] += b.counts[i], a.totals[i] += b.totals[i];
    a.sys_len += b.sys_len, a.ref_len += b.ref_len;
    same_stats(&a, &all, "the two halves' sums");
    bleu_compute(&a);
    ck_assert(a.score == all.score);
    ck_assert_msg(all.score > 0 && all.score < 100, "%g", all.score);
    ChrfResult ca, cr;
    ck_assert(chrf_corpus(&ca, lines, refs, n, false, &err) == 0);
    ck_assert(chrf_corpus(&cr, rh, rr, n, false, &err) == 0);
    for (int i = 0; i < CHRF_ORDER; i++)
        ck_assert(ca.hyp[i] == cr.hyp[i] && ca.ref[i] == cr.ref[i]
                  && ca.match[i] == cr.match[i]);
    free(lines), free(refs), free(rh), free(rr);
    json_free(root);
}
END_TEST

START_TEST(bleu_13a_idempotent) {
    // sacreBLEU's 13a gives back its own output unchanged on all our
    // cases (retok_13a); so must ours
    Json *root;
    const Json *cases = bleu_cases_load(BLEU_FIXTURE, false, &root);
    for (int i = 0; i < cases->n; i++) {
        BleuCase bc;
        bleu_case_get(&bc, cases, i);
        for (int k = 0; k < bc.n; k++) {
            Error err;
            const char *once = bleu_case_str(&bc, "hyp_13a", k);
            char *t = bleu_tokenize_13a(once, strlen(once), false, &err);
            ck_assert_str_eq(t, bleu_case_str(&bc, "retok_13a", k));
            ck_assert_str_eq(t, once);
            free(t);
        }
        bleu_case_free(&bc);
    }
    json_free(root);
}
END_TEST

START_TEST(bleu_by_hand) {
    Error err;
    BleuResult r;
    ChrfResult c;
    // case: 0 matches mixed, all with lowercase
    const char *h[] = {"ÄRGER AUF DER STRASSE"}, *ref[] = {"ärger auf der "
                                                            "straße"};
    ck_assert(bleu_corpus(&r, h, ref, 1, false, &err) == 0);
    ck_assert(r.score == 0 && r.counts[0] == 0);
    const char *rs[] = {"ärger auf der strasse"};
    ck_assert(bleu_corpus(&r, h, rs, 1, true, &err) == 0);
    ck_assert_msg(fabs(r.score - 100) < 1e-9, "%g", r.score);
    // chrF ignores where the spaces are
    const char *sp[] = {" ab\tcd  e f "}, *sr[] = {"a bcdef"};
    ck_assert(chrf_corpus(&c, sp, sr, 1, false, &err) == 0);
    ck_assert_msg(fabs(c.score - 100) < 1e-9, "%g", c.score);
    // characters, not bytes: "ü" against "u" shares no 1-gram but "x"
    const char *uh[] = {"xü"}, *ur[] = {"xu"};
    ck_assert(chrf_corpus(&c, uh, ur, 1, false, &err) == 0);
    ck_assert(c.hyp[0] == 2 && c.ref[0] == 2 && c.match[0] == 1);
    ck_assert(c.hyp[1] == 1 && c.match[1] == 0 && c.hyp[2] == 0);
    // malformed UTF-8 names the sentence
    const char *bad[] = {"fine", "caf\xc3"}, *good[] = {"fine", "cafe"};
    ck_assert(bleu_corpus(&r, bad, good, 2, false, &err) == -1);
    ck_assert_msg(strstr(err.msg, "hypothesis 2") != NULL, "%s", err.msg);
    ck_assert(chrf_corpus(&c, good, bad, 2, false, &err) == -1);
    ck_assert_msg(strstr(err.msg, "reference 2") != NULL, "%s", err.msg);
    ck_assert(bleu_tokenize_13a("\xff", 1, false, &err) == NULL);
    // an empty corpus
    ck_assert(bleu_corpus(&r, NULL, NULL, 0, false, &err) == 0);
    ck_assert(r.score == 0 && r.sys_len == 0 && r.bp == 1.0);
}
END_TEST

START_TEST(bleu_thousand_sentences) {
    // 1,000 sentences of 12 words from a vocabulary of 50, against a
    // perturbed copy: a second at most, even under valgrind (it takes
    // a few milliseconds)
    enum { N = 1000, W = 12 };
    char (*h)[W * 8] = xmalloc(N * sizeof *h);
    char (*r)[W * 8] = xmalloc(N * sizeof *r);
    const char **hp = xmalloc(N * sizeof *hp);
    const char **rp = xmalloc(N * sizeof *rp);
    uint64_t s = 12345;
    for (int i = 0; i < N; i++) {
        int a = 0, b = 0;
        for (int w = 0; w < W; w++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            int word = (int)(s >> 33) % 50, keep = (s >> 20) % 5 != 0;
            a += sprintf(h[i] + a, "%sw%d", w ? " " : "", word);
            b += sprintf(r[i] + b, "%sw%d", w ? " " : "", keep ? word
                         : (word + 1) % 50);
        }
        hp[i] = h[i], rp[i] = r[i];
    }
    BleuResult br;
    ChrfResult cr;
    Error err;
    ck_assert(bleu_corpus(&br, hp, rp, N, false, &err) == 0);
    ck_assert(chrf_corpus(&cr, hp, rp, N, false, &err) == 0);
    ck_assert(br.sys_len == N * W && br.ref_len == N * W);
    ck_assert(br.score > 10 && br.score < 90);
    ck_assert(cr.score > 10 && cr.score < 100);
    free(h), free(r), free(hp), free(rp);
}
END_TEST

Suite *ch7_bleu_suite(void) {
    Suite *s = suite_create("ch7_bleu");
    TCase *tc = tcase_new("sacrebleu", "ch7");
    tcase_add_test(tc, bleu_course_vectors);
    tcase_add_test(tc, bleu_our_cases);
    tcase_add_test(tc, chrf_our_cases);
    suite_add_tcase(s, tc);
    tc = tcase_new("bleu properties", "ch7");
    tcase_add_test(tc, bleu_self_is_100);
    tcase_add_test(tc, bleu_order_and_split);
    tcase_add_test(tc, bleu_13a_idempotent);
    tcase_add_test(tc, bleu_by_hand);
    tcase_add_test(tc, bleu_thousand_sentences);
    suite_add_tcase(s, tc);
    return s;
}
