// test_grade_table.c - the grade table keeps to 80 columns: a row whose
// note would pass them is folded, and so is the line that says a run of
// part of the tests is no grade.
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_util.h"
#include "grade.h"

// What f holds, from its start (at most size - 1 bytes).
static const char *contents(FILE *f, char *buf, size_t size) {
    fflush(f);
    rewind(f);
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = 0;
    return buf;
}

// Fails on a line of more than 80 columns (characters).
static void assert_fits(const char *text) {
    for (const char *line = text; *line;) {
        size_t len = strcspn(line, "\n"), cols = 0;
        for (size_t i = 0; i < len; i++)
            cols += ((unsigned char)line[i] & 0xc0) != 0x80;
        ck_assert_msg(cols <= 80, "a line of %zu columns: %.*s", cols,
                      (int)len, line);
        line += len + (line[len] != 0);
    }
}

// The row of exercise 2.1 with this status and note.
static const char *row(Status st, const char *note, char *buf, size_t size) {
    ExerciseInfo e = {"2.1", 2, 2, "stable softmax"};
    ExerciseResult *r = calloc(1, sizeof *r);
    r->n_tests = 3;
    r->status = st;
    snprintf(r->note, sizeof r->note, "%s", note);
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    grade_table_row(f, &e, r);
    contents(f, buf, size);
    fclose(f);
    free(r);
    return buf;
}

START_TEST(grade_rows_fit_80_columns) {
    char buf[1024];
    // no note, and a note that fits: one line, as before
    ck_assert_str_eq(row(ST_TODO, "", buf, sizeof buf),
                     "2.1   stable softmax                      0/3     0/2  "
                     "not implemented\n");
    // (a note that ends at column 80 stays, one column more does not)
    ck_assert_str_eq(row(ST_NOBUILD, "ch2/a.c", buf, sizeof buf),
                     "2.1   stable softmax                      0/3     0/2  "
                     "does not compile: ch2/a.c\n");
    ck_assert_str_eq(row(ST_NOBUILD, "ch2/ab.c", buf, sizeof buf),
                     "2.1   stable softmax                      0/3     0/2  "
                     "does not compile:\n      ch2/ab.c\n");
    // a compiler's first error: below the row, folded, every word kept
    const char *err = "ch2/ex2_1_softmax.c:31:1: error: expected \xe2\x80\x98"
                      ";\xe2\x80\x99 before \xe2\x80\x98}\xe2\x80\x99 token "
                      "in a message long enough to need a second line";
    row(ST_NOBUILD, err, buf, sizeof buf);
    assert_fits(buf);
    ck_assert_msg(strncmp(buf, "2.1   stable softmax                      "
                               "0/3     0/2  does not compile:\n      "
                               "ch2/ex2_1_softmax.c:31:1: error: expected",
                          108) == 0, "%s", buf);
    ck_assert_msg(strstr(buf, "\xe2\x80\x99 token in a\n      message long "
                              "enough to need a second line\n"), "%s", buf);
    // a missing file's note
    row(ST_NOFILE, "no ch1/ex1_2_*.c in the folder (graded as the stub: 0 "
        "points)", buf, sizeof buf);
    assert_fits(buf);
    ck_assert_msg(strstr(buf, "file missing:\n      no ch1/ex1_2_*.c in the "
                              "folder (graded as the stub: 0 points)\n"),
                  "%s", buf);
}
END_TEST

// A run of one test case: the row, its total, and the line that says it
// is no grade, folded.
START_TEST(grade_partial_run_fits_80_columns) {
    ExerciseResult *res = calloc((size_t)N_EXERCISES, sizeof *res);
    res[1].n_tests = 3;   // exercise 1.2
    res[1].status = ST_TODO;
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    ck_assert_int_ge(saved, 0);
    ck_assert_int_ge(dup2(fileno(f), STDOUT_FILENO), 0);
    grade_report(res, "build/grade/results.json", NULL, "CK_RUN_CASE=ex1.2");
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    char buf[2048];
    contents(f, buf, sizeof buf);
    fclose(f);
    free(res);
    assert_fits(buf);
    ck_assert_msg(strstr(buf, "\n1.2   get_batch ") != NULL, "%s", buf);
    ck_assert_msg(strstr(buf, "total 0 / 3 points for the 1 exercise run\n"
                              "CK_RUN_CASE=ex1.2 ran part of the tests: this "
                              "is no grade and\n  build/grade/results.json "
                              "was not written\n"), "%s", buf);
}
END_TEST

Suite *grade_table_suite(void) {
    Suite *s = suite_create("grade_table");
    TCase *tc = tcase_new("table", "grade");
    tcase_add_test(tc, grade_rows_fit_80_columns);
    tcase_add_test(tc, grade_partial_run_fits_80_columns);
    suite_add_tcase(s, tc);
    return s;
}
