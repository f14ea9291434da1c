#include "mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "error.h"

static void *checked(void *p, size_t size) {
    if (!p && size) die("out of memory allocating %zu bytes", size);
    return p;
}

void *xmalloc(size_t size) { return checked(malloc(size ? size : 1), size); }

void *xcalloc(size_t count, size_t size) {
    if (size && count > SIZE_MAX / size)
        die("allocation of %zu x %zu bytes overflows", count, size);
    return checked(calloc(count ? count : 1, size ? size : 1), count * size);
}

void *xrealloc(void *ptr, size_t size) {
    return checked(realloc(ptr, size ? size : 1), size);
}

float *alloc_floats(size_t count) {
    if (count > SIZE_MAX / sizeof(float) - 64)
        die("allocation of %zu floats overflows", count);
    // aligned_alloc wants the size to be a multiple of the alignment
    size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
    float *p = aligned_alloc(64, bytes ? bytes : 64);
    checked(p, bytes);
    memset(p, 0, bytes);
    return p;
}

size_t mem_physical(void) {
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || size <= 0) return 0;
    return (size_t)pages * (size_t)size;
}

int mem_check(size_t floats, const char *what, const char *hint,
              Error *err) {
    const double mib = 1024.0 * 1024.0;
    double need = (double)floats * sizeof(float);
    size_t have = mem_physical();
    if (have != 0 && need > (double)have)
        return error_set(err, "%s needs %.0f MiB but this machine has %.0f "
                         "MiB: %s", what, need / mib, have / mib, hint);
    // A limit on the address space (ulimit -v) is reached before the
    // machine's memory: malloc would fail halfway, so it is said here.
    struct rlimit lim;
    if (getrlimit(RLIMIT_AS, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY
        && need > (double)lim.rlim_cur)
        return error_set(err, "%s needs %.0f MiB but the memory limit "
                         "(ulimit -v) is %.0f MiB: %s", what, need / mib,
                         (double)lim.rlim_cur / mib, hint);
    return 0;
}
