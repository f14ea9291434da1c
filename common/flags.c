#include "flags.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

_Noreturn void flags_fail(const char *fmt, ...) {
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "%s: error: ", error_progname());
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see %s --help)\n", error_progname());
    exit(2);
}

static void print_default(const Flag *f) {
    switch (f->type) {
    case FLAG_INT: printf("%d", *(int *)f->value); break;
    case FLAG_U64: printf("%llu", (unsigned long long)*(uint64_t *)f->value);
        break;
    case FLAG_FLOAT: printf("%g", (double)*(float *)f->value); break;
    case FLAG_STRING: {
        // quoted, with the invisible characters spelled out: "\n"
        const char *s = *(const char **)f->value;
        if (!s || !*s) {
            printf("none");
            break;
        }
        putchar('"');
        for (; *s; s++) {
            if (*s == '\n') printf("\\n");
            else if (*s == '\t') printf("\\t");
            else if (*s == '"' || *s == '\\') printf("\\%c", *s);
            else putchar(*s);
        }
        putchar('"');
        break;
    }
    case FLAG_BOOL: printf("%s", *(bool *)f->value ? "on" : "off"); break;
    }
}

static void print_help(const char *summary, const Flag *flags, int n) {
    printf("usage: %s [flags]\n\n%s\n\nflags:\n", error_progname(), summary);
    for (int i = 0; i < n; i++) {
        const char *arg = flags[i].type == FLAG_BOOL ? "" :
                          flags[i].type == FLAG_STRING ? " STR" :
                          flags[i].type == FLAG_FLOAT ? " X" : " N";
        char left[64];
        snprintf(left, sizeof left, "--%s%s", flags[i].name, arg);
        printf("  %-22s %s (default: ", left, flags[i].help);
        print_default(&flags[i]);
        printf(")\n");
    }
    printf("  %-22s %s\n", "--help", "show this message and exit");
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

void flags_parse(int argc, char **argv, const Flag *flags, int n_flags,
                 const char *summary) {
    error_set_progname(argv[0]);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            print_help(summary, flags, n_flags);
            exit(0);
        }
        if (strncmp(arg, "--", 2) != 0)
            flags_fail("unexpected argument '%s'", arg);
        const char *name = arg + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const Flag *f = NULL;
        for (int k = 0; k < n_flags; k++)
            if (strlen(flags[k].name) == len
                && strncmp(flags[k].name, name, len) == 0) f = &flags[k];
        if (!f) flags_fail("unknown flag '--%.*s'", (int)len, name);
        const char *text = eq ? eq + 1 : NULL;
        if (!text && f->type == FLAG_BOOL) text = "1";
        if (!text) {
            if (i + 1 >= argc) flags_fail("--%s needs a value", f->name);
            text = argv[++i];
        }
        if (set_value(f, text) != 0)
            flags_fail("--%s expects %s, got '%s'", f->name,
                       type_word(f->type), text);
    }
}
