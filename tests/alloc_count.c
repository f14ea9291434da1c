#include "alloc_count.h"

#include <malloc.h>
#include <stdatomic.h>
#include <stddef.h>

static atomic_ulong calls;   // OpenMP threads may allocate too
static atomic_long live;     // bytes held now, by malloc_usable_size
static atomic_long peak;     // the most held since alloc_peak_reset

unsigned long alloc_count(void) { return atomic_load(&calls); }
long alloc_live(void) { return atomic_load(&live); }
long alloc_peak(void) { return atomic_load(&peak); }
void alloc_peak_reset(void) { atomic_store(&peak, atomic_load(&live)); }

// The real functions, as the linker's --wrap names them.
void *__real_malloc(size_t size);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *ptr, size_t size);
void *__real_aligned_alloc(size_t alignment, size_t size);
void __real_free(void *ptr);

void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t count, size_t size);
void *__wrap_realloc(void *ptr, size_t size);
void *__wrap_aligned_alloc(size_t alignment, size_t size);
void __wrap_free(void *ptr);

static void *held(void *p) {
    if (!p) return p;
    long now = atomic_fetch_add(&live, (long)malloc_usable_size(p))
               + (long)malloc_usable_size(p);
    long was = atomic_load(&peak);
    while (now > was && !atomic_compare_exchange_weak(&peak, &was, now)) {
    }
    return p;
}

static void let_go(void *p) {
    if (p) atomic_fetch_sub(&live, (long)malloc_usable_size(p));
}

void *__wrap_malloc(size_t size) {
    atomic_fetch_add(&calls, 1);
    return held(__real_malloc(size));
}

void *__wrap_calloc(size_t count, size_t size) {
    atomic_fetch_add(&calls, 1);
    return held(__real_calloc(count, size));
}

void *__wrap_realloc(void *ptr, size_t size) {
    atomic_fetch_add(&calls, 1);
    let_go(ptr);
    return held(__real_realloc(ptr, size));
}

void *__wrap_aligned_alloc(size_t alignment, size_t size) {
    atomic_fetch_add(&calls, 1);
    return held(__real_aligned_alloc(alignment, size));
}

void __wrap_free(void *ptr) {
    let_go(ptr);
    __real_free(ptr);
}
