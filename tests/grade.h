// grade.h - the score table and Gradescope's results.json.
#ifndef TESTS_GRADE_H
#define TESTS_GRADE_H

#include <stddef.h>
#include <stdio.h>

typedef struct {
    const char *id;        // "1.2"
    int chapter;
    double points;
    const char *title;
} ExerciseInfo;

// Worst first: the status shown for an exercise is the worst of its tests.
// ST_SKIP: every test of the exercise said "skipped: needs a GPU" (see
// SKIP_NEEDS_GPU in check_util.h); its points then count in no total.
typedef enum {
    ST_PASS, ST_SKIP, ST_FAIL, ST_TIMEOUT, ST_CRASH, ST_TODO, ST_MISSING, ST_NOFILE,
    ST_NOBUILD
} Status;

typedef struct {
    int n_tests, n_pass;
    int n_skip;            // tests that needed a GPU: in neither count
    Status status;
    char output[2048];     // the messages of the tests that did not pass
    char note[160];        // shown after the status in the table, if any
} ExerciseResult;

extern const ExerciseInfo EXERCISE_TABLE[];
extern const int N_EXERCISES;

const char *status_word(Status s);

// Score of one exercise: its points times the fraction of its tests passed.
double exercise_score(const ExerciseInfo *e, const ExerciseResult *r);

// The Check variables that run part of the tests ("CK_RUN_CASE=ex1.1"),
// written into buf; NULL when none is set (all the tests run).
const char *grade_selection(char *buf, size_t size);

// The table keeps to 80 columns: a row whose note (a compiler's first
// error, a missing file) would pass them gets the note on the lines
// below, indented under the title and folded between words.
enum { GRADE_WIDTH = 80, GRADE_NOTE_INDENT = 6 };

// One row of the table: the exercise, its tests and points, its status
// and the note, if any.
void grade_table_row(FILE *out, const ExerciseInfo *e,
                     const ExerciseResult *r);

// Prints the table and writes json_path (Gradescope format). output, when
// not NULL, becomes the top-level "output" (a compiler log, for example).
// selection, when not NULL, names the Check variables that ran part of the
// tests ("CK_RUN_CASE=ex1.1"): then only the exercises that ran are shown,
// and json_path is not written (a partial run is not a grade).
// Returns 0, or -1 when the file cannot be written.
int grade_report(const ExerciseResult *results, const char *json_path,
                 const char *output, const char *selection);

#endif
