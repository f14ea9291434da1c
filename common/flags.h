// flags.h - the one command-line parser every chapter program uses.
//
//   int batch = 4;  const char *data = "data/tinyshakespeare.txt";
//   Flag flags[] = {
//       {"batch", FLAG_INT, &batch, "sequences per batch"},
//       {"data", FLAG_STRING, &data, "UTF-8 text file to read"},
//   };
//   FlagRange ranges[] = {{"batch", .lo = 1, .hi = 64}};
//   flags_parse(argc, argv, flags, 2, ranges, 1, "Data preparation ...");
//   ...                                  // checks that need the values
//   flags_check_ranges(flags, 2, ranges, 1);
//
// Accepts "--name value" and "--name=value"; a FLAG_BOOL flag is "--name"
// (or --name=0/1). --help prints every flag with its range, if it has one,
// and its default (the value the variable holds before parsing), folded
// to 80 columns, and exits 0. An unknown flag, a missing or malformed
// value prints one error line and exits with status 2.
#ifndef COMMON_FLAGS_H
#define COMMON_FLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"

typedef enum { FLAG_INT, FLAG_U64, FLAG_FLOAT, FLAG_STRING, FLAG_BOOL } FlagType;

typedef struct {
    const char *name;     // without the leading "--"
    FlagType type;
    void *value;          // int*, uint64_t*, float*, const char**, bool*
    const char *help;
} Flag;

// The range of a number flag, [lo, hi] with both ends in it: one table
// that flags_check_ranges checks and --help shows, so the two never
// differ. An end may be another flag's value instead (hi_flag = "T":
// --pad at most --T), which --help shows by name.
typedef struct {
    const char *name;     // the flag, without the leading "--"
    double lo, hi;
    const char *lo_flag, *hi_flag;   // NULL, or the flag whose value it is
} FlagRange;

void flags_parse(int argc, char **argv, const Flag *flags, int n_flags,
                 const FlagRange *ranges, int n_ranges, const char *summary);

// The parsing of flags_parse without its exits: argv[1..argc) into the
// flags' variables. Returns 0; 1 when --help or -h comes (nothing after
// it is read; flags_parse then prints the help); or -1 with the message
// that flags_parse prints after "<prog>: error: " (the value of a flag
// that failed may have been cut to fit the Error).
int flags_parse_args(int argc, char **argv, const Flag *flags, int n_flags,
                     Error *err);

// After flags_parse: whether the command line set the variable at value
// (a flag given with the value it already had counts as set). A program
// whose defaults come from elsewhere (a preset, a saved run) asks this
// instead of reserving a value that means "unset".
bool flags_given(const void *value);

// Before flags_parse: the value of --name in argv (the last one if it is
// given twice), or NULL. For a flag that decides the other flags'
// defaults, so that --help shows the defaults that will really apply.
const char *flags_peek(int argc, char **argv, const char *name);

// Before flags_parse: takes the switch --name (or --name=1, --name=0)
// out of argv, shifting the rest down (*argc one less). True when it
// was there and not =0. For a switch that picks which program's flags
// follow: ./ch9 --finetune and ./ch8 --gpt2 hand the rest of their
// command lines to chapter 6's parser, which knows no such flag.
bool flags_take(int *argc, char **argv, const char *name);

// For checks after parsing ("--batch must be at least 1"): prints
// "<prog>: error: <message> (see <prog> --help)" and exits with status 2,
// like a parse error. The pointer to --help is left out where it would
// take the line past 80 columns: an error is one line, and fits.
_Noreturn void flags_fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

// After parsing (and after any defaults that depend on other flags are
// set): one rule for every number, its range, said the same way by every
// program: "--name must be in [lo, hi], got v", exit 2. Every range must
// name a flag of flags.
void flags_check_ranges(const Flag *flags, int n_flags,
                        const FlagRange *ranges, int n_ranges);

// "in [lo, hi]" for a range, as --help shows it ("in [0, --T]"), into buf.
void flags_range_text(char *buf, size_t size, const FlagRange *r);

// What --help prints (flags_parse prints it to stdout and exits 0).
void flags_print_help(FILE *out, const char *summary, const Flag *flags,
                      int n_flags, const FlagRange *ranges, int n_ranges);

// A run resumed from a folder (./ch6 and ./ch7 --resume DIR) keeps the
// settings it was saved with: a flag among these given on the command
// line is refused, "--name cannot change on --resume: the run in DIR fixes
// it", exit 2, rather than silently ignored.
typedef struct {
    const char *name;     // the flag, without the leading "--"
    const void *value;    // its variable, as given to flags_parse
} FlagFixed;

void flags_check_fixed(const FlagFixed *fixed, int n, const char *dir);

#endif
