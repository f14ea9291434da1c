// profile_csv.h - ./ch6 --plot-data DIR: the profile of --profile as
// DIR/profile.csv, for the book's figure. Its own file so that the
// training loop (run.c) only calls it.
#ifndef CH6_PROFILE_CSV_H
#define CH6_PROFILE_CSV_H

#include <stdbool.h>

// Before the run, so that nothing is trained for a file that cannot be
// written: without --profile there is nothing to write (usage error,
// status 2); a dir that cannot be written fails with status 1.
void profile_csv_check(const char *dir, bool profile);

// After the run: one row per kind of work (common/profile.h), the same
// milliseconds per step that --profile prints, forward and backward:
// kind,forward_ms,backward_ms,total_ms,percent. Only the header when no
// step was timed. Prints "plot data   DIR/profile.csv". Status 1 when the
// file cannot be written.
void profile_csv_write(const char *dir, int steps);

#endif
