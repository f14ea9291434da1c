// progress.h - the progress line of long runs:
//
//   step  120/5000 | loss 2.3412 | 48,210 tok/s | 2.5 ms/step | ETA 3m12s
//
// On a terminal the line is redrawn in place; when the output goes to a
// file or a pipe, each update is printed as a plain line instead.
#ifndef COMMON_PROGRESS_H
#define COMMON_PROGRESS_H

#include <stdbool.h>
#include <stdio.h>

typedef struct {
    FILE *out;
    long total_steps;
    double t_start;       // time_now() at progress_start
    double tokens;        // tokens processed since the start
    bool tty;             // redraw in place?
    bool open;            // a redrawn line is on screen, not yet ended
} Progress;

void progress_start(Progress *p, FILE *out, long total_steps);

// Reports that step (1-based) is done and tokens more were processed;
// extra is the caller's own text ("loss 2.34 | lr 3e-4"), may be NULL.
void progress_update(Progress *p, long step, double tokens, const char *extra);

// Ends the redrawn line (if any) so normal printing can resume.
void progress_end(Progress *p);

// Formats seconds as "3m12s", "1h04m", "12.3s" into buf.
void format_duration(double seconds, char *buf, size_t size);

#endif
