// emu_schedule.h - the order in which the emulator (emu.h) runs the
// threads of a block, and how it switches between them; C-callable, for
// the tests.
//
// EMU_CONCURRENT, the default, means the block's threads all at once, in
// whatever order the operating system picks, where they are host threads
// (under ThreadSanitizer, which watches them for races, or with
// CUDA_EMU_THREADS=1): close to a GPU, and a kernel that lacks a
// __syncthreads gives wrong numbers only some of the time. Elsewhere the
// threads are fibers, which take turns, and EMU_CONCURRENT is the same as
// EMU_SERIAL_SHUFFLED (with the seed given, 0 from the environment).
//
// The serial orders make a missing barrier show every time: one thread
// runs at a time, each until its next __syncthreads, warp shuffle or
// return, and then the next one in the order. A thread that reads a
// value another thread has not written yet (or has already overwritten)
// reads it deterministically wrong: the NaN that fills fresh dynamic
// shared memory, or a stale value (which may, by chance, be right in one
// order and not in another: the tests try several).
//
//   EMU_SERIAL_FORWARD   lowest thread index first (finds a reader that
//                        runs ahead of higher threads, as a tree
//                        reduction without its barrier)
//   EMU_SERIAL_REVERSE   highest index first (finds a thread that reads
//                        lower threads' values before they are written)
//   EMU_SERIAL_SHUFFLED  an order drawn from seed, drawn anew at every
//                        __syncthreads and every block
//
// The 32 lanes of a warp still meet at a shuffle: each lane runs up to it,
// and the warp goes on when all its lanes (but those that returned) are
// there. The environment variable CUDA_EMU_SCHEDULE (concurrent, forward,
// reverse, shuffled or shuffled:SEED) sets the order of a program that
// does not call emu_set_schedule.
#ifndef CH8_EMU_SCHEDULE_H
#define CH8_EMU_SCHEDULE_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    EMU_CONCURRENT,
    EMU_SERIAL_FORWARD,
    EMU_SERIAL_REVERSE,
    EMU_SERIAL_SHUFFLED
} EmuSchedule;

// Every launch from now on runs its blocks' threads in this order (seed:
// for EMU_SERIAL_SHUFFLED only).
void emu_set_schedule(EmuSchedule order, uint64_t seed);

// "concurrent", "forward", "reverse", "shuffled".
const char *emu_schedule_name(EmuSchedule order);

// Where a block's threads are fibers, how they switch: on x86-64 with the
// emulator's own few instructions (emu_own_switch() true), elsewhere with
// glibc's swapcontext, a system call per switch. emu_use_swapcontext(true),
// or CUDA_EMU_SWITCH=swapcontext, takes swapcontext on x86-64 too, so that
// the tests check that way there as well. Both act on the next launches.
bool emu_own_switch(void);
void emu_use_swapcontext(bool on);

#ifdef __cplusplus
}
#endif

#endif
