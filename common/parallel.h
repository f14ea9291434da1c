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

#endif
