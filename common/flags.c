#include "flags.h"
#include "report.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

// Columns of UTF-8 text: its characters, less the continuation bytes.
static size_t columns(const char *s) {
    size_t n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

_Noreturn void flags_fail(const char *fmt, ...) {
    char line[8192], hint[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    // "<prog>: error: <line><hint>" on one line of at most 80 columns
    snprintf(hint, sizeof hint, " (see %s --help)", error_progname());
    size_t width = columns(error_progname()) + sizeof ": error: " - 1
                   + columns(line) + columns(hint);
    if (width <= 80 && strlen(line) + strlen(hint) < sizeof line)
        strcat(line, hint);
    error_exit(2, line);
}

// v as the command line most likely wrote it: a whole number in full, a
// float flag's value in the fewest digits that give the same float
// ("-0.1", not "-0.100000001").
static void format_value(char *buf, size_t size, double v) {
    if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(buf, size, "%.0f", v);
        return;
    }
    bool is_float = (double)(float)v == v;
    for (int digits = 6; digits <= 17; digits++) {
        snprintf(buf, size, "%.*g", digits, v);
        if (is_float ? strtof(buf, NULL) == (float)v
                     : strtod(buf, NULL) == v) return;
    }
}

// The flag of that name; a range that names no flag is the program's
// mistake, not the user's.
static const Flag *flag_named(const char *name, const Flag *flags, int n) {
    for (int i = 0; i < n; i++)
        if (strcmp(flags[i].name, name) == 0) return &flags[i];
    fprintf(stderr, "%s: a range names --%s, which is no flag\n",
            error_progname(), name);
    abort();
}

// A number flag's value as a double.
static double flag_number(const Flag *f) {
    switch (f->type) {
    case FLAG_INT: return *(int *)f->value;
    case FLAG_U64: return (double)*(uint64_t *)f->value;
    case FLAG_FLOAT: return *(float *)f->value;
    case FLAG_BOOL: return *(bool *)f->value;
    case FLAG_STRING: break;
    }
    fprintf(stderr, "%s: --%s has a range but is no number\n",
            error_progname(), f->name);
    abort();
}

void flags_range_text(char *buf, size_t size, const FlagRange *r) {
    char lo[40], hi[40];
    if (r->lo_flag) snprintf(lo, sizeof lo, "--%s", r->lo_flag);
    else snprintf(lo, sizeof lo, "%g", r->lo);
    if (r->hi_flag) snprintf(hi, sizeof hi, "--%s", r->hi_flag);
    else snprintf(hi, sizeof hi, "%g", r->hi);
    snprintf(buf, size, "in [%s, %s]", lo, hi);
}

void flags_check_ranges(const Flag *flags, int n_flags,
                        const FlagRange *ranges, int n_ranges) {
    for (int i = 0; i < n_ranges; i++) {
        const FlagRange *r = &ranges[i];
        const Flag *f = flag_named(r->name, flags, n_flags);
        double value = flag_number(f);
        double lo = r->lo_flag ? flag_number(flag_named(r->lo_flag, flags,
                                                        n_flags)) : r->lo;
        double hi = r->hi_flag ? flag_number(flag_named(r->hi_flag, flags,
                                                        n_flags)) : r->hi;
        double lo_ok = lo, hi_ok = hi;
        // a float flag given exactly its bound (--temperature 1e30) holds
        // the nearest float, which may lie a hair outside the double
        if (f->type == FLAG_FLOAT) {
            lo_ok = fmin(lo, (double)(float)lo);
            hi_ok = fmax(hi, (double)(float)hi);
        }
        if (!(value >= lo_ok && value <= hi_ok)) {
            char got[64];
            format_value(got, sizeof got, value);
            flags_fail("--%s must be in [%g, %g], got %s", r->name, lo, hi,
                       got);
        }
    }
}

void flags_check_fixed(const FlagFixed *fixed, int n, const char *dir) {
    for (int i = 0; i < n; i++)
        if (flags_given(fixed[i].value))
            flags_fail("--%s cannot change on --resume: the run in %s fixes "
                       "it", fixed[i].name, dir);
}

// The variable's value as --help shows it; strings quoted, with the
// invisible characters spelled out ("\n").
static void format_default(char *buf, size_t size, const Flag *f) {
    switch (f->type) {
    case FLAG_INT: snprintf(buf, size, "%d", *(int *)f->value); return;
    case FLAG_U64:
        snprintf(buf, size, "%llu",
                 (unsigned long long)*(uint64_t *)f->value);
        return;
    case FLAG_FLOAT:
        snprintf(buf, size, "%g", (double)*(float *)f->value);
        return;
    case FLAG_BOOL:
        snprintf(buf, size, "%s", *(bool *)f->value ? "on" : "off");
        return;
    case FLAG_STRING: break;
    }
    const char *s = *(const char **)f->value;
    if (!s || !*s) {
        snprintf(buf, size, "none");
        return;
    }
    size_t n = 0;
    buf[n++] = '"';
    for (; *s && n + 4 < size; s++) {
        char c = *s == '\n' ? 'n' : *s == '\t' ? 't' : *s;
        if (c != *s || *s == '"' || *s == '\\') buf[n++] = '\\';
        buf[n++] = c;
    }
    buf[n++] = '"';
    buf[n] = 0;
}

// "  --name ARG   help, in [lo, hi] (default: X)", the range only where
// the flag has one, folded between words so that no line passes 80
// columns.
static void print_flag(FILE *out, const char *left, const char *help,
                       const Flag *f, const FlagRange *range) {
    char text[640], def[160], in[200] = "", one[100] = "";
    format_default(def, sizeof def, f);
    if (range) {   // ", in [lo, hi]", never broken across lines
        flags_range_text(one, sizeof one, range);
        strcpy(in, ", ");   // (a line may break before "in")
        for (const char *c = one; *c; c++)   // no-break spaces: report.h
            strcat(in, *c == ' ' ? "\xc2\xa0" : (char[2]){*c, 0});
    }
    snprintf(text, sizeof text, "%s%s (default: %s)", help, in, def);
    enum { INDENT = 25, WIDTH = 80 };
    fprintf(out, "  %-22s ", left);
    int col = INDENT;
    if ((int)strlen(left) > 22)   // a long name gets a line of its own
        fprintf(out, "\n%*s", INDENT, "");
    fold_print(out, text, col, INDENT, WIDTH);
}

void flags_print_help(FILE *out, const char *summary, const Flag *flags,
                      int n, const FlagRange *ranges, int n_ranges) {
    fprintf(out, "usage: %s [flags]\n\n%s\n\nflags:\n", error_progname(),
            summary);
    for (int i = 0; i < n; i++) {
        const FlagRange *range = NULL;
        for (int k = 0; k < n_ranges && !range; k++)
            if (strcmp(ranges[k].name, flags[i].name) == 0)
                range = &ranges[k];
        // a switch that is on by default shows how to turn it off
        const char *arg = flags[i].type == FLAG_BOOL
                              ? (*(bool *)flags[i].value ? "[=0]" : "") :
                          flags[i].type == FLAG_STRING ? " STR" :
                          flags[i].type == FLAG_FLOAT ? " X" : " N";
        char left[64];
        snprintf(left, sizeof left, "--%s%s", flags[i].name, arg);
        print_flag(out, left, flags[i].help, &flags[i], range);
    }
    fprintf(out, "  %-22s %s\n", "--help", "show this message and exit");
}

// Converts text into the flag's variable; 0 on success, -1 on a bad value.
static int set_value(const Flag *f, const char *text) {
    char *end = NULL;
    errno = 0;
    switch (f->type) {
    case FLAG_INT: {
        long v = strtol(text, &end, 10);
        if (*text == '\0' || *end != '\0' || errno || v < INT_MIN
            || v > INT_MAX) return -1;
        *(int *)f->value = (int)v;
        return 0;
    }
    case FLAG_U64: {
        if (*text == '-') return -1;
        unsigned long long v = strtoull(text, &end, 10);
        if (*text == '\0' || *end != '\0' || errno) return -1;
        *(uint64_t *)f->value = (uint64_t)v;
        return 0;
    }
    case FLAG_FLOAT: {
        float v = strtof(text, &end);
        if (*text == '\0' || *end != '\0' || errno || !isfinite(v)) return -1;
        *(float *)f->value = v;
        return 0;
    }
    case FLAG_STRING:
        *(const char **)f->value = text;
        return 0;
    case FLAG_BOOL:
        if (strcmp(text, "1") == 0 || strcmp(text, "true") == 0)
            *(bool *)f->value = true;
        else if (strcmp(text, "0") == 0 || strcmp(text, "false") == 0)
            *(bool *)f->value = false;
        else return -1;
        return 0;
    }
    return -1;
}

static const char *type_word(FlagType t) {
    switch (t) {
    case FLAG_INT: return "an integer";
    case FLAG_U64: return "a non-negative integer";
    case FLAG_FLOAT: return "a finite number";
    case FLAG_STRING: return "a value";
    case FLAG_BOOL: return "0 or 1";
    }
    return "a value";
}

// The variables the command line set, for flags_given.
enum { MAX_GIVEN = 64 };
static const void *given[MAX_GIVEN];
static int n_given;

bool flags_given(const void *value) {
    for (int i = 0; i < n_given; i++)
        if (given[i] == value) return true;
    return false;
}

const char *flags_peek(int argc, char **argv, const char *name) {
    size_t len = strlen(name);
    const char *found = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0 || strncmp(a + 2, name, len) != 0)
            continue;
        if (a[2 + len] == '=') found = a + 3 + len;
        else if (a[2 + len] == 0 && i + 1 < argc) found = argv[++i];
    }
    return found;
}

bool flags_take(int *argc, char **argv, const char *name) {
    size_t len = strlen(name);
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0 || strncmp(a + 2, name, len) != 0)
            continue;
        const char *rest = a + 2 + len;   // "", "=1", "=0", or another flag
        if (*rest && strcmp(rest, "=1") != 0 && strcmp(rest, "=0") != 0)
            continue;
        memmove(argv + i, argv + i + 1,
                (size_t)(*argc - i) * sizeof *argv);   // with the NULL
        (*argc)--;
        return strcmp(rest, "=0") != 0;
    }
    return false;
}

// The flag named by name up to its end or its '='; NULL if none is.
static const Flag *find_flag(const char *name, const Flag *flags,
                             int n_flags) {
    size_t len = strcspn(name, "=");
    for (int k = 0; k < n_flags; k++)
        if (strlen(flags[k].name) == len
            && strncmp(flags[k].name, name, len) == 0) return &flags[k];
    return NULL;
}

int flags_parse_args(int argc, char **argv, const Flag *flags, int n_flags,
                     Error *err) {
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) return 1;
        if (strncmp(arg, "--", 2) != 0) {
            // "--switch 0": a value after a switch written bare
            const char *prev = i > 1 ? argv[i - 1] : "";
            const Flag *sw = strncmp(prev, "--", 2) == 0
                                     && !strchr(prev, '=')
                                 ? find_flag(prev + 2, flags, n_flags) : NULL;
            bool is_bool_text = strcmp(arg, "0") == 0 || strcmp(arg, "1") == 0
                || strcmp(arg, "true") == 0 || strcmp(arg, "false") == 0;
            if (sw && sw->type == FLAG_BOOL && is_bool_text)
                return error_set(err, "--%s is a switch: write --%s=%s",
                                 sw->name, sw->name, arg);
            return error_set(err, "unexpected argument '%s'", arg);
        }
        const char *name = arg + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const Flag *f = find_flag(name, flags, n_flags);
        if (!f)
            return error_set(err, "unknown flag '--%.*s'", (int)len, name);
        const char *text = eq ? eq + 1 : NULL;
        if (!text && f->type == FLAG_BOOL) text = "1";
        if (!text) {
            if (i + 1 >= argc)
                return error_set(err, "--%s needs a value", f->name);
            text = argv[++i];
        }
        if (set_value(f, text) != 0)
            return error_set(err, "--%s expects %s, got '%s'", f->name,
                             type_word(f->type), text);
        if (!flags_given(f->value) && n_given < MAX_GIVEN)
            given[n_given++] = f->value;
    }
    return 0;
}

void flags_parse(int argc, char **argv, const Flag *flags, int n_flags,
                 const FlagRange *ranges, int n_ranges, const char *summary) {
    error_set_progname(argv[0]);
    // every range names a number flag (checked here, where --help and
    // every run pass, not only where a value is out of its range)
    for (int i = 0; i < n_ranges; i++) {
        flag_number(flag_named(ranges[i].name, flags, n_flags));
        if (ranges[i].lo_flag)
            flag_number(flag_named(ranges[i].lo_flag, flags, n_flags));
        if (ranges[i].hi_flag)
            flag_number(flag_named(ranges[i].hi_flag, flags, n_flags));
    }
    Error err;
    int rc = flags_parse_args(argc, argv, flags, n_flags, &err);
    if (rc == 1) {
        flags_print_help(stdout, summary, flags, n_flags, ranges, n_ranges);
        exit(0);
    }
    if (rc != 0) flags_fail("%s", err.msg);
}
