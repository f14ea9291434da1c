// run_tests - every Check suite of the project in one runner.
//
//   run_tests [--json FILE]           all suites (what `make check` runs)
//   run_tests --grade [--json FILE]   the exercise suites only: the grade
//
// Tests run in fork mode (each in its own process, with a timeout), so a
// crashing or looping exercise fails its own test and nothing else. Check's
// environment variables work as usual: CK_RUN_SUITE, CK_RUN_CASE (for
// example CK_RUN_CASE=ex1.2), CK_FORK=no (for debuggers and valgrind).
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "grade.h"
#include "threads.h"

#define SUITE(fn) Suite *fn(void);
#include "suites.def"
#undef SUITE
#define EXERCISE(id, ch, pts, title, fn) TCase *fn(void);
#include "exercises.def"
#undef EXERCISE

#define MAX_CHAPTER 9

typedef TCase *(*TCaseFn)(void);
static const TCaseFn EXERCISE_TCASES[] = {
#define EXERCISE(id, ch, pts, title, fn) fn,
#include "exercises.def"
#undef EXERCISE
};

// One suite per chapter holding that chapter's exercise TCases. Check
// keeps pointers to the suite names, so they live in the caller's names.
static void add_exercise_suites(SRunner *sr, char names[][32]) {
    int last = 0;
    for (int i = 0; i < N_EXERCISES; i++)
        if (EXERCISE_TABLE[i].chapter > last) last = EXERCISE_TABLE[i].chapter;
    for (int ch = 1; ch <= last && ch <= MAX_CHAPTER; ch++) {
        char *name = names[ch];
        snprintf(name, 32, "ch%d-exercises", ch);
        Suite *s = NULL;
        for (int i = 0; i < N_EXERCISES; i++) {
            if (EXERCISE_TABLE[i].chapter != ch) continue;
            if (!s) s = suite_create(name);
            suite_add_tcase(s, EXERCISE_TCASES[i]());
        }
        if (s) srunner_add_suite(sr, s);
    }
}

static Status classify(TestResult *tr) {
    const char *msg = tr_msg(tr) ? tr_msg(tr) : "";
    switch (tr_rtype(tr)) {
    case CK_PASS: return ST_PASS;
    case CK_FAILURE:
        return strstr(msg, "not implemented") && strncmp(msg, "exercise ", 9)
               == 0 ? ST_TODO : ST_FAIL;
    default:   // CK_ERROR: a signal, an early exit or the timeout
        return strstr(msg, "timeout") ? ST_TIMEOUT : ST_CRASH;
    }
}

static void collect(SRunner *sr, ExerciseResult *res) {
    int n = srunner_ntests_run(sr);
    TestResult **all = srunner_results(sr);
    for (int i = 0; i < N_EXERCISES; i++) res[i].status = ST_MISSING;
    for (int k = 0; k < n; k++) {
        const char *tc = tr_tcname(all[k]);
        for (int i = 0; i < N_EXERCISES; i++) {
            if (strncmp(tc, "ex", 2) != 0
                || strcmp(tc + 2, EXERCISE_TABLE[i].id) != 0) continue;
            ExerciseResult *r = &res[i];
            Status s = classify(all[k]);
            if (r->n_tests == 0) r->status = ST_PASS;
            r->n_tests++;
            if (s == ST_PASS) { r->n_pass++; continue; }
            if (s > r->status) r->status = s;
            size_t used = strlen(r->output);
            snprintf(r->output + used, sizeof r->output - used, "%s:%d: %s\n",
                     tr_lfile(all[k]) ? tr_lfile(all[k]) : "?",
                     tr_lno(all[k]), tr_msg(all[k]) ? tr_msg(all[k]) : "");
        }
    }
    free(all);
}

int main(int argc, char **argv) {
    int grade = 0;
    const char *json = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--grade") == 0) grade = 1;
        else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc)
            json = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--grade] [--json FILE]\n", argv[0]);
            return 2;
        }
    }
    // One thread for OpenMP and OpenBLAS: the tests are small, results
    // must not depend on the machine, and busy-waiting worker threads on
    // a loaded machine can slow a test past its timeout.
    // (TEST_THREADS=N asks for more, to test the parallel paths.)
    const char *nt = getenv("TEST_THREADS");
    threads_set(nt && atoi(nt) > 0 ? atoi(nt) : 1);
    SRunner *sr = srunner_create(NULL);
    if (!grade) {
#define SUITE(fn) srunner_add_suite(sr, fn());
#include "suites.def"
#undef SUITE
    }
    char suite_names[MAX_CHAPTER + 1][32];
    add_exercise_suites(sr, suite_names);
    srunner_run_all(sr, CK_SILENT);

    ExerciseResult *res = calloc((size_t)N_EXERCISES, sizeof *res);
    collect(sr, res);
    int report_failed = grade_report(res, json, NULL) != 0;
    if (grade) {
        // A student sees why each exercise lost points, right under the table.
        for (int i = 0; i < N_EXERCISES; i++)
            if (res[i].output[0])
                printf("\nexercise %s:\n%s", EXERCISE_TABLE[i].id,
                       res[i].output);
    } else {
        // Check's own report last: the failures, then its summary line.
        printf("\n");
        srunner_print(sr, CK_NORMAL);
    }
    free(res);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    if (grade) return report_failed;
    return failed == 0 && !report_failed ? 0 : 1;
}
