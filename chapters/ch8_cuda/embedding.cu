// embedding.cu - chapter 5's embedding layer on the GPU.
//
// The forward pass is a gather: one thread per output float. The
// backward pass is the matching scatter, and there two positions with
// the same id add into the same row of dwte. Letting every position add
// with atomicAdd would work, but float additions in the order threads
// happen to arrive round differently each run. Here a thread owns a
// part of dwte instead: one channel c of the ids in one bucket (id %
// EMB_ID_BUCKETS), and walks the B*T positions in order, adding
// scale * dout[r, c] into dwte[idx[r], c] where idx[r] is in its bucket.
// No two threads ever write the same float, and every row of dwte is
// summed in the CPU's order, so the result is the same every run. A
// warp's 32 threads take 32 neighbouring channels of the same bucket: at
// each step they read one id (the same address: one load for the warp)
// and, when it is theirs, 32 neighbouring floats of dout and of dwte.
// Every thread reads all B*T ids, which are few and stay in cache; the
// buckets multiply the threads (C alone would leave most of a big GPU
// idle). A production kernel would rather sort the positions by id on
// the GPU first and give each id its own threads. The position gradient
// has no collisions across t, so it gets one thread per (t, c), which
// sums over b in order.
#include "cuda_rt.h"

extern "C" {
#include "embedding.cuh"
}

#define EMB_THREADS 256        // threads per block of the gather
#define EMB_GRAD_THREADS 64    // threads (channels) per block of dwte
#define EMB_ID_BUCKETS 16      // id buckets of dwte: blockIdx.y

//> embedding-cuda
// out[b, t, c] = scale * wte[idx[b, t], c] + pos[t, c]: thread i writes
// float i of out, so a warp reads a row segment of wte and of pos.
__global__ void embedding_forward_kernel(float *out, const int *idx,
                                         const float *wte, float scale,
                                         const float *pos, int T, int C,
                                         size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    size_t r = i / C;           // the position b * T + t
    int c = (int)(i % C), t = (int)(r % T);
    out[i] = scale * wte[(size_t)idx[r] * C + c] + pos[(size_t)t * C + c];
}

// dwte[idx[r], c] += scale * dout[r, c] for r = 0, 1, ..., N-1 in order,
// for the ids of bucket blockIdx.y only: thread (c, bucket) owns column
// c of those rows of dwte, so repeated ids need no atomics.
__global__ void embedding_wte_grad_kernel(float *dwte, const float *dout,
                                          const int *idx, float scale,
                                          int N, int C) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int bucket = blockIdx.y;
    if (c >= C) return;
    for (int r = 0; r < N; r++) {
        int id = idx[r];
        if (id % EMB_ID_BUCKETS == bucket)
            dwte[(size_t)id * C + c] += scale * dout[(size_t)r * C + c];
    }
}

// dwpos[t, c] += sum over b of dout[b, t, c], in order of b: thread i
// owns float i = t * C + c of dwpos.
__global__ void embedding_pos_grad_kernel(float *dwpos, const float *dout,
                                          int B, int T, int C) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t tc = (size_t)T * C;
    if (i >= tc) return;
    float sum = dwpos[i];
    for (int b = 0; b < B; b++) sum += dout[(size_t)b * tc + i];
    dwpos[i] = sum;
}
//< embedding-cuda

void embedding_forward_cuda(float *out, const int *idx, const float *wte,
                            float scale, const float *pos, int B, int T,
                            int C) {
    size_t n = (size_t)B * T * C;
    if (n == 0) return;
    LAUNCH(embedding_forward_kernel, ceil_div(n, EMB_THREADS), EMB_THREADS,
           0, out, idx, wte, scale, pos, T, C, n);
}

void embedding_backward_cuda(float *dwte, float *dwpos, const float *dout,
                             const int *idx, float scale, int B, int T,
                             int C) {
    if (B <= 0 || T <= 0 || C <= 0) return;
    LAUNCH(embedding_wte_grad_kernel,
           dim3(ceil_div((size_t)C, EMB_GRAD_THREADS), EMB_ID_BUCKETS),
           EMB_GRAD_THREADS, 0, dwte, dout, idx, scale, B * T, C);
    if (dwpos)
        LAUNCH(embedding_pos_grad_kernel,
               ceil_div((size_t)T * C, EMB_THREADS), EMB_THREADS, 0, dwpos,
               dout, B, T, C);
}
