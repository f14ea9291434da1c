// plotdata.h - the CSV files behind the book's figures (--plot-data DIR).
//
// A program given --plot-data DIR writes the numbers it shows as CSV
// files into DIR, one header line and then one row per value, and the
// gnuplot scripts of docs/figures/ draw them. Chapters 1, 2, 3, 4, 5, 6
// (its profile) and 7 use these few functions; chapters 6 and 7 also draw
// figures from the CSV of their --log.
#ifndef CH1_PLOTDATA_H
#define CH1_PLOTDATA_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"

// Creates dir if it is missing and checks that it is a folder we may
// write in, so that a bad --plot-data fails before any work. Returns 0,
// or -1 with a message.
int plot_dir_check(const char *dir, Error *err);

// Opens dir/name for writing and writes its header line (given without
// the line end). Returns the file, or NULL with a message.
FILE *plot_csv_open(const char *dir, const char *name, const char *header,
                    Error *err);

// Closes a file of plot_csv_open. A write that failed (a full disk) shows
// here at the latest: returns 0, or -1 with a message naming dir/name.
int plot_csv_close(FILE *f, const char *dir, const char *name, Error *err);

// Writes a character as a label that gnuplot reads back as one field and
// can print on an axis: itself when it is printable, "," in quotes, and
// a name for the rest: sp (space), nl (newline), tab, dq ("), bs (\) and
// ? (any other control character).
void plot_csv_label(FILE *f, uint32_t cp);

#endif
