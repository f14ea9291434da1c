#include "mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
