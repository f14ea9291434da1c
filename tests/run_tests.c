// run_tests - every Check suite of the project in one runner.
//
//   run_tests [--json FILE]           all suites (what `make check` runs)
//   run_tests --grade [--json FILE] [--notes DIR]
//                                     the exercise suites only: the grade
//
// Tests run in fork mode (each in its own process, with a timeout), so a
// crashing or looping exercise fails its own test and nothing else. Check's
// environment variables work as usual: CK_RUN_SUITE, CK_RUN_CASE (for
// example CK_RUN_CASE=ex1.2), CK_FORK=no (for debuggers and valgrind).
// When they select part of the tests, only the exercises that ran are
// reported, and FILE is left as it was: a partial run is not a grade.
//
// --notes DIR: what tests/grade.sh found before the build. DIR/<id>.nobuild
// or DIR/<id>.missing means the student's file for exercise <id> did not
// compile or was absent, and the stub was graded in its place: it scores
// 0. The note's first line is shown in the table, the lines after it (or
// the first, when alone) are the exercise's output.
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_util.h"
#include "grade.h"
#include "threads.h"
#include "utf8.h"

// Whether word is one of the space-separated words of list.
static bool word_in(const char *word, const char *list) {
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == 0 || p[n] == ' '))
            return true;
    return false;
}

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
        if (strncmp(msg, SKIP_NEEDS_GPU_MSG, strlen(SKIP_NEEDS_GPU_MSG)) == 0)
            return ST_SKIP;
        return strstr(msg, "not implemented") && strncmp(msg, "exercise ", 9)
               == 0 ? ST_TODO : ST_FAIL;
    default:   // CK_ERROR: a signal, an early exit or the timeout
        return strstr(msg, "timeout") ? ST_TIMEOUT : ST_CRASH;
    }
}

// The names of the tests, in the order they ran, from Check's TAP log
// ("not ok 3 - FILE:TCASE:TEST: message"): the API gives a result's file,
// line and case but not its test's name, and the name says what was tested.
static char **tap_names(const char *path, int n) {
    char **names = calloc((size_t)n + 1, sizeof *names);
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f) return names;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        int k;
        char *dash = strstr(line, " - ");
        if (!dash || (sscanf(line, "ok %d", &k) != 1
                      && sscanf(line, "not ok %d", &k) != 1)) continue;
        if (k < 1 || k > n) continue;
        char *name = strchr(dash + 3, ':');            // after FILE
        name = name ? strchr(name + 1, ':') : NULL;     // after TCASE
        if (!name) continue;
        name++;
        size_t len = strcspn(name, ":");
        free(names[k - 1]);
        names[k - 1] = strndup(name, len);
    }
    fclose(f);
    return names;
}

// "ex1_2_matches_the_rng" -> "matches the rng"
static void test_intent(const char *name, char *out, size_t size) {
    const char *p = name;
    if (strncmp(p, "ex", 2) == 0) {               // exN_M_
        const char *q = p + 2;
        while (*q >= '0' && *q <= '9') q++;
        if (*q == '_') q++;
        while (*q >= '0' && *q <= '9') q++;
        if (*q == '_') p = q + 1;
    }
    snprintf(out, size, "%s", p);
    for (char *c = out; *c; c++)
        if (*c == '_') *c = ' ';
}

// Check's "Assertion 'v.size == 8' failed: v.size == 7, 8 == 8" as
// "expected v.size == 8, got v.size == 7": the operand that is a constant
// ("8 == 8") says nothing and is dropped. Other messages stay as they are.
static void readable(const char *msg, char *out, size_t size) {
    const char *pre = "Assertion '", *mid = "' failed";
    const char *end = strncmp(msg, pre, strlen(pre)) == 0
                      ? strstr(msg, mid) : NULL;
    if (!end) {
        snprintf(out, size, "%s", msg);
        return;
    }
    const char *expr = msg + strlen(pre);
    const char *vals = end + strlen(mid);
    if (strncmp(vals, ": ", 2) == 0) vals += 2;
    char v[1024];
    snprintf(v, sizeof v, "%s", vals);
    // drop a part "T == T" (before or after the ", " that joins the two)
    char *comma = strstr(v, ", ");
    if (comma) {
        *comma = '\0';
        const char *parts[2] = {v, comma + 2};
        int keep[2];
        for (int i = 0; i < 2; i++) {
            const char *eq = strstr(parts[i], " == ");
            keep[i] = !(eq && strlen(eq + 4) == (size_t)(eq - parts[i])
                        && strncmp(parts[i], eq + 4,
                                   (size_t)(eq - parts[i])) == 0);
        }
        if (keep[0] && keep[1]) *comma = ',';
        else if (!keep[0]) memmove(v, comma + 2, strlen(comma + 2) + 1);
    }
    if (v[0])
        snprintf(out, size, "expected %.*s, got %s", (int)(end - expr), expr,
                 v);
    else
        snprintf(out, size, "expected %.*s", (int)(end - expr), expr);
}

static void append(ExerciseResult *r, const char *text) {
    size_t used = strlen(r->output);
    snprintf(r->output + used, sizeof r->output - used, "%s", text);
}

static void collect(SRunner *sr, ExerciseResult *res, const char *tap) {
    int n = srunner_ntests_run(sr);
    TestResult **all = srunner_results(sr);
    char **names = tap_names(tap, n);
    for (int i = 0; i < N_EXERCISES; i++) res[i].status = ST_MISSING;
    for (int k = 0; k < n; k++) {
        const char *tc = tr_tcname(all[k]);
        for (int i = 0; i < N_EXERCISES; i++) {
            if (strncmp(tc, "ex", 2) != 0
                || strcmp(tc + 2, EXERCISE_TABLE[i].id) != 0) continue;
            ExerciseResult *r = &res[i];
            Status s = classify(all[k]);
            if (s == ST_SKIP) {   // counts neither way; said in the output
                r->n_skip++;
                if (r->n_tests == 0) r->status = ST_SKIP;
                char line[300];
                snprintf(line, sizeof line, "test %s: %s\n",
                         names[k] ? names[k] : "?", SKIP_NEEDS_GPU_MSG);
                append(r, line);
                continue;
            }
            if (r->n_tests == 0) r->status = ST_PASS;
            r->n_tests++;
            if (s == ST_PASS) { r->n_pass++; continue; }
            if (s > r->status) r->status = s;
            const char *msg = tr_msg(all[k]) ? tr_msg(all[k]) : "";
            char line[1600];
            if (s == ST_TODO) {
                // the stub's message, once: every test of it says the same
                snprintf(line, sizeof line, "%s\n", msg);
                if (!strstr(r->output, line)) append(r, line);
                continue;
            }
            char intent[256], text[1100];
            test_intent(names[k] ? names[k] : "?", intent, sizeof intent);
            readable(msg, text, sizeof text);
            snprintf(line, sizeof line, "test \"%s\" (%s:%d): %s%s\n", intent,
                     tr_lfile(all[k]) ? tr_lfile(all[k]) : "?",
                     tr_lno(all[k]), s == ST_TIMEOUT ? "timed out: "
                     : s == ST_CRASH ? "crashed: " : "", text);
            append(r, line);
        }
    }
    for (int k = 0; k < n; k++) free(names[k]);
    free(names);
    free(all);
}

// The notes of tests/grade.sh: an exercise whose file was absent or did
// not compile was graded with the stub; it scores 0 and says why.
static void apply_notes(ExerciseResult *res, const char *dir) {
    for (int i = 0; i < N_EXERCISES; i++) {
        static const struct { const char *ext; Status st; } kinds[] = {
            {"nobuild", ST_NOBUILD}, {"missing", ST_NOFILE}};
        for (int j = 0; j < 2; j++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s.%s", dir, EXERCISE_TABLE[i].id,
                     kinds[j].ext);
            size_t len;
            char *text = read_file(path, &len, NULL);
            if (!text) continue;
            ExerciseResult *r = &res[i];
            r->status = kinds[j].st;
            r->n_pass = 0;
            // the first line in the table, the others (if any) as output
            len = strcspn(text, "\n");
            snprintf(r->note, sizeof r->note, "%.*s", (int)len, text);
            const char *rest = text[len] && text[len + 1] ? text + len + 1
                                                          : text;
            snprintf(r->output, sizeof r->output, "%s", rest);
            free(text);
        }
    }
}

int main(int argc, char **argv) {
    int grade = 0;
    const char *json = NULL, *notes = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--grade") == 0) grade = 1;
        else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc)
            json = argv[++i];
        else if (strcmp(argv[i], "--notes") == 0 && i + 1 < argc)
            notes = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--grade] [--json FILE] [--notes DIR]\n",
                    argv[0]);
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
        // SKIP_SUITES="a_suite b_suite": leaves those out (make valgrind
        // does, for a suite that the other runs cover and that takes
        // minutes under valgrind)
        const char *skip = getenv("SKIP_SUITES");
#define SUITE(fn) \
        if (!skip || !word_in(#fn, skip)) srunner_add_suite(sr, fn());
#include "suites.def"
#undef SUITE
    }
    char suite_names[MAX_CHAPTER + 1][32];
    add_exercise_suites(sr, suite_names);
    // Check's TAP log, for the names of the tests (see tap_names)
    char tap[] = "/tmp/run_tests-XXXXXX";
    int fd = mkstemp(tap);
    if (fd >= 0) {
        close(fd);
        srunner_set_tap(sr, tap);
    }
    srunner_run_all(sr, CK_SILENT);

    ExerciseResult *res = calloc((size_t)N_EXERCISES, sizeof *res);
    collect(sr, res, fd >= 0 ? tap : NULL);
    if (fd >= 0) unlink(tap);
    if (notes) apply_notes(res, notes);
    char sel[512];
    int report_failed = grade_report(res, json, NULL,
                                     grade_selection(sel, sizeof sel)) != 0;
    if (grade) {
        // A student sees why each exercise lost points, right under the
        // table; "not implemented" and a missing file say all in the table.
        for (int i = 0; i < N_EXERCISES; i++)
            if (res[i].output[0] && res[i].status != ST_TODO
                && res[i].status != ST_NOFILE)
                printf("\nexercise %s (%s):\n%s", EXERCISE_TABLE[i].id,
                       status_word(res[i].status), res[i].output);
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
