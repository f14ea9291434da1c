#include "alloc_count.h"

#include <stdatomic.h>
#include <stddef.h>

static atomic_ulong calls;   // OpenMP threads may allocate too

unsigned long alloc_count(void) { return atomic_load(&calls); }

// The real functions, as the linker's --wrap names them.
void *__real_malloc(size_t size);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *ptr, size_t size);
void *__real_aligned_alloc(size_t alignment, size_t size);

void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t count, size_t size);
void *__wrap_realloc(void *ptr, size_t size);
void *__wrap_aligned_alloc(size_t alignment, size_t size);

void *__wrap_malloc(size_t size) {
    atomic_fetch_add(&calls, 1);
    return __real_malloc(size);
}

void *__wrap_calloc(size_t count, size_t size) {
    atomic_fetch_add(&calls, 1);
    return __real_calloc(count, size);
}

void *__wrap_realloc(void *ptr, size_t size) {
    atomic_fetch_add(&calls, 1);
    return __real_realloc(ptr, size);
}

void *__wrap_aligned_alloc(size_t alignment, size_t size) {
    atomic_fetch_add(&calls, 1);
    return __real_aligned_alloc(alignment, size);
}
