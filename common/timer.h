// timer.h - wall-clock time for progress lines and benchmarks.
#ifndef COMMON_TIMER_H
#define COMMON_TIMER_H

// Seconds since an arbitrary fixed point (CLOCK_MONOTONIC), as a double.
double time_now(void);

// The best (smallest) wall time in ms of work(arg) over repeated runs: at
// least min_reps runs, then more while min_seconds have not passed since
// the first began, but never more than max_reps. The best of several runs
// is the least disturbed by other processes, page faults and cold caches.
double time_best_ms(void (*work)(void *), void *arg, int min_reps,
                    int max_reps, double min_seconds);

// The median time in ms of reps runs of work(arg), after one untimed run
// that warms the caches and faults in the pages. The book's timing figures
// use it: the median of a few runs is what a typical run takes, and one
// slow run moves it little. It counts the CPU time of the calling thread,
// not wall time, so it is for work on one thread (threads_set(1)): on a
// machine shared with other jobs, the time they take from us is then not
// counted as ours. reps is 1 to TIME_MEDIAN_MAX_REPS; an even count gives
// the mean of the middle two.
#define TIME_MEDIAN_MAX_REPS 31
double time_median_ms(void (*work)(void *), void *arg, int reps);

// The CPU time in seconds that the calling thread has used so far.
double time_thread_cpu(void);

#endif
