// emu.cpp - the host emulation of CUDA that emu.h describes.
//
// A block's threads run in one of two ways. As fibers, by default: each
// thread has a stack of its own, and the launching host thread switches
// from one to the next at every __syncthreads, warp shuffle and return,
// in an order of emu_schedule.h. A switch costs a fraction of a
// microsecond, where starting a host thread costs tens of microseconds
// and a barrier of host threads wakes each one through the kernel. Or as
// host threads, all started together (or taking turns in a serial
// order): the only way ThreadSanitizer sees the races that a missing
// barrier leaves, so a build under it (make check-tsan) always runs them.
#include "emu.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <sys/mman.h>
#include <thread>
#include <ucontext.h>
#include <unistd.h>
#include <vector>

extern "C" {
#include "gemm.h"
}

thread_local uint3 threadIdx, blockIdx;
thread_local dim3 blockDim, gridDim;

// Which sanitizer the build is under (GCC's macros, clang's features).
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define EMU_TSAN 1
#endif
#if __has_feature(address_sanitizer)
#define EMU_ASAN 1
#endif
#endif
#if !defined(EMU_TSAN) && defined(__SANITIZE_THREAD__)
#define EMU_TSAN 1
#endif
#if !defined(EMU_ASAN) && defined(__SANITIZE_ADDRESS__)
#define EMU_ASAN 1
#endif
#ifndef EMU_TSAN
#define EMU_TSAN 0
#endif
#ifndef EMU_ASAN
#define EMU_ASAN 0
#endif

#if EMU_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

// AddressSanitizer keeps track of the stack it runs on: these tell it of
// a switch between fibers (and do nothing in other builds).
static inline void asan_start_switch(void **fake, const void *bottom,
                                     size_t size) {
#if EMU_ASAN
    __sanitizer_start_switch_fiber(fake, bottom, size);
#else
    (void)fake, (void)bottom, (void)size;
#endif
}

static inline void asan_finish_switch(void *fake, const void **bottom,
                                      size_t *size) {
#if EMU_ASAN
    __sanitizer_finish_switch_fiber(fake, bottom, size);
#else
    (void)fake, (void)bottom, (void)size;
#endif
}

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
    Barrier bar;     // host threads all at once only
    float vals[32];  // what each lane passes to a shuffle
    // what each lane passes to an mma_sync: its A, B and C (wmma)
    float frag[32][24];
};

// The three ways to run a block's threads (emu.h).
enum Way : unsigned char {
    THREADS,          // host threads, all at once (EMU_CONCURRENT)
    SERIAL_THREADS,   // host threads, one at a time (the serial orders)
    FIBERS            // fibers of one host thread, one at a time
};

// The serial orders of emu_schedule.h, which fibers always follow: one
// thread of the block holds the turn; when it stops (at a barrier, a
// shuffle or its end) the turn goes to the first ready thread in the
// order. With host threads, each waits on its own condition variable, so
// that a handover wakes one thread, not all.
enum SerialState : unsigned char { READY, AT_SYNC, AT_WARP, DONE };

struct Serial {
    std::mutex mu;                                   // host threads only
    std::unique_ptr<std::condition_variable[]> cv;   // one per thread
    std::vector<SerialState> state;
    std::vector<unsigned> rank;      // the order: the lowest rank runs first
    std::vector<unsigned> by_rank;   // by_rank[k]: the thread of rank k
    std::vector<unsigned> at_warp;   // per warp: lanes at its meeting or done
    unsigned at_sync = 0, done = 0;  // threads at the barrier, returned
    // No READY thread has a rank below it: the next turn is found by
    // looking on from here rather than over the whole block each time.
    unsigned cursor = 0;
    unsigned running = 0;            // the thread whose turn it is
    EmuSchedule order = EMU_SERIAL_FORWARD;
    uint64_t rng = 0;                // for EMU_SERIAL_SHUFFLED
};

struct Launch {
    const char *name;
    dim3 grid, block;
    unsigned nthreads;
    const std::function<void()> *body;
    std::vector<unsigned char> shared;   // dynamic shared memory
    Way way;
    Barrier sync;                        // __syncthreads (THREADS)
    Barrier done;                        // the end of a block (THREADS)
    std::vector<Warp> warps;
    Serial serial;                       // SERIAL_THREADS and FIBERS
};

thread_local Launch *cur;
thread_local unsigned cur_tid;
cudaError_t last_error = cudaSuccess;
std::mutex launch_mu;   // one launch at a time
// The order of the next launches (under launch_mu); -1: not chosen yet.
int schedule = -1;
uint64_t schedule_seed = 0;
// Whether fibers switch with swapcontext (under launch_mu); -1 until
// CUDA_EMU_SWITCH has been read or emu_use_swapcontext called.
int use_swapcontext = -1;

void reset_block(Launch *L) {
    L->sync.reset((int)L->nthreads);
    for (size_t w = 0; w < L->warps.size(); w++) {
        unsigned first = (unsigned)w * 32, n = L->nthreads - first;
        L->warps[w].bar.reset(n < 32 ? (int)n : 32);
    }
    if (!L->shared.empty()) memset(L->shared.data(), 0xff, L->shared.size());
}

// Thread tid's threadIdx in a block of L's shape.
uint3 thread_index(const Launch *L, unsigned tid) {
    unsigned bx = L->block.x, by = L->block.y;
    return {tid % bx, (tid / bx) % by, tid / (bx * by)};
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
    if (S->order == EMU_SERIAL_SHUFFLED)
        for (unsigned t = n - 1; t > 0; t--) {   // Fisher-Yates
            unsigned j = (unsigned)(next_random(&S->rng) % (t + 1));
            std::swap(S->rank[t], S->rank[j]);
        }
    for (unsigned t = 0; t < n; t++) S->by_rank[S->rank[t]] = t;
    S->cursor = 0;
}

// Every thread ready at the start of a block, in a fresh order.
void serial_start_block(Launch *L) {
    Serial *S = &L->serial;
    std::fill(S->state.begin(), S->state.end(), READY);
    std::fill(S->at_warp.begin(), S->at_warp.end(), 0u);
    S->at_sync = 0, S->done = 0;
    serial_order(S, L->nthreads);
}

// Thread tid has stopped as `why`: releases the barrier or the warp's
// meeting that it completes. Returns true when it was the block's last
// thread, after making all ready for the next block.
bool serial_stop(Launch *L, unsigned tid, SerialState why) {
    Serial *S = &L->serial;
    unsigned n = L->nthreads, w = tid / 32;
    S->state[tid] = why;
    if (why == AT_SYNC) S->at_sync++;
    else S->at_warp[w]++, S->done += why == DONE;
    if (S->done == n) {   // the block is over: the next one starts afresh
        reset_block(L);
        serial_start_block(L);
        return true;
    }
    if (S->at_sync > 0 && S->at_sync + S->done == n) {   // __syncthreads
        for (unsigned t = 0; t < n; t++)
            if (S->state[t] == AT_SYNC) S->state[t] = READY;
        S->at_sync = 0;
        serial_order(S, n);
    }
    // the warp's lanes meet (those that returned count as there)
    unsigned first = w * 32, last = std::min(first + 32, n);
    if (S->at_warp[w] == last - first)
        for (unsigned t = first; t < last; t++)
            if (S->state[t] == AT_WARP) {
                S->state[t] = READY;
                S->at_warp[w]--;
                S->cursor = std::min(S->cursor, S->rank[t]);
            }
    return false;
}

// The first ready thread in the order. With none ready (and some threads
// not done), they wait for each other: a barrier or a shuffle that some
// thread never reaches, which stops the program.
unsigned serial_next(Launch *L) {
    Serial *S = &L->serial;
    unsigned n = L->nthreads;
    while (S->cursor < n && S->state[S->by_rank[S->cursor]] != READY)
        S->cursor++;
    if (S->cursor == n)
        fail("kernel %s: threads wait at a __syncthreads or a warp shuffle "
             "that other threads of the block never reach (one inside a "
             "branch that some threads skip?)", L->name);
    return S->by_rank[S->cursor];
}

// ---- a block's threads as host threads ------------------------------------

// Gives the turn to the first ready thread (S->mu held).
void serial_hand_over(Launch *L) {
    Serial *S = &L->serial;
    S->running = serial_next(L);
    S->cv[S->running].notify_one();
}

// Waits until it is thread tid's turn (S->mu held by lk).
void serial_wait_turn(Serial *S, unsigned tid,
                      std::unique_lock<std::mutex> &lk) {
    S->cv[tid].wait(lk, [S, tid] { return S->running == tid; });
}

// A barrier (AT_SYNC) or a shuffle's meeting (AT_WARP) in a serial order
// of host threads.
void serial_meet(Launch *L, SerialState why) {
    Serial *S = &L->serial;
    std::unique_lock<std::mutex> lk(S->mu);
    serial_stop(L, cur_tid, why);
    serial_hand_over(L);
    serial_wait_turn(S, cur_tid, lk);
}

// The life of host thread tid: its part of every block of the grid.
void worker(Launch *L, unsigned tid) {
    cur = L, cur_tid = tid;
    blockDim = L->block, gridDim = L->grid;
    threadIdx = thread_index(L, tid);
    unsigned gx = L->grid.x, gy = L->grid.y;
    size_t blocks = (size_t)gx * gy * L->grid.z;
    for (size_t b = 0; b < blocks; b++) {
        blockIdx = {(unsigned)(b % gx), (unsigned)(b / gx % gy),
                    (unsigned)(b / ((size_t)gx * gy))};
        if (L->way == SERIAL_THREADS) {
            Serial *S = &L->serial;
            {
                std::unique_lock<std::mutex> lk(S->mu);
                serial_wait_turn(S, tid, lk);
            }
            (*L->body)();
            std::unique_lock<std::mutex> lk(S->mu);
            serial_stop(L, tid, DONE);
            serial_hand_over(L);
            continue;
        }
        (*L->body)();
        L->sync.leave();
        L->warps[tid / 32].bar.leave();
        // the next block starts when every thread has finished this one
        L->done.wait(L->name, "block end", [L] { reset_block(L); });
    }
}

// Runs L on one host thread per thread of its blocks; returns when all
// have finished the last block.
void run_threads(Launch *L) {
    std::vector<std::thread> threads;
    threads.reserve(L->nthreads);
    for (unsigned t = 0; t < L->nthreads; t++)
        threads.emplace_back(worker, L, t);
    for (auto &t : threads) t.join();
}

// ---- a block's threads as fibers ------------------------------------------
//
// A fiber is a stack and the registers saved when it last stopped. The
// launching host thread is the scheduler: it switches to the fiber whose
// turn it is, which runs until its next __syncthreads, shuffle or return
// and switches back. Nothing runs at the same time, so
// nothing needs a lock; and since every fiber runs on the same host
// thread, the thread_local threadIdx, cur and cur_tid are the scheduler's
// to set before each switch.

// A fiber's stack, with an unmapped page below it, so that a kernel that
// overflows it stops with a segmentation fault rather than writing over
// its neighbour's stack. (Pages are only backed by memory once touched.)
#if EMU_ASAN
const size_t FIBER_STACK = 1024 * 1024;   // AddressSanitizer's frames are bigger
#else
const size_t FIBER_STACK = 256 * 1024;
#endif

// The switch. glibc's swapcontext saves and restores the signal mask too,
// a system call on every switch: that was nine tenths of the time of the
// emulated tests. On x86-64 the emulator has a switch of its own, which
// saves only what a function call must preserve. emu_switch(&from, to)
// pushes rbp, rbx and r12 to r15 on the running stack, stores the stack
// pointer in *from, loads `to` as the stack pointer, pops the same six
// registers from there and returns, into whatever last switched away
// from that stack. (The floating-point control words, which a call also
// preserves, are left alone: no kernel changes them.) On any other
// machine, and with CUDA_EMU_SWITCH=swapcontext, fibers use swapcontext.
#if defined(__x86_64__) && defined(__GNUC__)
#define EMU_OWN_SWITCH 1
//> fiber-switch
extern "C" __attribute__((visibility("hidden"))) void emu_switch(void **from,
                                                                 void *to);
asm(R"(
    .text
    .p2align 4
    .globl emu_switch
    .hidden emu_switch
    .type emu_switch, @function
emu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size emu_switch, .-emu_switch
)");
//< fiber-switch
#else
#define EMU_OWN_SWITCH 0
#endif

struct Fiber {
    ucontext_t ctx;               // with swapcontext
    void *sp = nullptr;           // with emu_switch: its saved stack pointer
    char *stack;                  // its lowest address
    void *asan_fake = nullptr;    // AddressSanitizer's bookkeeping
};

// The scheduler's state (under launch_mu: one launch at a time).
struct Fibers {
    std::vector<std::unique_ptr<Fiber>> pool;   // grown to the largest block
    bool own_switch = false;        // emu_switch, rather than swapcontext
    ucontext_t scheduler;           // with swapcontext
    void *scheduler_sp = nullptr;   // with emu_switch
    SerialState why;                // why the running fiber stopped
    void *asan_fake = nullptr;      // AddressSanitizer's, for the scheduler
    const void *host_stack = nullptr;   // the scheduler's stack, for it too
    size_t host_stack_size = 0;
} fibers;

// Whether fibers switch with emu_switch (launch_mu held).
bool own_switch(void) {
    if (use_swapcontext < 0) {
        const char *e = getenv("CUDA_EMU_SWITCH");
        if (e && *e && strcmp(e, "swapcontext") != 0 && strcmp(e, "own") != 0)
            fail("CUDA_EMU_SWITCH=%s: not own or swapcontext", e);
        use_swapcontext = e && strcmp(e, "swapcontext") == 0;
    }
    return EMU_OWN_SWITCH && !use_swapcontext;
}

// A fiber with a fresh stack, ready to be pointed at fiber_main.
Fiber *new_fiber(void) {
    long page = sysconf(_SC_PAGESIZE);
    void *p = mmap(nullptr, FIBER_STACK + page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) fail("no memory for a fiber's stack");
    mprotect(p, page, PROT_NONE);   // the guard page
    std::unique_ptr<Fiber> f(new Fiber);
    f->stack = (char *)p + page;
    if (getcontext(&f->ctx) != 0) fail("getcontext failed");
    return f.release();
}

// The running fiber stops as `why` and returns to the scheduler; it goes
// on from here when it gets its next turn (never, once DONE).
void fiber_stop(SerialState why) {
    Fiber *f = fibers.pool[cur_tid].get();
    fibers.why = why;
    asan_start_switch(why == DONE ? nullptr : &f->asan_fake,
                      fibers.host_stack, fibers.host_stack_size);
#if EMU_OWN_SWITCH
    if (fibers.own_switch) emu_switch(&f->sp, fibers.scheduler_sp);
    else
#endif
        swapcontext(&f->ctx, &fibers.scheduler);
    asan_finish_switch(f->asan_fake, nullptr, nullptr);
}

// Where every fiber starts: the kernel, for the thread of cur_tid.
void fiber_main(void) {
    asan_finish_switch(nullptr, &fibers.host_stack,
                       &fibers.host_stack_size);
    (*cur->body)();
    fiber_stop(DONE);
}

// Runs every block of L in turn, its threads as fibers taking turns in
// the order of L->serial; returns when the last block is over.
void run_fibers(Launch *L) {
    unsigned n = L->nthreads;
    while (fibers.pool.size() < n) fibers.pool.emplace_back(new_fiber());
    fibers.own_switch = own_switch();
    cur = L;
    blockDim = L->block, gridDim = L->grid;
    unsigned gx = L->grid.x, gy = L->grid.y;
    size_t blocks = (size_t)gx * gy * L->grid.z;
    for (size_t b = 0; b < blocks; b++) {
        blockIdx = {(unsigned)(b % gx), (unsigned)(b / gx % gy),
                    (unsigned)(b / ((size_t)gx * gy))};
        for (unsigned t = 0; t < n; t++) {   // each thread from the start
            Fiber *f = fibers.pool[t].get();
#if EMU_OWN_SWITCH
            if (fibers.own_switch) {
                // The stack as emu_switch leaves it: from the top (16-byte
                // aligned), a return address for fiber_main (which never
                // returns), the address emu_switch's ret goes to, and
                // zeros for the six registers it pops. fiber_main starts
                // with the stack pointer 8 bytes off 16, as after a call.
                void **top = (void **)(f->stack + FIBER_STACK);
                top[-1] = nullptr;
                top[-2] = (void *)fiber_main;
                for (int i = 3; i <= 8; i++) top[-i] = nullptr;
                f->sp = top - 8;
                continue;
            }
#endif
            f->ctx.uc_stack.ss_sp = f->stack;
            f->ctx.uc_stack.ss_size = FIBER_STACK;
            f->ctx.uc_link = nullptr;   // fiber_main never returns
            makecontext(&f->ctx, fiber_main, 0);
            // makecontext has put the stack's top in the saved registers,
            // which is all swapcontext reads. AddressSanitizer's wrapper of
            // swapcontext reads uc_stack too: where it names a stack, it
            // clears the poison of all of it (a 128 KiB shadow, given back
            // to the kernel and mapped again) on every switch, which made
            // the sanitized generation test twelve times slower (300 s
            // against 25 s). Nothing is left to clear: a kernel's frames return, and
            // the two that do not (fiber_main and fiber_stop) hold nothing
            // it poisons.
            if (EMU_ASAN) f->ctx.uc_stack.ss_size = 0;
        }
        bool over = false;
        while (!over) {
            unsigned t = serial_next(L);
            Fiber *f = fibers.pool[t].get();
            cur_tid = t;
            threadIdx = thread_index(L, t);
            asan_start_switch(&fibers.asan_fake, f->stack, FIBER_STACK);
#if EMU_OWN_SWITCH
            if (fibers.own_switch) emu_switch(&fibers.scheduler_sp, f->sp);
            else
#endif
                swapcontext(&fibers.scheduler, &f->ctx);
            asan_finish_switch(fibers.asan_fake, nullptr, nullptr);
            over = serial_stop(L, t, fibers.why);
        }
    }
}

// A barrier (AT_SYNC) or a shuffle's meeting (AT_WARP), one at a time.
void meet(Launch *L, SerialState why) {
    if (L->way == FIBERS) fiber_stop(why);
    else serial_meet(L, why);
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
    w.vals[lane] = v;
    if (L->way != THREADS) meet(L, AT_WARP);
    else w.bar.wait(L->name, "warp shuffle");
    float r = src >= 0 && src < 32 ? w.vals[src] : v;
    // nobody writes before all have read
    if (L->way != THREADS) meet(L, AT_WARP);
    else w.bar.wait(L->name, "warp shuffle");
    return r;
}

}  // namespace

// ---- the kernel language ----------------------------------------------------

void __syncthreads(void) {
    if (cur->way != THREADS) meet(cur, AT_SYNC);
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

// Whether blocks run as host threads rather than fibers: always under
// ThreadSanitizer, which sees races only between real threads; in any
// build with CUDA_EMU_THREADS=1 (to compare the two).
bool host_threads(void) {
    static const bool threads = [] {
        const char *e = getenv("CUDA_EMU_THREADS");
        return EMU_TSAN || (e && strcmp(e, "1") == 0);
    }();
    return threads;
}

}  // namespace

bool emu_host_threads(void) { return host_threads(); }

void emu_use_swapcontext(bool on) {
    std::lock_guard<std::mutex> lk(launch_mu);
    use_swapcontext = on;
}

bool emu_own_switch(void) {
    std::lock_guard<std::mutex> lk(launch_mu);
    return own_switch();
}

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

// 32-byte aligned, as the GPU's (wmma's loads need it): the buffer has
// 32 bytes more than asked for.
void *emu_dynamic_shared(void) {
    if (cur->shared.empty()) return nullptr;
    uintptr_t p = (uintptr_t)cur->shared.data();
    return (void *)((p + 31) & ~(uintptr_t)31);
}

void emu_launch(const char *name, dim3 grid, dim3 block, size_t shmem,
                const std::function<void()> &body, const char *file,
                int line) {
    if (emu_record_launch(name, grid, block, shmem, body, file, line))
        return;   // (a stream captures: see the end of this file)
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
    L.shared.resize(shmem ? shmem + 32 : 0);   // room to align
    L.warps = std::vector<Warp>((n + 31) / 32);
    L.done.reset((int)n);
    reset_block(&L);
    if (schedule < 0) schedule_from_environment();
    EmuSchedule order = (EmuSchedule)schedule;
    L.way = !host_threads()             ? FIBERS
            : order == EMU_CONCURRENT ? THREADS
                                      : SERIAL_THREADS;
    if (L.way != THREADS) {
        Serial *S = &L.serial;
        // Fibers take turns: for them "all at once, in whatever order"
        // is a shuffled order. (Lowest first, the nearest to how host
        // threads start, misses a read of a static __shared__ value that
        // an earlier block left behind, just right by chance.)
        S->order = order == EMU_CONCURRENT ? EMU_SERIAL_SHUFFLED : order;
        if (L.way == SERIAL_THREADS)
            S->cv.reset(new std::condition_variable[n]);
        S->state.resize(n);
        S->rank.resize(n);
        S->by_rank.resize(n);
        S->at_warp.resize((n + 31) / 32);
        // each launch its own shuffles, the same ones run after run
        S->rng = schedule_seed + 0x2545f4914f6cdd1dull * ++schedule_launches;
        serial_start_block(&L);
        S->running = S->by_rank[0];
    }
    if (L.way == FIBERS) run_fibers(&L);
    else run_threads(&L);
}
// ---- the runtime --------------------------------------------------------------

cudaError_t cudaMalloc(void **p, size_t bytes) {
    if (emu_capture_refuses("cudaMalloc"))
        return cudaErrorStreamCaptureUnsupported;
    size_t size = (bytes + 255) / 256 * 256;
    *p = size ? aligned_alloc(256, size) : nullptr;
    if (size && !*p) return last_error = cudaErrorMemoryAllocation;
    if (*p) memset(*p, 0xff, size);   // NaN until written, as garbage
    return cudaSuccess;
}

cudaError_t cudaFree(void *p) {
    if (emu_capture_refuses("cudaFree"))
        return cudaErrorStreamCaptureUnsupported;
    free(p);
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes,
                       cudaMemcpyKind kind) {
    if (emu_capture_refuses("cudaMemcpy"))
        return cudaErrorStreamCaptureUnsupported;
    (void)kind;
    if (bytes) memmove(dst, src, bytes);
    return cudaSuccess;
}

cudaError_t cudaMemset(void *p, int value, size_t bytes) {
    if (emu_capture_refuses("cudaMemset"))
        return cudaErrorStreamCaptureUnsupported;
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

// An event is the host clock's reading at its last record.
struct EmuEvent {
    std::chrono::steady_clock::time_point at;
    bool recorded;
};

cudaError_t cudaEventCreate(cudaEvent_t *e) {
    *e = new EmuEvent{std::chrono::steady_clock::time_point(), false};
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e) {
    if (!e) return last_error = cudaErrorInvalidValue;
    e->at = std::chrono::steady_clock::now();
    e->recorded = true;
    return cudaSuccess;
}

// Nothing to wait for: the launches before the record have finished.
cudaError_t cudaEventSynchronize(cudaEvent_t e) {
    return e ? cudaSuccess : (last_error = cudaErrorInvalidValue);
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start,
                                 cudaEvent_t end) {
    if (!start || !end || !start->recorded || !end->recorded)
        return last_error = cudaErrorInvalidValue;
    std::chrono::duration<double, std::milli> d = end->at - start->at;
    *ms = (float)d.count();
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t e) {
    delete e;
    return cudaSuccess;
}

const char *cudaGetErrorString(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorStreamCaptureUnsupported:
        return "operation not permitted when stream is capturing";
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
    if (emu_capturing()) {   // recorded, alpha and beta by value
        float al = *alpha, be = *beta;
        return emu_record_blas([=] {
            return cublasSgemm(h, ta, tb, m, n, k, &al, A, lda, B, ldb, &be,
                               C, ldc);
        });
    }
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
    if (emu_capturing()) {
        float al = *alpha, be = *beta;
        return emu_record_blas([=] {
            return cublasSgemmStridedBatched(h, ta, tb, m, n, k, &al, A, lda,
                                             strideA, B, ldb, strideB, &be,
                                             C, ldc, strideC, batch);
        });
    }
    for (int i = 0; i < batch; i++) {
        cublasStatus_t s = cublasSgemm(h, ta, tb, m, n, k, alpha,
                                       A + i * strideA, lda, B + i * strideB,
                                       ldb, beta, C + i * strideC, ldc);
        if (s != CUBLAS_STATUS_SUCCESS) return s;
    }
    return CUBLAS_STATUS_SUCCESS;
}

// The pointer batches: cuBLAS reads the tables on the device and cannot
// check where their pointers point, and its fast kernels (TF32, bf16)
// assume every matrix 16-byte aligned: a GPU then fails with a
// misaligned address, some time later. The emulation insists on it for
// every product, in every mode, and on the tables' own alignment, and
// says which pointer broke it.
static bool batch_aligned(const char *call, const void *const *arrays[3],
                          int batch) {
    for (int a = 0; a < 3; a++) {
        if ((uintptr_t)arrays[a] % 16 != 0) {
            fprintf(stderr, "emu: %s: the table of %c pointers is not "
                    "16-byte aligned\n", call, "ABC"[a]);
            return false;
        }
        for (int i = 0; i < batch; i++)
            if ((uintptr_t)arrays[a][i] % 16 != 0) {
                fprintf(stderr, "emu: %s: %c of product %d is not 16-byte "
                        "aligned\n", call, "ABC"[a], i);
                return false;
            }
    }
    return true;
}

cublasStatus_t cublasSgemmBatched(cublasHandle_t h, cublasOperation_t ta,
                                  cublasOperation_t tb, int m, int n, int k,
                                  const float *alpha,
                                  const float *const Aarray[], int lda,
                                  const float *const Barray[], int ldb,
                                  const float *beta, float *const Carray[],
                                  int ldc, int batch) {
    if (emu_capturing()) {   // (the tables are read when it runs)
        float al = *alpha, be = *beta;
        return emu_record_blas([=] {
            return cublasSgemmBatched(h, ta, tb, m, n, k, &al, Aarray, lda,
                                      Barray, ldb, &be, Carray, ldc, batch);
        });
    }
    const void *const *arrays[3] = {(const void *const *)Aarray,
                                    (const void *const *)Barray,
                                    (const void *const *)Carray};
    if (batch < 0 || !batch_aligned("cublasSgemmBatched", arrays, batch))
        return CUBLAS_STATUS_INVALID_VALUE;
    for (int i = 0; i < batch; i++) {
        cublasStatus_t s = cublasSgemm(h, ta, tb, m, n, k, alpha, Aarray[i],
                                       lda, Barray[i], ldb, beta, Carray[i],
                                       ldc);
        if (s != CUBLAS_STATUS_SUCCESS) return s;
    }
    return CUBLAS_STATUS_SUCCESS;
}

// ---- bf16 ---------------------------------------------------------------------------

// Adding 0x7fff, plus the lowest kept bit, to the float's bits carries
// into the kept 16 exactly when the dropped 16 are over half (or half,
// with the kept part odd): round to the nearest, ties to even. A carry
// out of the mantissa moves the exponent up, as it should, and the
// largest floats round to infinity, as on the GPU.
__nv_bfloat16 __float2bfloat16(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    __nv_bfloat16 h;
    if ((u & 0x7fffffffu) > 0x7f800000u) {   // NaN: the GPU's quiet NaN
        h.x = 0x7fff;
        return h;
    }
    u += 0x7fffu + ((u >> 16) & 1u);
    h.x = (uint16_t)(u >> 16);
    return h;
}

float __bfloat162float(__nv_bfloat16 h) {
    uint32_t u = (uint32_t)h.x << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

// A column-major operand of `rows` rows and `cols` columns, leading
// dimension ld, widened to fp32: its whole extent, (cols - 1) * ld + rows
// values (exact: every bf16 is a float).
static float *widen(const void *p, cudaDataType t, int rows, int cols,
                    int ld, long long extra) {
    size_t n = rows > 0 && cols > 0
                   ? (size_t)(cols - 1) * ld + rows + (size_t)extra : 0;
    float *w = (float *)malloc((n ? n : 1) * sizeof *w);
    if (!w) abort();
    for (size_t i = 0; i < n; i++)
        w[i] = t == CUDA_R_16BF ? __bfloat162float(((const __nv_bfloat16 *)p)[i])
                                : ((const float *)p)[i];
    return w;
}

cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
    int n, int k, const void *alpha, const void *A, cudaDataType Atype,
    int lda, long long strideA, const void *B, cudaDataType Btype, int ldb,
    long long strideB, const void *beta, void *C, cudaDataType Ctype,
    int ldc, long long strideC, int batch, cublasComputeType_t compute,
    cublasGemmAlgo_t algo) {
    if (emu_capturing()) {   // (compute 32F: alpha and beta are floats)
        float al = *(const float *)alpha, be = *(const float *)beta;
        return emu_record_blas([=] {
            return cublasGemmStridedBatchedEx(h, ta, tb, m, n, k, &al, A,
                                              Atype, lda, strideA, B, Btype,
                                              ldb, strideB, &be, C, Ctype,
                                              ldc, strideC, batch, compute,
                                              algo);
        });
    }
    (void)algo;
    bool types_ok = (Atype == CUDA_R_32F || Atype == CUDA_R_16BF)
                    && (Btype == CUDA_R_32F || Btype == CUDA_R_16BF)
                    && Ctype == CUDA_R_32F && compute == CUBLAS_COMPUTE_32F;
    if (!types_ok || batch < 0 || strideA < 0 || strideB < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (m == 0 || n == 0 || batch == 0) return CUBLAS_STATUS_SUCCESS;
    int ar = ta == CUBLAS_OP_N ? m : k, ac = ta == CUBLAS_OP_N ? k : m;
    int br = tb == CUBLAS_OP_N ? k : n, bc = tb == CUBLAS_OP_N ? n : k;
    float *a = widen(A, Atype, ar, ac, lda, strideA * (batch - 1));
    float *b = widen(B, Btype, br, bc, ldb, strideB * (batch - 1));
    cublasStatus_t s = cublasSgemmStridedBatched(
        h, ta, tb, m, n, k, (const float *)alpha, a, lda, strideA, b, ldb,
        strideB, (const float *)beta, (float *)C, ldc, strideC, batch);
    free(a);
    free(b);
    return s;
}

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta,
                            cublasOperation_t tb, int m, int n, int k,
                            const void *alpha, const void *A,
                            cudaDataType Atype, int lda, const void *B,
                            cudaDataType Btype, int ldb, const void *beta,
                            void *C, cudaDataType Ctype, int ldc,
                            cublasComputeType_t compute,
                            cublasGemmAlgo_t algo) {
    return cublasGemmStridedBatchedEx(h, ta, tb, m, n, k, alpha, A, Atype,
                                      lda, 0, B, Btype, ldb, 0, beta, C,
                                      Ctype, ldc, 0, 1, compute, algo);
}

cublasStatus_t cublasGemmBatchedEx(
    cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
    int n, int k, const void *alpha, const void *const Aarray[],
    cudaDataType Atype, int lda, const void *const Barray[],
    cudaDataType Btype, int ldb, const void *beta, void *const Carray[],
    cudaDataType Ctype, int ldc, int batch, cublasComputeType_t compute,
    cublasGemmAlgo_t algo) {
    if (emu_capturing()) {
        float al = *(const float *)alpha, be = *(const float *)beta;
        return emu_record_blas([=] {
            return cublasGemmBatchedEx(h, ta, tb, m, n, k, &al, Aarray, Atype,
                                       lda, Barray, Btype, ldb, &be, Carray,
                                       Ctype, ldc, batch, compute, algo);
        });
    }
    const void *const *arrays[3] = {Aarray, Barray,
                                    (const void *const *)Carray};
    if (batch < 0 || !batch_aligned("cublasGemmBatchedEx", arrays, batch))
        return CUBLAS_STATUS_INVALID_VALUE;
    for (int i = 0; i < batch; i++) {
        cublasStatus_t s = cublasGemmEx(h, ta, tb, m, n, k, alpha, Aarray[i],
                                        Atype, lda, Barray[i], Btype, ldb,
                                        beta, Carray[i], Ctype, ldc, compute,
                                        algo);
        if (s != CUBLAS_STATUS_SUCCESS) return s;
    }
    return CUBLAS_STATUS_SUCCESS;
}

// ==== the warp matrix API: tensor cores (emu.h) =====================

// Round to the nearest half, ties to even. Normal halves take the top 10
// of the float's 23 mantissa bits, rounded on the 13 dropped ones (a
// carry into the exponent is right, up to infinity); below 2^-14 the
// half is subnormal, an integer count of 2^-24, which rint (ties to even
// in the default rounding mode) gives exactly from |f| * 2^24.
__half __float2half(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    __half h;
    if (a > 0x7f800000u) h.x = 0x7e00;                   // NaN
    else if (a >= 0x477ff000u) h.x = sign | 0x7c00;      // |f| >= 65520: inf
    else if (a < 0x38800000u)                            // |f| < 2^-14
        h.x = sign | (uint16_t)rintf(fabsf(f) * 16777216.0f);
    else {
        uint32_t bits = ((a >> 23) - 112) << 10 | (a & 0x7fffffu) >> 13;
        uint32_t rest = a & 0x1fffu;
        if (rest > 0x1000u || (rest == 0x1000u && (bits & 1u))) bits++;
        h.x = sign | (uint16_t)bits;
    }
    return h;
}

float __half2float(__half h) {
    uint32_t sign = (uint32_t)(h.x & 0x8000u) << 16;
    uint32_t e = (h.x >> 10) & 0x1fu, m = h.x & 0x3ffu, u;
    if (e == 0) {   // zero or subnormal: m 2^-24
        float f = ldexpf((float)m, -24);
        return h.x & 0x8000u ? -f : f;
    }
    if (e == 31) u = sign | 0x7f800000u | m << 13;   // inf, NaN
    else u = sign | (e + 112) << 23 | m << 13;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

namespace {

//> wmma-layout
// The fragment layout of emu.h: slot s of lane l holds the tile's
// element at position 16 r + c = (37 (32 s + l) + 11) mod 256. 37 is odd,
// so this is a one-to-one map of the 256 (lane, slot) pairs onto the 256
// positions; OWNER inverts it.
int wmma_position(int lane, int s) {
    return (37 * (32 * s + lane) + 11) & 255;
}
//< wmma-layout

struct Owner {
    unsigned char lane[256], slot[256];
    Owner() {
        for (int l = 0; l < 32; l++)
            for (int s = 0; s < 8; s++) {
                int p = wmma_position(l, s);
                lane[p] = (unsigned char)l, slot[p] = (unsigned char)s;
            }
    }
};
const Owner OWNER;

// Element (r, c) of a fragment given every lane's 8 values of it, at
// offset `which` (0 A, 8 B, 16 C) of each lane's row of w.frag.
float wmma_at(const Warp &w, int which, int r, int c) {
    int p = 16 * r + c;
    return w.frag[OWNER.lane[p]][which + OWNER.slot[p]];
}

// The warp's meeting, as a shuffle's.
void warp_meet(const char *what) {
    Launch *L = cur;
    if (L->nthreads % 32 != 0)
        fail("kernel %s: %s in a block of %u threads, which is not a whole "
             "number of warps", L->name, what, L->nthreads);
    if (L->way != THREADS) meet(L, AT_WARP);
    else L->warps[cur_tid / 32].bar.wait(L->name, what);
}

}  // namespace

void __syncwarp(unsigned mask) {
    if (mask != 0xffffffffu)
        fail("kernel %s: __syncwarp with mask %#x; the emulator takes whole "
             "warps only (0xffffffff)", cur->name, mask);
    warp_meet("__syncwarp");
}

void emu_wmma_where(int s, int *r, int *c) {
    int p = wmma_position((int)(cur_tid % 32), s);
    *r = p / 16, *c = p % 16;
}

void emu_wmma_check(const char *what, const void *p, unsigned ldm,
                    size_t elem) {
    if ((uintptr_t)p % 32 != 0)
        fail("kernel %s: %s at %p, which is not 32-byte aligned", cur->name,
             what, p);
    if (ldm < 16 || (ldm * elem) % 16 != 0)
        fail("kernel %s: %s with a leading dimension of %u elements: at "
             "least 16 and a multiple of 16 bytes", cur->name, what, ldm);
}

// Each lane puts its fragments on the warp's table; once all have, each
// computes its own 8 elements of D from the table; nobody writes the
// table again before all have read it.
void emu_wmma_mma(float d[8], const float a[8], const float b[8],
                  const float c[8]) {
    Warp &w = cur->warps[cur_tid / 32];
    int lane = (int)(cur_tid % 32);
    for (int s = 0; s < 8; s++)
        w.frag[lane][s] = a[s], w.frag[lane][8 + s] = b[s],
        w.frag[lane][16 + s] = c[s];
    warp_meet("mma_sync");
    for (int s = 0; s < 8; s++) {
        int r, col;
        emu_wmma_where(s, &r, &col);
        float sum = wmma_at(w, 16, r, col);
        for (int k = 0; k < 16; k++)
            sum += wmma_at(w, 0, r, k) * wmma_at(w, 8, k, col);
        d[s] = sum;
    }
    warp_meet("mma_sync");
}
// ==== end of the warp matrix API ===========================================
// ---- streams and graphs (chapter 8's --graph) -------------------------
// A recording is a list of steps, each a launch (its kernel with the
// arguments bound, as LAUNCH's lambda holds them), a cuBLAS call (a
// closure over its arguments) or a memset. One stream captures at a
// time, from the thread that began it; the graph runs its steps in
// order, each as the emulation runs it directly.
struct EmuStream {
    int unused;
};

struct EmuStep {
    // a launch
    const char *name = nullptr;
    dim3 grid, block;
    size_t shmem = 0;
    std::function<void()> body;
    const char *file = nullptr;
    int line = 0;
    // or a cuBLAS call
    std::function<cublasStatus_t()> blas;
    // or a memset
    void *p = nullptr;
    int value = 0;
    size_t bytes = 0;
};

struct EmuGraph {
    std::vector<EmuStep> steps;
};

struct EmuGraphExec {
    std::vector<EmuStep> steps;
};

static EmuGraph *capturing;   // the recording in progress, or none

bool emu_capturing(void) { return capturing != nullptr; }

bool emu_record_launch(const char *name, dim3 grid, dim3 block,
                       size_t shmem, const std::function<void()> &body,
                       const char *file, int line) {
    if (!capturing) return false;
    EmuStep st;
    st.name = name, st.grid = grid, st.block = block, st.shmem = shmem;
    st.body = body, st.file = file, st.line = line;
    capturing->steps.push_back(st);
    return true;
}

cublasStatus_t emu_record_blas(std::function<cublasStatus_t()> call) {
    EmuStep st;
    st.blas = std::move(call);
    capturing->steps.push_back(st);
    return CUBLAS_STATUS_SUCCESS;
}

bool emu_capture_refuses(const char *call) {
    if (!capturing) return false;
    fprintf(stderr, "cuda emulator: %s while a stream captures a graph: "
            "refused, as on the GPU\n", call);
    return true;
}

cudaError_t cudaStreamCreate(cudaStream_t *s) {
    *s = new EmuStream();
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t s) {
    delete s;
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s) {
    (void)s;   // every launch has finished when it returns
    return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes,
                            cudaStream_t s) {
    (void)s;
    if (capturing) {
        EmuStep st;
        st.p = p, st.value = value, st.bytes = bytes;
        capturing->steps.push_back(st);
        return cudaSuccess;
    }
    if (bytes) memset(p, value, bytes);
    return cudaSuccess;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t s,
                                   cudaStreamCaptureMode mode) {
    (void)mode;
    if (!s || capturing) return last_error = cudaErrorInvalidValue;
    capturing = new EmuGraph();
    return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *graph) {
    if (!s || !capturing) return last_error = cudaErrorInvalidValue;
    *graph = capturing;
    capturing = nullptr;
    return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph,
                                 unsigned long long flags) {
    (void)flags;
    *exec = new EmuGraphExec();
    (*exec)->steps = graph->steps;   // the graph may be destroyed now
    return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s) {
    (void)s;
    if (capturing) return last_error = cudaErrorStreamCaptureUnsupported;
    for (const EmuStep &st : exec->steps) {
        if (st.body) {
            emu_launch(st.name, st.grid, st.block, st.shmem, st.body,
                       st.file, st.line);
        } else if (st.blas) {
            if (st.blas() != CUBLAS_STATUS_SUCCESS)
                return last_error = cudaErrorInvalidValue;
        } else if (st.bytes) {
            memset(st.p, st.value, st.bytes);
        }
        if (last_error != cudaSuccess) return last_error;
    }
    return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
    delete graph;
    return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
    delete exec;
    return cudaSuccess;
}

cublasStatus_t cublasSetStream(cublasHandle_t h, cudaStream_t s) {
    (void)h, (void)s;
    return CUBLAS_STATUS_SUCCESS;
}
