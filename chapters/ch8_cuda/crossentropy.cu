// crossentropy.cu - chapter 5's loss on the GPU: one block per row of
// logits, whose threads share the row's logsumexp.
//
// Each thread walks its share of the row once, keeping an "online"
// logsumexp: the largest logit m seen so far and s = sum of exp(x - m)
// over what it has seen, rescaled whenever m grows. No exp ever sees a
// positive argument, so logits of 1e3 are as safe as logits of 1. The
// threads' (m, s) pairs are then merged through warp shuffles and shared
// memory, and every thread ends with the whole row's m and s:
//
//   loss = logsumexp - x_target = (m - x_target) + log(s)
//
// written that way because m - x_target is (nearly) exact and log(s) is
// small, where m + log(s) would first round the logsumexp to a float.
//
// How it differs from the CPU: the forward pass returns the mean to the
// host, which needs the rows' losses added up. They are not added with
// float atomics (whose order, and so whose last bits, change run to
// run): the row kernel writes each row's loss to a scratch array, and a
// second kernel of one block adds them in double in a fixed order (its
// thread i takes rows i, i + 256, ..., then a tree in shared memory), the
// same order every run. The scratch array is allocated on the first call
// and grown when a call has more rows; it lives until the program ends.
#include "cuda_rt.h"

#include <math.h>

extern "C" {
#include "crossentropy.cuh"
}

#define XENT_MAX_THREADS 256            // threads per row, at most
#define XENT_MAX_WARPS (XENT_MAX_THREADS / 32)
#define XENT_SUM_THREADS 256            // the one block of the mean

// Merges the pair (m2, s2) into (m, s): two logsumexps of parts of a row
// become the logsumexp of both, with the larger maximum kept. An empty
// part is (-inf, 0). The result is the same bits whichever pair comes
// first (the one sum is commutative), so all lanes of a butterfly agree.
__device__ static inline void lse_merge(float &m, float &s, float m2,
                                        float s2) {
    if (m2 > m) {
        s = s * expf(m - m2) + s2;
        m = m2;
    } else if (m2 > -INFINITY) {
        s += s2 * expf(m2 - m);
    }
}

//> xent-cuda
// The (m, s) of the whole row, in every thread of the block: each thread
// takes the logits tid, tid + blockDim, ... (neighbours read neighbouring
// floats), the 32 lanes of a warp merge theirs in a butterfly, and then
// every thread merges the warps' pairs from shared memory in warp order.
__device__ static void row_logsumexp(const float *row, int V, float *m_out,
                                     float *s_out) {
    __shared__ float warp_m[XENT_MAX_WARPS], warp_s[XENT_MAX_WARPS];
    float m = -INFINITY, s = 0.0f;
    for (int v = threadIdx.x; v < V; v += blockDim.x)
        lse_merge(m, s, row[v], 1.0f);
    for (int o = 16; o > 0; o >>= 1) {
        float m2 = __shfl_xor_sync(0xffffffffu, m, o);
        float s2 = __shfl_xor_sync(0xffffffffu, s, o);
        lse_merge(m, s, m2, s2);
    }
    int warp = threadIdx.x / 32, warps = blockDim.x / 32;
    if (threadIdx.x % 32 == 0) warp_m[warp] = m, warp_s[warp] = s;
    __syncthreads();
    m = warp_m[0], s = warp_s[0];
    for (int w = 1; w < warps; w++) lse_merge(m, s, warp_m[w], warp_s[w]);
    *m_out = m, *s_out = s;
}

// Block n: the loss of row n into row_loss[n]; nothing for a row whose
// target is -1 (the sum skips it).
__global__ void xent_forward_kernel(float *row_loss, const float *logits,
                                    const int *targets, int V) {
    int n = blockIdx.x, t = targets[n];
    if (t < 0) return;   // the whole block leaves: no barrier is missed
    const float *row = logits + (size_t)n * V;
    float m, s;
    row_logsumexp(row, V, &m, &s);
    if (threadIdx.x == 0) row_loss[n] = (m - row[t]) + logf(s);
}

// Block n: dlogits[n, v] = scale * exp(x_v - m) / s, minus scale at the
// target; a thread writes only the logits it read itself, so dlogits may
// be logits.
__global__ void xent_backward_kernel(float *dlogits, const float *logits,
                                     const int *targets, int V,
                                     float scale) {
    int n = blockIdx.x, t = targets[n];
    const float *row = logits + (size_t)n * V;
    float *d = dlogits + (size_t)n * V;
    if (t < 0) {
        for (int v = threadIdx.x; v < V; v += blockDim.x) d[v] = 0.0f;
        return;
    }
    float m, s;
    row_logsumexp(row, V, &m, &s);
    float coef = scale / s;
    for (int v = threadIdx.x; v < V; v += blockDim.x) {
        float g = coef * expf(row[v] - m);
        if (v == t) g -= scale;   // minus the one-hot
        d[v] = g;
    }
}
//< xent-cuda

// What the sum kernel hands back to the host in one copy.
struct XentSum {
    double total;   // the losses of the rows with a target
    int count;      // how many rows have one
};

// One block: the rows' losses added in double and the rows with a target
// counted, in an order fixed by N alone.
__global__ void xent_sum_kernel(XentSum *out, const float *row_loss,
                                const int *targets, int N) {
    __shared__ double total[XENT_SUM_THREADS];
    __shared__ int count[XENT_SUM_THREADS];
    int tid = threadIdx.x;
    double sum = 0;
    int c = 0;
    for (int n = tid; n < N; n += XENT_SUM_THREADS)
        if (targets[n] >= 0) sum += row_loss[n], c++;
    total[tid] = sum, count[tid] = c;
    __syncthreads();
    for (int half = XENT_SUM_THREADS / 2; half > 0; half /= 2) {
        if (tid < half) {
            total[tid] += total[tid + half];
            count[tid] += count[tid + half];
        }
        __syncthreads();
    }
    if (tid == 0) out->total = total[0], out->count = count[0];
}

// The threads for a row of V logits: whole warps, enough for one logit
// each up to XENT_MAX_THREADS (65 characters take 3 warps, not 8).
static unsigned xent_threads(int V) {
    unsigned warps = ceil_div((size_t)V, 32);
    if (warps < 1) warps = 1;
    if (warps > XENT_MAX_WARPS) warps = XENT_MAX_WARPS;
    return 32 * warps;
}

// The scratch of the forward pass (see the top of the file).
static float *row_loss;
static size_t row_loss_cap;
static XentSum *sum_dev;

void crossentropy_forward_launch_cuda(const float *logits,
                                      const int *targets, int N, int V) {
    if (N <= 0) return;
    if ((size_t)N > row_loss_cap) {
        cuda_free(row_loss);
        row_loss = cuda_alloc_floats((size_t)N);
        row_loss_cap = (size_t)N;
    }
    if (!sum_dev) CUDA_CHECK(cudaMalloc((void **)&sum_dev, sizeof *sum_dev));
    LAUNCH(xent_forward_kernel, (unsigned)N, xent_threads(V), 0, row_loss,
           logits, targets, V);
    LAUNCH(xent_sum_kernel, 1, XENT_SUM_THREADS, 0, sum_dev, row_loss,
           targets, N);
}

float crossentropy_forward_read_cuda(int N, int *n_valid) {
    XentSum sum = {0.0, 0};
    if (N > 0)
        CUDA_CHECK(cudaMemcpy(&sum, sum_dev, sizeof sum,
                              cudaMemcpyDeviceToHost));
    if (n_valid) *n_valid = sum.count;
    return sum.count ? (float)(sum.total / sum.count) : 0.0f;
}

float crossentropy_forward_cuda(const float *logits, const int *targets,
                                int N, int V, int *n_valid) {
    crossentropy_forward_launch_cuda(logits, targets, N, V);
    return crossentropy_forward_read_cuda(N, n_valid);
}

void crossentropy_backward_cuda(float *dlogits, const float *logits,
                                const int *targets, int N, int V,
                                float scale) {
    if (N <= 0 || V <= 0) return;
    LAUNCH(xent_backward_kernel, (unsigned)N, xent_threads(V), 0, dlogits,
           logits, targets, V, scale);
}
