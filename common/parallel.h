// parallel.h - PARALLEL_FOR, the OpenMP loop pragma that builds without
// OpenMP too.
//
//   PARALLEL_FOR
//   for (int i = 0; i < n; i++) ...
//
// With OpenMP (the Makefile adds -fopenmp when the compiler has it) this is
// "#pragma omp parallel for"; without it, nothing, because gcc -Wall warns
// about a pragma it does not know and -Werror makes the warning fatal.
// Every loop it is used on writes disjoint outputs and does each output's
// sum in a fixed order, so the results do not depend on the thread count.
#ifndef COMMON_PARALLEL_H
#define COMMON_PARALLEL_H

#ifdef _OPENMP
#define PARALLEL_FOR _Pragma("omp parallel for")
#else
#define PARALLEL_FOR
#endif

#include <stddef.h>
#include <string.h>

// Sets p[0..n) to 0, in pieces of 64 KiB shared among the threads. A
// backward pass clears each gradient buffer before it adds into it: tens
// of MiB a training step, which one core alone writes while the others
// wait for it.
static inline void zero_floats(float *p, size_t n) {
    enum { PIECE = 1 << 14 };                        // floats: 64 KiB
    long pieces = (long)((n + PIECE - 1) / PIECE);
    if (pieces <= 1) {
        if (n) memset(p, 0, n * sizeof *p);
        return;
    }
    PARALLEL_FOR
    for (long i = 0; i < pieces; i++) {
        size_t at = (size_t)i * PIECE, m = n - at < PIECE ? n - at : PIECE;
        memset(p + at, 0, m * sizeof *p);
    }
}

#endif
