// mem.h - checked allocation. Running out of memory is not something a
// teaching program can recover from, so these print one line and exit.
#ifndef COMMON_MEM_H
#define COMMON_MEM_H

#include <stddef.h>

#include "error.h"

void *xmalloc(size_t size);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *ptr, size_t size);

// count floats, zero-filled, 64-byte aligned (a cache line, and what AVX-512
// loads like). Release with free().
float *alloc_floats(size_t count);

// This machine's physical memory in bytes, or 0 when it cannot be known.
size_t mem_physical(void);

// Before a large allocation: 0 when `floats` floats fit in physical
// memory (or it is unknown) and under the process's address-space limit
// (ulimit -v), otherwise -1 with one line naming what needs them, both
// sizes in MiB, and `hint` (what to make smaller).
int mem_check(size_t floats, const char *what, const char *hint,
              Error *err);

#endif
