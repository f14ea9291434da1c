// dist.h - data-parallel training: one model trained by N processes.
//
// Every process (a "rank", 0 .. N-1) holds the whole model and the same
// optimiser state. Each step, each rank computes the gradient of its own
// share of the batch; the gradients are averaged across the ranks (an
// all-reduce), so every rank holds the gradient of the whole batch and
// applies the same AdamW update to the same weights. The ranks never
// send each other weights: they stay equal because they start equal and
// take equal steps.
//
// Built with MPI (`make ch6 MPI=1`, run as `mpirun -np N ./ch6`), the
// functions below talk to the other ranks. Built without it, which is
// every other program and ./ch6 by default, there is one rank and each
// of them does nothing, so the trainer calls them unconditionally.
#ifndef CH6_DIST_H
#define CH6_DIST_H

#include <stdbool.h>
#include <stddef.h>

// Joins the other ranks (MPI_Init) and names this one. Rank 0 speaks for
// the run: the others' standard output is thrown away, and an error on
// any rank (error_exit) ends every rank with one message. Call it first
// thing; a second call does nothing.
void dist_init(void);

int dist_rank(void);         // this process, 0 .. dist_size() - 1
int dist_size(void);         // the ranks training together (1: alone)
int dist_local_size(void);   // of them, how many on this machine
bool dist_with_mpi(void);    // built against MPI?

//> dist-average
// buf[0 .. n) becomes its mean over the ranks, the same on every rank:
// one all-reduce (a sum) and a division. Every rank must call it at the
// same point with the same n.
void dist_average(float *buf, size_t n);
//< dist-average

// The same for doubles (losses).
void dist_average_doubles(double *buf, int n);

// True on every rank when flag is true on any: the ranks agree to stop
// (a Ctrl-C may reach them at different steps).
bool dist_any(bool flag);

// Rank 0's *value, on every rank (a step count that rank 0 measured).
void dist_broadcast_int(int *value);

// True when buf[0 .. n) is bit for bit the same on every rank. A cheap
// guard, run before saving, that the ranks' weights did not drift apart.
bool dist_same(const float *buf, size_t n);

// The time spent in dist_average so far, in seconds, and how many floats
// it reduced per call (the last call's n).
double dist_reduce_seconds(void);
size_t dist_reduce_floats(void);

#endif
