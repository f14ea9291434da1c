#include "mem.h"

#include <stdint.h>
#include <stdio.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "error.h"

static void *checked(void *p, size_t size) {
    if (!p && size) die("out of memory allocating %zu bytes", size);
    return p;
}

void *xmalloc(size_t size) { return checked(malloc(size ? size : 1), size); }

void *xcalloc(size_t count, size_t size) {
    if (size && count > SIZE_MAX / size)
        die("allocation of %zu x %zu bytes overflows", count, size);
    return checked(calloc(count ? count : 1, size ? size : 1), count * size);
}

void *xrealloc(void *ptr, size_t size) {
    return checked(realloc(ptr, size ? size : 1), size);
}

float *alloc_floats(size_t count) {
    if (count > SIZE_MAX / sizeof(float) - 64)
        die("allocation of %zu floats overflows", count);
    // aligned_alloc wants the size to be a multiple of the alignment
    size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
    float *p = aligned_alloc(64, bytes ? bytes : 64);
    checked(p, bytes);
    memset(p, 0, bytes);
    return p;
}

size_t mem_physical(void) {
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || size <= 0) return 0;
    return (size_t)pages * (size_t)size;
}

// ---- a run's memory -------------------------------------------------------

static const double MIB = 1024.0 * 1024.0;

// A "Key:   123 kB" line of a /proc file, in bytes; -1 when absent.
static double proc_kb(const char *path, const char *key) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[256];
    size_t n = strlen(key);
    double v = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, n) == 0 && line[n] == ':') {
            v = 1024.0 * strtod(line + n + 1, NULL);
            break;
        }
    fclose(f);
    return v;
}

// A cgroup's memory limit in bytes (v2, then v1), or -1 for none.
static double cgroup_limit(void) {
    const char *paths[] = {"/sys/fs/cgroup/memory.max",
                           "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
    for (int i = 0; i < 2; i++) {
        FILE *f = fopen(paths[i], "r");
        if (!f) continue;
        char buf[64] = "";
        char *ok = fgets(buf, sizeof buf, f);
        fclose(f);
        double v = ok ? strtod(buf, NULL) : 0;
        // "max", or v1's "no limit" (a page short of 2^63)
        if (v > 0 && v < 1e18) return v;
    }
    return -1;
}

void mem_plan_begin(MemPlan *p) {
#ifdef __GLIBC__
    // A phase's memory must go back when the phase ends, or the next one
    // adds to it. glibc returns a block of 128 KiB or more to the system
    // on free(), but after the first such free it raises that threshold
    // (up to 32 MiB), and blocks under it then come from a heap that
    // keeps what is freed: a run of phases of mixed sizes then held 10%
    // more than its largest phase. Fixing the threshold keeps it at 128
    // KiB. (Nothing here allocates in a loop, so the cost is nil.)
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    const char *me = "/proc/self/status";
    double rss = proc_kb(me, "VmRSS"), hwm = proc_kb(me, "VmHWM");
    double virt = proc_kb(me, "VmSize");
    *p = (MemPlan){.resident = rss > 0 ? rss : 0,
                   .hwm = hwm > 0 ? hwm : 0, .virt = virt > 0 ? virt : 0,
                   .runtime = (MEM_RUNTIME_MIB + MEM_THREAD_MIB * threads)
                              * MIB, .threads = threads};
}

void mem_plan_keep(MemPlan *p, size_t floats) { p->kept += (double)floats; }

void mem_plan_phase(MemPlan *p, size_t floats) {
    if ((double)floats > p->phase) p->phase = (double)floats;
}

// The bytes the plan adds to what the process held when it began.
static double plan_added(const MemPlan *p) {
    return p->runtime + (p->kept + p->phase) * sizeof(float);
}

double mem_plan_bytes(const MemPlan *p) {
    double peak = p->resident + plan_added(p);
    return peak > p->hwm ? peak : p->hwm;
}

double mem_plan_mib(const MemPlan *p) { return mem_plan_bytes(p) / MIB; }

int mem_plan_check(const MemPlan *p, const char *hint, Error *err) {
    double need = mem_plan_bytes(p);
    // for tests/memory.sh, which holds it against the peak it measures
    const char *say = getenv("MEM_ESTIMATE");
    if (say && *say && strcmp(say, "0") != 0)
        fprintf(stderr, "%s: memory estimated %.1f MiB at the peak\n",
                error_progname(), need / MIB);
    // MemAvailable leaves out what this process holds already
    double avail = proc_kb("/proc/meminfo", "MemAvailable");
    double have = avail >= 0 ? avail + p->resident : (double)mem_physical();
    if (have > 0 && need > have)
        return error_set(err, "needs %.0f MiB (%.0f free): %s",
                         need / MIB, have / MIB, hint);
    double limit = cgroup_limit();
    if (limit > 0 && need > limit)
        return error_set(err, "needs %.0f MiB (cgroup limit %.0f): %s",
                         need / MIB, limit / MIB, hint);
    // A limit on the address space (ulimit -v) is reached before the
    // machine's memory: malloc would fail halfway, so it is said here.
    // Each thread reserves address space it barely uses: a malloc arena
    // (64 MiB), OpenBLAS's buffer, a stack (some 125 MiB in all measured).
    struct rlimit lim;
    double virt = p->virt + plan_added(p) + p->threads * MEM_THREAD_VIRT_MIB
                                            * MIB;
    if (getrlimit(RLIMIT_AS, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY
        && virt > (double)lim.rlim_cur)
        return error_set(err, "needs %.0f MiB (ulimit -v %.0f): %s",
                         virt / MIB, (double)lim.rlim_cur / MIB, hint);
    return 0;
}
