// progress.h - the progress line of a training run:
//
//   step 120/1800  loss 2.3412  lr 2.0e-03  norm 0.412  21350 tok/s  ETA 3m12s
//
// On a terminal the line is redrawn in place after every step. When the
// output goes to a file or a pipe, a plain line is printed for the first
// step, every `every` steps and the last, so that a log stays readable.
#ifndef COMMON_PROGRESS_H
#define COMMON_PROGRESS_H

#include <stdbool.h>
#include <stdio.h>

typedef struct {
    FILE *out;
    long total_steps;
    int every;            // steps between plain lines (not a terminal)
    double seconds;       // time of the steps reported so far
    long steps;           // how many were reported
    bool tty;             // redraw in place?
    bool open;            // a redrawn line is on screen, not yet ended
} Progress;

void progress_start(Progress *p, FILE *out, long total_steps, int every);

// Reports that step (1-based) is done, having processed tokens tokens in
// seconds. extra is the caller's own text ("loss 2.3412  lr 3.0e-04"),
// may be NULL. The speed is this step's; the ETA comes from the mean time
// of the steps reported so far.
void progress_update(Progress *p, long step, double tokens, double seconds,
                     const char *extra);

// Ends the redrawn line (if any) so normal printing can resume.
void progress_end(Progress *p);

// Formats seconds as "3m12s", "1h04m", "12.3s" into buf.
void format_duration(double seconds, char *buf, size_t size);

#endif
