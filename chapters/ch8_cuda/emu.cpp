// emu.cpp - the host emulation of CUDA that emu.h describes.
#include "emu.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

extern "C" {
#include "gemm.h"
}

thread_local uint3 threadIdx, blockIdx;
thread_local dim3 blockDim, gridDim;

namespace {

[[noreturn]] void fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "cuda emulator: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

// A barrier of n threads at which a thread that has left the kernel
// counts as arrived. The thread that completes a round runs done().
class Barrier {
  public:
    void reset(int n) {
        std::lock_guard<std::mutex> lk(mu_);
        n_ = n, arrived_ = 0, left_ = 0;
    }
    void wait(const char *kernel, const char *what,
              const std::function<void()> &done = nullptr) {
        std::unique_lock<std::mutex> lk(mu_);
        unsigned gen = gen_;
        if (++arrived_ + left_ >= n_) {
            if (done) done();
            release();
            return;
        }
        if (!cv_.wait_for(lk, std::chrono::seconds(20),
                          [&] { return gen_ != gen; }))
            fail("kernel %s: a %s that not every thread reached in 20 s "
                 "(one inside a branch that some threads skip?)", kernel,
                 what);
    }
    void leave() {
        std::lock_guard<std::mutex> lk(mu_);
        left_++;
        if (arrived_ > 0 && arrived_ + left_ >= n_) release();
    }

  private:
    void release() {
        arrived_ = 0;
        gen_++;
        cv_.notify_all();
    }
    std::mutex mu_;
    std::condition_variable cv_;
    int n_ = 0, arrived_ = 0, left_ = 0;
    unsigned gen_ = 0;
};

struct Warp {
    Barrier bar;
    float vals[32];
};

// The serial orders of emu_schedule.h: one thread of the block holds the
// turn; when it stops (at a barrier, a shuffle or its end) it hands the
// turn to the first ready thread in the order. Each thread waits on its
// own condition variable, so that a handover wakes one thread, not all.
enum SerialState : unsigned char { READY, AT_SYNC, AT_WARP, DONE };

struct Serial {
    std::mutex mu;
    std::unique_ptr<std::condition_variable[]> cv;   // one per thread
    std::vector<SerialState> state;
    std::vector<unsigned> rank;   // the order: the lowest rank runs first
    unsigned running = 0;         // the thread whose turn it is
    EmuSchedule order = EMU_CONCURRENT;
    uint64_t rng = 0;             // for EMU_SERIAL_SHUFFLED
};

struct Launch {
    const char *name;
    dim3 grid, block;
    unsigned nthreads;
    const std::function<void()> *body;
    std::vector<unsigned char> shared;   // dynamic shared memory
    Barrier sync;                        // __syncthreads
    Barrier done;                        // the end of a block
    std::vector<Warp> warps;
    Serial serial;                       // when the order is a serial one
};

thread_local Launch *cur;
thread_local unsigned cur_tid;
cudaError_t last_error = cudaSuccess;
std::mutex launch_mu;   // one launch at a time
// The order of the next launches (under launch_mu); -1: not chosen yet.
int schedule = -1;
uint64_t schedule_seed = 0;

void reset_block(Launch *L) {
    L->sync.reset((int)L->nthreads);
    for (size_t w = 0; w < L->warps.size(); w++) {
        unsigned first = (unsigned)w * 32, n = L->nthreads - first;
        L->warps[w].bar.reset(n < 32 ? (int)n : 32);
    }
    memset(L->shared.data(), 0xff, L->shared.size());
}

// splitmix64: a small generator of the shuffled orders.
uint64_t next_random(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// The ranks of the threads for the next stretch of the block.
void serial_order(Serial *S, unsigned n) {
    for (unsigned t = 0; t < n; t++)
        S->rank[t] = S->order == EMU_SERIAL_REVERSE ? n - 1 - t : t;
    if (S->order != EMU_SERIAL_SHUFFLED) return;
    for (unsigned t = n - 1; t > 0; t--) {   // Fisher-Yates
        unsigned j = (unsigned)(next_random(&S->rng) % (t + 1));
        std::swap(S->rank[t], S->rank[j]);
    }
}

// Gives the turn to the first ready thread (S->mu held). With none ready
// and some threads not done, they wait for each other: a barrier or a
// shuffle that some thread never reaches.
void serial_hand_over(Launch *L) {
    Serial *S = &L->serial;
    unsigned best = L->nthreads;
    for (unsigned t = 0; t < L->nthreads; t++)
        if (S->state[t] == READY
            && (best == L->nthreads || S->rank[t] < S->rank[best]))
            best = t;
    if (best == L->nthreads)
        fail("kernel %s: threads wait at a __syncthreads or a warp shuffle "
             "that other threads of the block never reach (one inside a "
             "branch that some threads skip?)", L->name);
    S->running = best;
    S->cv[best].notify_one();
}

// Thread tid stops as `why` (S->mu held): releases the barrier or the
// warp's meeting that it completes, starts the next block when it is the
// block's last thread, and hands the turn over.
void serial_stop(Launch *L, unsigned tid, SerialState why) {
    Serial *S = &L->serial;
    unsigned n = L->nthreads;
    S->state[tid] = why;
    unsigned at_sync = 0, done = 0;
    for (unsigned t = 0; t < n; t++)
        at_sync += S->state[t] == AT_SYNC, done += S->state[t] == DONE;
    if (done == n) {   // the block is over: the next one starts afresh
        reset_block(L);
        std::fill(S->state.begin(), S->state.end(), READY);
        serial_order(S, n);
    } else if (at_sync > 0 && at_sync + done == n) {   // __syncthreads
        for (unsigned t = 0; t < n; t++)
            if (S->state[t] == AT_SYNC) S->state[t] = READY;
        serial_order(S, n);
    }
    // the warp's lanes meet (those that returned count as there)
    unsigned first = tid / 32 * 32, last = std::min(first + 32, n);
    bool met = true;
    for (unsigned t = first; t < last; t++)
        met = met && (S->state[t] == AT_WARP || S->state[t] == DONE);
    if (met)
        for (unsigned t = first; t < last; t++)
            if (S->state[t] == AT_WARP) S->state[t] = READY;
    serial_hand_over(L);
}

// Waits until it is thread tid's turn (S->mu held by lk).
void serial_wait_turn(Serial *S, unsigned tid,
                      std::unique_lock<std::mutex> &lk) {
    S->cv[tid].wait(lk, [S, tid] { return S->running == tid; });
}

// A barrier (AT_SYNC) or a shuffle's meeting (AT_WARP) in a serial order.
void serial_meet(Launch *L, SerialState why) {
    Serial *S = &L->serial;
    std::unique_lock<std::mutex> lk(S->mu);
    serial_stop(L, cur_tid, why);
    serial_wait_turn(S, cur_tid, lk);
}

void worker(Launch *L, unsigned tid) {
    cur = L, cur_tid = tid;
    blockDim = L->block, gridDim = L->grid;
    unsigned bx = L->block.x, by = L->block.y;
    threadIdx = {tid % bx, (tid / bx) % by, tid / (bx * by)};
    unsigned gx = L->grid.x, gy = L->grid.y;
    size_t blocks = (size_t)gx * gy * L->grid.z;
    for (size_t b = 0; b < blocks; b++) {
        blockIdx = {(unsigned)(b % gx), (unsigned)(b / gx % gy),
                    (unsigned)(b / ((size_t)gx * gy))};
        if (L->serial.order != EMU_CONCURRENT) {
            Serial *S = &L->serial;
            {
                std::unique_lock<std::mutex> lk(S->mu);
                serial_wait_turn(S, tid, lk);
            }
            (*L->body)();
            std::unique_lock<std::mutex> lk(S->mu);
            serial_stop(L, tid, DONE);
            continue;
        }
        (*L->body)();
        L->sync.leave();
        L->warps[tid / 32].bar.leave();
        // the next block starts when every thread has finished this one
        L->done.wait(L->name, "block end", [L] { reset_block(L); });
    }
}

float shuffle(unsigned mask, float v, int src) {
    Launch *L = cur;
    if (mask != 0xffffffffu)
        fail("kernel %s: a shuffle with mask %#x; the emulator takes whole "
             "warps only (0xffffffff)", L->name, mask);
    if (L->nthreads % 32 != 0)
        fail("kernel %s: a warp shuffle in a block of %u threads, which is "
             "not a whole number of warps", L->name, L->nthreads);
    Warp &w = L->warps[cur_tid / 32];
    int lane = (int)(cur_tid % 32);
    bool serial = L->serial.order != EMU_CONCURRENT;
    w.vals[lane] = v;
    if (serial) serial_meet(L, AT_WARP);
    else w.bar.wait(L->name, "warp shuffle");
    float r = src >= 0 && src < 32 ? w.vals[src] : v;
    // nobody writes before all have read
    if (serial) serial_meet(L, AT_WARP);
    else w.bar.wait(L->name, "warp shuffle");
    return r;
}

}  // namespace

// ---- the kernel language ----------------------------------------------------

void __syncthreads(void) {
    if (cur->serial.order != EMU_CONCURRENT) serial_meet(cur, AT_SYNC);
    else cur->sync.wait(cur->name, "__syncthreads");
}

float __shfl_down_sync(unsigned mask, float v, unsigned delta) {
    return shuffle(mask, v, (int)(cur_tid % 32 + delta));
}

float __shfl_xor_sync(unsigned mask, float v, int lane_mask) {
    return shuffle(mask, v, (int)(cur_tid % 32) ^ lane_mask);
}

float __shfl_sync(unsigned mask, float v, int src_lane) {
    return shuffle(mask, v, src_lane & 31);
}

float atomicAdd(float *addr, float v) {
    uint32_t *p = reinterpret_cast<uint32_t *>(addr);
    uint32_t old = __atomic_load_n(p, __ATOMIC_RELAXED), next;
    float f;
    do {
        memcpy(&f, &old, 4);
        float sum = f + v;
        memcpy(&next, &sum, 4);
    } while (!__atomic_compare_exchange_n(p, &old, next, false,
                                          __ATOMIC_SEQ_CST,
                                          __ATOMIC_RELAXED));
    return f;
}

// ---- the order of a block's threads (emu_schedule.h) ----------------------

namespace {

uint64_t schedule_launches = 0;   // launches since the order was set

// CUDA_EMU_SCHEDULE, for a program that does not choose (launch_mu held).
void schedule_from_environment(void) {
    const char *e = getenv("CUDA_EMU_SCHEDULE");
    schedule = EMU_CONCURRENT;
    if (!e || !*e || strcmp(e, "concurrent") == 0) return;
    if (strcmp(e, "forward") == 0) schedule = EMU_SERIAL_FORWARD;
    else if (strcmp(e, "reverse") == 0) schedule = EMU_SERIAL_REVERSE;
    else if (strncmp(e, "shuffled", 8) == 0
             && (e[8] == 0 || e[8] == ':')) {
        schedule = EMU_SERIAL_SHUFFLED;
        schedule_seed = e[8] ? strtoull(e + 9, NULL, 10) : 0;
    } else
        fail("CUDA_EMU_SCHEDULE=%s: not concurrent, forward, reverse, "
             "shuffled or shuffled:SEED", e);
}

}  // namespace

void emu_set_schedule(EmuSchedule order, uint64_t seed) {
    std::lock_guard<std::mutex> lk(launch_mu);
    schedule = order, schedule_seed = seed, schedule_launches = 0;
}

const char *emu_schedule_name(EmuSchedule order) {
    switch (order) {
    case EMU_SERIAL_FORWARD: return "forward";
    case EMU_SERIAL_REVERSE: return "reverse";
    case EMU_SERIAL_SHUFFLED: return "shuffled";
    default: return "concurrent";
    }
}

void *emu_dynamic_shared(void) {
    return cur->shared.empty() ? nullptr : cur->shared.data();
}

void emu_launch(const char *name, dim3 grid, dim3 block, size_t shmem,
                const std::function<void()> &body, const char *file,
                int line) {
    unsigned long long n = (unsigned long long)block.x * block.y * block.z;
    if (n < 1 || n > 1024 || grid.x < 1 || grid.y < 1 || grid.z < 1
        || grid.y > 65535 || grid.z > 65535 || shmem > 48 * 1024) {
        fprintf(stderr, "cuda emulator: %s:%d: launch of %s with grid "
                "(%u,%u,%u), block (%u,%u,%u), %zu bytes of shared memory: "
                "a block holds 1 to 1024 threads and up to 48 KiB\n", file,
                line, name, grid.x, grid.y, grid.z, block.x, block.y,
                block.z, shmem);
        last_error = cudaErrorInvalidValue;
        return;
    }
    std::lock_guard<std::mutex> lk(launch_mu);
    Launch L;
    L.name = name, L.grid = grid, L.block = block;
    L.nthreads = (unsigned)n;
    L.body = &body;
    L.shared.resize(shmem);
    L.warps = std::vector<Warp>((n + 31) / 32);
    L.done.reset((int)n);
    reset_block(&L);
    if (schedule < 0) schedule_from_environment();
    Serial *S = &L.serial;
    S->order = (EmuSchedule)schedule;
    if (S->order != EMU_CONCURRENT) {
        S->cv.reset(new std::condition_variable[n]);
        S->state.assign(n, READY);
        S->rank.resize(n);
        // each launch its own shuffles, the same ones run after run
        S->rng = schedule_seed + 0x2545f4914f6cdd1dull * ++schedule_launches;
        serial_order(S, (unsigned)n);
        S->running = (unsigned)(std::min_element(S->rank.begin(),
                                                 S->rank.end())
                                - S->rank.begin());
    }
    std::vector<std::thread> threads;
    threads.reserve(n);
    for (unsigned t = 0; t < n; t++) threads.emplace_back(worker, &L, t);
    for (auto &t : threads) t.join();
}

// ---- the runtime --------------------------------------------------------------

cudaError_t cudaMalloc(void **p, size_t bytes) {
    size_t size = (bytes + 255) / 256 * 256;
    *p = size ? aligned_alloc(256, size) : nullptr;
    if (size && !*p) return last_error = cudaErrorMemoryAllocation;
    if (*p) memset(*p, 0xff, size);   // NaN until written, as garbage
    return cudaSuccess;
}

cudaError_t cudaFree(void *p) {
    free(p);
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes,
                       cudaMemcpyKind kind) {
    (void)kind;
    if (bytes) memmove(dst, src, bytes);
    return cudaSuccess;
}

cudaError_t cudaMemset(void *p, int value, size_t bytes) {
    if (bytes) memset(p, value, bytes);
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }

cudaError_t cudaGetLastError(void) {
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}

cudaError_t cudaGetDeviceCount(int *n) {
    *n = 1;   // the emulated one
    return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    *total_bytes = (size_t)sysconf(_SC_PHYS_PAGES) * page;
    *free_bytes = (size_t)sysconf(_SC_AVPHYS_PAGES) * page;
    return cudaSuccess;
}

const char *cudaGetErrorString(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    default: return "unknown error";
    }
}

// ---- cuBLAS -----------------------------------------------------------------------

struct EmuBlas {
    int unused;
};

cublasStatus_t cublasCreate(cublasHandle_t *h) {
    *h = new EmuBlas();
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t h) {
    delete h;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t mode) {
    (void)h, (void)mode;   // TF32 is the GPU's; the CPU computes in fp32
    return CUBLAS_STATUS_SUCCESS;
}

const char *cublasGetStatusString(cublasStatus_t s) {
    return s == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS"
                                      : "CUBLAS_STATUS_INVALID_VALUE";
}

// A column-major (m, n) matrix is, read row-major, its (n, m) transpose:
// C = op(A) op(B) column-major is C^T = op(B)^T op(A)^T row-major, which
// is gemm() with the operands swapped.
cublasStatus_t cublasSgemm(cublasHandle_t h, cublasOperation_t ta,
                           cublasOperation_t tb, int m, int n, int k,
                           const float *alpha, const float *A, int lda,
                           const float *B, int ldb, const float *beta,
                           float *C, int ldc) {
    (void)h;
    if (m < 0 || n < 0 || k < 0 || ldc < (m > 1 ? m : 1)
        || lda < ((ta == CUBLAS_OP_N ? m : k) > 1 ? (ta == CUBLAS_OP_N ? m : k) : 1)
        || ldb < ((tb == CUBLAS_OP_N ? k : n) > 1 ? (tb == CUBLAS_OP_N ? k : n) : 1))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
    gemm(tb == CUBLAS_OP_T, ta == CUBLAS_OP_T, n, m, k, *alpha, B, ldb, A,
         lda, *beta, C, ldc);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSgemmStridedBatched(
    cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
    int n, int k, const float *alpha, const float *A, int lda,
    long long strideA, const float *B, int ldb, long long strideB,
    const float *beta, float *C, int ldc, long long strideC, int batch) {
    for (int i = 0; i < batch; i++) {
        cublasStatus_t s = cublasSgemm(h, ta, tb, m, n, k, alpha,
                                       A + i * strideA, lda, B + i * strideB,
                                       ldb, beta, C + i * strideC, ldc);
        if (s != CUBLAS_STATUS_SUCCESS) return s;
    }
    return CUBLAS_STATUS_SUCCESS;
}
