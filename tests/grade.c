// grade.c - the report of `make check EXERCISES=...`: a table on the
// terminal and build/grade/results.json in Gradescope's format. Compiled
// into the test runner, and on its own (GRADE_NO_SUITES) as the tool that
// reports a folder that does not compile.
#include "grade.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "report.h"
#include "utf8.h"

const ExerciseInfo EXERCISE_TABLE[] = {
#define EXERCISE(id, ch, pts, title, fn) {id, ch, pts, title},
#include "exercises.def"
#undef EXERCISE
};
const int N_EXERCISES = sizeof EXERCISE_TABLE / sizeof EXERCISE_TABLE[0];

const char *status_word(Status s) {
    switch (s) {
    case ST_PASS: return "pass";
    case ST_SKIP: return "skipped: needs a GPU";
    case ST_FAIL: return "fail";
    case ST_TIMEOUT: return "timed out";
    case ST_CRASH: return "crashed";
    case ST_TODO: return "not implemented";
    case ST_MISSING: return "no result";
    case ST_NOFILE: return "file missing";
    case ST_NOBUILD: return "does not compile";
    }
    return "?";
}

double exercise_score(const ExerciseInfo *e, const ExerciseResult *r) {
    if (r->n_tests == 0) return 0;
    double s = e->points * r->n_pass / r->n_tests;
    return (double)(long)(s * 100 + 0.5) / 100;   // two decimals
}

const char *grade_selection(char *buf, size_t size) {
    static const char *vars[] = {"CK_RUN_SUITE", "CK_RUN_CASE",
                                 "CK_INCLUDE_TAGS", "CK_EXCLUDE_TAGS"};
    buf[0] = '\0';
    for (int i = 0; i < 4; i++) {
        const char *v = getenv(vars[i]);
        if (!v || !*v) continue;
        size_t used = strlen(buf);
        snprintf(buf + used, size - used, "%s%s=%s", used ? " " : "",
                 vars[i], v);
    }
    return buf[0] ? buf : NULL;
}

static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c == '\n') fputs("\\n", f);
        else if (c == '\t') fputs("\\t", f);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

// Columns of UTF-8 text (a compiler's message quotes with ‘ and ’).
static size_t columns(const char *s) {
    size_t n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

void grade_table_row(FILE *out, const ExerciseInfo *e,
                     const ExerciseResult *r) {
    char tests[32], pts[64], row[256];
    snprintf(tests, sizeof tests, "%d/%d", r->n_pass, r->n_tests);
    snprintf(pts, sizeof pts, "%g/%g", exercise_score(e, r),
             r->status == ST_SKIP ? 0 : e->points);
    snprintf(row, sizeof row, "%-5s %-32s %6s %7s  %s%s", e->id, e->title,
             tests, pts, status_word(r->status), r->note[0] ? ":" : "");
    if (!r->note[0]) {
        fprintf(out, "%s\n", row);
    } else if (columns(row) + 1 + columns(r->note) <= GRADE_WIDTH) {
        fprintf(out, "%s %s\n", row, r->note);
    } else {   // the note below, under the title, folded between words
        fprintf(out, "%s\n%*s", row, GRADE_NOTE_INDENT, "");
        fold_print(out, r->note, GRADE_NOTE_INDENT, GRADE_NOTE_INDENT,
                   GRADE_WIDTH);
    }
}

int grade_report(const ExerciseResult *results, const char *json_path,
                 const char *output, const char *selection) {
    double total = 0, max_total = 0;
    int shown = 0;
    for (int i = 0; i < N_EXERCISES; i++) {
        const ExerciseInfo *e = &EXERCISE_TABLE[i];
        const ExerciseResult *r = &results[i];
        if (selection && r->n_tests == 0) continue;   // not run
        if (shown++ == 0)
            printf("\n%-5s %-32s %6s %7s  %s\n", "ex", "title", "tests",
                   "points", "result");
        grade_table_row(stdout, e, r);
        total += exercise_score(e, r);
        if (r->status != ST_SKIP) max_total += e->points;
    }
    if (selection) {
        // a partial run: its total is no grade, and results.json keeps
        // the last full one
        if (shown)
            printf("total %g / %g points for the %d exercise%s run\n",
                   total, max_total, shown, shown == 1 ? "" : "s");
        char line[1024];
        snprintf(line, sizeof line, "%s ran part of the tests: this is no "
                 "grade%s%s%s", selection, json_path ? " and " : "",
                 json_path ? json_path : "",
                 json_path ? " was not written" : "");
        fold_print(stdout, line, 0, 2, GRADE_WIDTH);
        return 0;
    }
    printf("total %g / %g points\n", total, max_total);

    if (!json_path) return 0;
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", json_path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "error: cannot write %s\n", tmp);
        return -1;
    }
    fprintf(f, "{\n  \"score\": %g,\n  \"max_score\": %g,\n", total, max_total);
    if (output) {
        fputs("  \"output\": ", f);
        json_string(f, output);
        fputs(",\n", f);
    }
    fputs("  \"tests\": [\n", f);
    for (int i = 0; i < N_EXERCISES; i++) {
        const ExerciseInfo *e = &EXERCISE_TABLE[i];
        const ExerciseResult *r = &results[i];
        char name[160], head[96];
        snprintf(name, sizeof name, "Exercise %s: %s", e->id, e->title);
        snprintf(head, sizeof head, "%s: %d of %d tests passed\n",
                 status_word(r->status), r->n_pass, r->n_tests);
        fprintf(f, "    {\"name\": ");
        json_string(f, name);
        fprintf(f, ", \"number\": \"%s\", \"score\": %g, \"max_score\": %g, "
                "\"status\": \"%s\", \"output\": ", e->id,
                exercise_score(e, r), r->status == ST_SKIP ? 0 : e->points,
                r->status == ST_PASS ? "passed" : "failed");
        char *out = malloc(strlen(head) + strlen(r->output) + 1);
        strcpy(out, head);
        strcat(out, r->output);
        json_string(f, out);
        free(out);
        fprintf(f, "}%s\n", i + 1 < N_EXERCISES ? "," : "");
    }
    fputs("  ]\n}\n", f);
    if (fclose(f) != 0 || rename(tmp, json_path) != 0) {
        fprintf(stderr, "error: cannot write %s\n", json_path);
        return -1;
    }
    printf("wrote %s\n", json_path);
    return 0;
}

#ifdef GRADE_NO_SUITES
// grade_nocode --compile-error LOG --json FILE: the report for a folder
// that does not build: every exercise scores 0, the log is the output.
int main(int argc, char **argv) {
    const char *log_path = NULL, *json = NULL;
    error_set_progname(argv[0]);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--compile-error") == 0) log_path = argv[i + 1];
        else if (strcmp(argv[i], "--json") == 0) json = argv[i + 1];
    }
    if (!log_path || !json)
        die("usage: grade_nocode --compile-error LOG --json FILE");
    size_t len = 0;
    Error err;
    char *log = read_file(log_path, &len, &err);
    if (!log) die("%s", err.msg);
    fprintf(stderr, "error: the exercises do not build, even with the stubs "
            "in place of the\nfiles that fail: every exercise scores 0. The "
            "build said:\n%s", log);
    ExerciseResult *results = calloc((size_t)N_EXERCISES, sizeof *results);
    for (int i = 0; i < N_EXERCISES; i++) {
        results[i].status = ST_NOBUILD;
        snprintf(results[i].output, sizeof results[i].output,
                 "the exercise folder does not build (see the top-level "
                 "output)");
    }
    // (a partial run, CK_RUN_CASE=..., shows no row and writes no report,
    // as the runner's would not)
    char sel[512];
    int rc = grade_report(results, json, log,
                          grade_selection(sel, sizeof sel));
    free(results);
    free(log);
    return rc == 0 ? 0 : 1;
}
#endif
