// alloc_count.h - how many times the code linked into the test runner has
// called malloc, calloc, realloc or aligned_alloc, and how much it holds.
//
// The Makefile links the runner with -Wl,--wrap=malloc (and the others):
// every call from an object file of the runner (the project's code, the
// tests, Check if linked statically) goes to __wrap_malloc here, which
// counts it and calls the real one. Calls made inside shared libraries
// (libc itself, OpenBLAS, the OpenMP runtime) are not counted: the count
// is of what *our* code asks for, which is what "a training step allocates
// nothing" promises. Check's assertions allocate (they record where they
// are), so a counted stretch of code must not contain any.
#ifndef TESTS_ALLOC_COUNT_H
#define TESTS_ALLOC_COUNT_H

unsigned long alloc_count(void);

// The bytes those calls hold now (malloc_usable_size of each block not
// yet freed: the runner wraps free too), and the most they held since
// alloc_peak_reset: what tests/test_memory.c holds the memory plans'
// counts against. (A block that a library allocated and our code frees
// is subtracted without having been added: measure differences.)
long alloc_live(void);
long alloc_peak(void);
void alloc_peak_reset(void);

#endif
