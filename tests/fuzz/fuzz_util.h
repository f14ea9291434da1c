// fuzz_util.h - what the libFuzzer harnesses of tests/fuzz/ share.
//
// Each harness is one file that defines LLVMFuzzerTestOneInput: libFuzzer
// calls it with inputs it mutates, and any crash, sanitizer report, leak,
// hang or oversized allocation is a bug of the parser it drives. A harness
// also checks what a parser promises about the values it accepts, and
// calls fuzz_fail when a promise is broken, which libFuzzer reports as a
// crash with that input.
#ifndef FUZZ_UTIL_H
#define FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__attribute__((format(printf, 1, 2), noreturn))
static void fuzz_fail(const char *fmt, ...);

#include <stdarg.h>
static void fuzz_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    abort();
}

// A folder of this process's own, in memory when /dev/shm exists, made
// once and reused by every input (libFuzzer runs them one at a time).
static inline const char *fuzz_dir(void) {
    static char dir[64];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "%s/fuzz-XXXXXX",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
        if (!mkdtemp(dir)) fuzz_fail("cannot create %s", dir);
    }
    return dir;
}

// Writes the input to dir/name; path gets the file's path.
static inline void fuzz_write(char *path, size_t size, const char *dir,
                       const char *name, const uint8_t *data, size_t n) {
    snprintf(path, size, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(data, 1, n, f) != n) || fclose(f) != 0)
        fuzz_fail("cannot write %s", path);
}

// A NUL-terminated copy of the input, for parsers of C strings (free it).
static inline char *fuzz_cstr(const uint8_t *data, size_t n) {
    char *s = malloc(n + 1);
    if (!s) fuzz_fail("out of memory");
    if (n) memcpy(s, data, n);
    s[n] = 0;
    return s;
}

#endif
