// threads.h - how many threads OpenMP's loops and OpenBLAS's GEMMs use.
//
// Both libraries start one thread per core by default. When an OpenMP loop
// and a multi-threaded GEMM run on the same two cores they get in each
// other's way, and small timings turn erratic; the demonstration timings of
// the chapters therefore run on one thread (threads_set(1)).
#ifndef COMMON_THREADS_H
#define COMMON_THREADS_H

#include <stdbool.h>

typedef struct {
    int omp;    // OpenMP's thread count (1 without OpenMP)
    int blas;   // OpenBLAS's thread count (1 with NO_BLAS)
} ThreadCounts;

// Sets both to n threads and returns what they were.
ThreadCounts threads_set(int n);

// Puts back what threads_set returned.
void threads_restore(ThreadCounts prev);

// The cores this process may run on: the machine's, or fewer when taskset
// (or mpirun's binding of a rank to its cores) narrows them. At least 1.
int threads_cores(void);

// The one rule of every program's --threads N (N >= 1): more threads than
// threads_cores() only slow a run down, so N is capped there. With note,
// a capped N is said on stderr, in one line:
//   ch6: note: --threads 64, but this machine has 2 cores: using 2
int threads_cap(int n, bool note);

#endif
