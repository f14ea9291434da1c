// dist.c - the ranks of a data-parallel run (dist.h). One file, two
// builds: with -DUSE_MPI (make ch6 MPI=1) it calls MPI; without, there
// is one rank and every function returns at once.
#include "dist.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "error.h"
#include "timer.h"

#ifdef USE_MPI
#include <limits.h>
#include <mpi.h>
#include <unistd.h>
#endif

static int rank = 0, size = 1, local_size = 1;
static double reduce_seconds;
static size_t reduce_floats;

int dist_rank(void) { return rank; }
int dist_size(void) { return size; }
int dist_local_size(void) { return local_size; }
double dist_reduce_seconds(void) { return reduce_seconds; }
size_t dist_reduce_floats(void) { return reduce_floats; }

#ifdef USE_MPI

bool dist_with_mpi(void) { return true; }

// How long a rank other than 0 waits, on an error, for rank 0 to report
// it: see on_error.
enum { ERROR_WAIT_SECONDS = 5 };

static void finish(void) {   // at exit: every rank leaves MPI cleanly
    int done;
    MPI_Finalized(&done);
    if (!done) MPI_Finalize();
}

//> dist-error
// An error on one rank must end them all: the others would otherwise wait
// forever in their next all-reduce for a rank that is gone. MPI_Abort
// ends every rank. Most errors happen on every rank at once (they read
// the same flags and the same files), and the user should read the
// message once: so rank 0 reports and aborts at once, and another rank
// first waits a few seconds, during which rank 0's abort usually ends it.
// An error of that rank alone (a file that only its machine lacks) is
// then reported by it, a few seconds late, but never lost and never a
// hang.
static void on_error(int status, const char *line) {
    if (rank != 0 && size > 1) sleep(ERROR_WAIT_SECONDS);
    fprintf(stderr, "%s: error: %s\n", error_progname(), line);
    fflush(stderr);
    if (size > 1) MPI_Abort(MPI_COMM_WORLD, status);
    exit(status);
}
//< dist-error

void dist_init(void) {
    static bool started;
    if (started) return;
    started = true;
    int provided;   // only the main thread calls MPI (OpenMP's do not)
    MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm local;   // the ranks that share this machine's memory
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                        MPI_INFO_NULL, &local);
    MPI_Comm_size(local, &local_size);
    MPI_Comm_free(&local);
    atexit(finish);
    error_set_exit_hook(on_error);
    // Rank 0 prints the run; the others' reports would repeat it.
    if (rank != 0 && !freopen("/dev/null", "w", stdout))
        die("rank %d: cannot silence its output", rank);
}

//> dist-average-impl
void dist_average(float *buf, size_t n) {
    reduce_floats = n;
    if (size == 1) return;
    double t0 = time_now();
    // MPI counts in int: a model of more than 2^31 floats goes in parts
    for (size_t done = 0; done < n;) {
        size_t part = n - done < (size_t)INT_MAX ? n - done : INT_MAX;
        MPI_Allreduce(MPI_IN_PLACE, buf + done, (int)part, MPI_FLOAT,
                      MPI_SUM, MPI_COMM_WORLD);
        done += part;
    }
    for (size_t i = 0; i < n; i++) buf[i] /= (float)size;
    reduce_seconds += time_now() - t0;
}
//< dist-average-impl

void dist_average_doubles(double *buf, int n) {
    if (size == 1) return;
    MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++) buf[i] /= size;
}

bool dist_any(bool flag) {
    if (size == 1) return flag;
    int in = flag, out = 0;
    MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    return out != 0;
}

void dist_broadcast_int(int *value) {
    if (size > 1) MPI_Bcast(value, 1, MPI_INT, 0, MPI_COMM_WORLD);
}

// FNV-1a over the bytes: equal buffers give equal hashes, and two
// buffers that differ almost never do.
static uint64_t hash_bytes(const void *p, size_t n) {
    const unsigned char *b = p;
    uint64_t h = 14695981039346656037u;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211u;
    return h;
}

bool dist_same(const float *buf, size_t n) {
    if (size == 1) return true;
    uint64_t h = hash_bytes(buf, n * sizeof *buf), lo = h, hi = h;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN,
                  MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX,
                  MPI_COMM_WORLD);
    return lo == hi;
}

#else   // one process: nothing to talk to

bool dist_with_mpi(void) { return false; }

void dist_init(void) {
    // Started by mpirun, each copy of a program built without MPI would
    // train a model of its own and all would save into the same folder.
    const char *n = getenv("OMPI_COMM_WORLD_SIZE");
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    if (!n) n = getenv("PMI_SIZE"), r = getenv("PMI_RANK");   // MPICH's
    if (!n || atoi(n) <= 1) return;
    if (r && atoi(r) != 0) exit(1);   // the first copy says it, once
    die("built without MPI, %d copies would train alone: make ch6 MPI=1",
        atoi(n));
}

void dist_average(float *buf, size_t n) {
    (void)buf;
    reduce_floats = n;
}

void dist_average_doubles(double *buf, int n) { (void)buf, (void)n; }

bool dist_any(bool flag) { return flag; }

void dist_broadcast_int(int *value) { (void)value; }

bool dist_same(const float *buf, size_t n) {
    (void)buf, (void)n;
    return true;
}

#endif
