// timer.h - wall-clock time for progress lines and benchmarks.
#ifndef COMMON_TIMER_H
#define COMMON_TIMER_H

// Seconds since an arbitrary fixed point (CLOCK_MONOTONIC), as a double.
double time_now(void);

#endif
