// mem.h - checked allocation. Running out of memory is not something a
// teaching program can recover from, so these print one line and exit.
#ifndef COMMON_MEM_H
#define COMMON_MEM_H

#include <stddef.h>

void *xmalloc(size_t size);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *ptr, size_t size);

// count floats, zero-filled, 64-byte aligned (a cache line, and what AVX-512
// loads like). Release with free().
float *alloc_floats(size_t count);

#endif
