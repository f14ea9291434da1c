// autothreads.h - --threads 0: the thread count that runs fastest on the
// machine as it is now, found by timing the steps, and kept up to date.
//
// Two threads on two idle cores train up to 1.6 times as fast as one. But
// when another program keeps one of those cores busy, every parallel loop
// and every matrix product waits at its end for the thread that lost its
// core, and two threads run 2 to 4 times slower than one. Which count is
// best depends on what else runs, and that changes during a run. So the
// training loops time each step and, now and then, try another count for
// a few steps: a count that is faster is kept, one that is clearly slower
// is dropped after one step. The results do not depend on the count
// (every sum has a fixed order: common/parallel.h, common/gemm.c), so
// switching changes the speed and nothing else.
//
//   AutoThreads at;
//   autothreads_init(&at, asked, cores);   // asked 0: adapt; N: keep N
//   for each step:
//       ... the step ...
//       if (autothreads_step(&at, seconds, tokens))
//           print autothreads_describe(&at, ...)
#ifndef CH6_AUTOTHREADS_H
#define CH6_AUTOTHREADS_H

#include <stdbool.h>
#include <stddef.h>

enum { AUTOTHREADS_RECENT = 5 };

typedef struct {
    int cores;           // the most threads it tries
    int threads;         // the count the steps run on now
    bool adaptive;       // false: a fixed count, never changed
    bool settled;        // the first comparison is done
    bool first;          // the last decision reported was the first
    int changes;         // how often the count changed after that
    // the last change (or the first decision): the counts and the speeds
    int was;             // 0: no comparison yet
    double cost_was, cost_now;   // seconds per unit of work
    // -- the controller's state (see autothreads.c) --
    int steps;                       // steps timed so far
    double recent[AUTOTHREADS_RECENT];   // the last costs at `threads`
    int n_recent;
    double ref;          // the cost at `threads` when it was last compared
    int probe;           // the count being tried; 0: none
    double tried[AUTOTHREADS_RECENT];   // the costs of its steps
    double probe_cost;   // what it cost: its median, or the step that lost
    double probe_seconds, probe_work;   // its steps' time and work
    int probe_steps;
    double clock;        // seconds of the steps timed so far
    double next_probe;   // `clock` at which the next try starts
    double interval;     // seconds between tries (grows while none wins)
    double earliest;     // `clock` before which no try starts (its cost)
    int next_candidate;  // round robin over the counts to try
} AutoThreads;

// asked > 0: that many threads, fixed (capped at cores by the caller);
// asked == 0: adaptive between 1 and cores. Sets the thread count.
void autothreads_init(AutoThreads *a, int asked, int cores);

// --threads N as the programs read it: N > 0 is that count, fixed (capped
// at the cores this process may run on, with a note on stderr, as
// threads_cap says); 0 adapts between 1 and those cores.
void autothreads_from_flag(AutoThreads *a, int asked);

// After a step that took `seconds` for `work` units (its tokens): may set
// another thread count for the next step. Returns true when the count in
// use changed for good (not during a try) or was first settled, which the
// caller reports with autothreads_describe.
bool autothreads_step(AutoThreads *a, double seconds, double work);

// The last decision, in a few words, for the step (the caller's count)
// that autothreads_step returned true after: the first decision as
//   "2 (1 thread ran 1.6x slower)"
// a later change as
//   "1 from step 240 (2 threads ran 2.3x slower: a busy machine)"
void autothreads_describe(const AutoThreads *a, long step, char *buf,
                          size_t size);

// What sets a thread count: threads_set (common/threads.h). The tests put
// a function of their own here to run the controller on made-up timings.
extern void (*autothreads_set_hook)(int threads);

#endif
