// mem.h - checked allocation. Running out of memory is not something a
// teaching program can recover from, so these print one line and exit.
#ifndef COMMON_MEM_H
#define COMMON_MEM_H

#include <stddef.h>

#include "error.h"

void *xmalloc(size_t size);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *ptr, size_t size);

// count floats, zero-filled, 64-byte aligned (a cache line, and what AVX-512
// loads like). Release with free().
float *alloc_floats(size_t count);

// This machine's physical memory in bytes, or 0 when it cannot be known.
size_t mem_physical(void);

// ---- a run's memory, added up before it allocates --------------------------
//
// A program adds up everything it will allocate for the work asked, from
// the same size tables that carve the memory (the *_floats functions of
// the layers), before its first large allocation, and is refused at once
// when that does not fit. Its peak resident memory is estimated as
//
//   what the process holds when the plan begins (its code, libraries and
//     the data read so far: VmRSS of /proc/self/status)
//   + what the runtime takes on first use: MEM_RUNTIME_MIB, and
//     MEM_THREAD_MIB for each thread (OpenBLAS's packing buffers, up to
//     3 MiB a thread measured for the largest products here, and the
//     threads' stacks)
//   + what the run keeps to its end (mem_plan_keep)
//   + the largest of the phases that come and go one after another, each
//     freeing what it took (mem_plan_phase: a loss, a sample, a decoding)
//
// or the peak so far (VmHWM), when that is higher. Counts are in floats;
// ints take as much room, and other types are counted in floats' worth.
enum { MEM_RUNTIME_MIB = 1, MEM_THREAD_MIB = 2 };

// The address space each thread reserves beyond its resident memory (its
// malloc arena, OpenBLAS's buffer, its stack), for the ulimit -v check.
enum { MEM_THREAD_VIRT_MIB = 160 };

// The floats' worth of bytes, rounded up.
static inline size_t mem_floats(size_t bytes) {
    return (bytes + sizeof(float) - 1) / sizeof(float);
}

typedef struct {
    double resident;   // bytes held when the plan began
    double hwm;        // the peak resident memory until then
    double virt;       // the address space in use then (VmSize)
    double runtime;    // the runtime's share, in bytes (0: a program
                       // that multiplies no matrices, starts no threads)
    int threads;       // OpenMP's threads when the plan began
    double kept;       // floats kept to the end
    double phase;      // floats of the largest passing phase
} MemPlan;

// Starts a plan from what the process holds now, with the threads that
// OpenMP will use now. It also fixes glibc's mmap threshold at 128 KiB,
// so that a phase's large blocks go back to the system when it frees
// them, and the next phase does not add to them (mem.c says why).
void mem_plan_begin(MemPlan *p);
void mem_plan_keep(MemPlan *p, size_t floats);
void mem_plan_phase(MemPlan *p, size_t floats);

// The estimated peak resident memory, in bytes and in MiB.
double mem_plan_bytes(const MemPlan *p);
double mem_plan_mib(const MemPlan *p);

// 0 when the plan fits: its peak within the memory available (this
// process's own and /proc/meminfo's MemAvailable, else the physical
// memory), within a cgroup's limit, and the address space it adds within
// ulimit -v (the address space in use, the plan's and MEM_THREAD_VIRT_MIB
// a thread). Otherwise -1 with one line naming the size, what it was
// held against and hint, what to change: "needs 2048 MiB (1530 free):
// lower --batch --block". A program ends with it at once
// (exit status 2, a usage error: error_exit(2, err.msg)); after its
// "chN: error: " it stays within 80 columns when hint is short.
// With MEM_ESTIMATE=1 in the environment it first prints "chN: memory
// estimated N MiB at the peak" on stderr (tests/memory.sh reads it).
int mem_plan_check(const MemPlan *p, const char *hint, Error *err);

#endif
