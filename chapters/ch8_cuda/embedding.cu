// embedding.cu - chapter 5's embedding layer on the GPU.
//
// The forward pass is a gather: one thread per output float. The
// backward pass is the matching scatter, and there two positions with
// the same id add into the same row of dwte. Letting every position add
// with atomicAdd would work, but float additions in the order threads
// happen to arrive round differently each run. So no thread here adds
// into a float another thread writes, in two ways:
//
//  - A small vocabulary (up to EMB_FAST_VOCAB ids, as chapter 1's
//    characters) takes the chunked column sums of linear.cu: the B*T
//    positions are cut into chunks, and warp (id, chunk) of a block
//    walks its chunk in order, summing scale * dout[r, c] over the
//    positions r whose id is its own, one channel c per lane, into a
//    register; the chunks' sums, V * C of them per chunk, are then added
//    in chunk order (column_sums_finish_cuda). Every warp reads every id
//    of its chunk, but those are few and stay in cache, and the lanes
//    read them at one address (one load for the warp).
//  - A larger one falls back to a thread per channel c and id bucket (id
//    % EMB_ID_BUCKETS) that walks all B*T positions in order, adding into
//    dwte[idx[r], c] directly: correct for any vocabulary, but slow (a
//    production kernel would sort the positions by id first).
//
// The sums run in an order fixed by the sizes, so the result is the same
// every run. The GPU needs the vocabulary size V to choose and to size
// the chunks' sums, where the CPU's loop never does: it is the last
// argument of embedding_backward_cuda. The position gradient has no
// collisions across t, so it gets one thread per (t, c), which sums over
// b in order.
#include "cuda_rt.h"

extern "C" {
#include "embedding.cuh"
#include "linear.cuh"
}

#define EMB_THREADS 256        // threads per block of the gather
#define EMB_GRAD_THREADS 64    // threads (channels) per block of dwte
#define EMB_ID_BUCKETS 16      // id buckets of dwte: blockIdx.y
#define EMB_FAST_VOCAB 256     // the most ids the chunked sums take
#define EMB_IDS 8              // ids (warps) per block of the chunked sums

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

// The chunks' sums of dwte: warp w of block (tile, group, chunk) owns id
// v = group * EMB_IDS + w, lane x channel c = tile * 32 + x, and writes
// part[chunk, v, c] = scale * the sum of dout[r, c] over the rows r of
// the chunk with idx[r] == v, in order of r (0 when there is none).
__global__ void embedding_wte_partial_kernel(float *part, const float *dout,
                                             const int *idx, float scale,
                                             int N, int C, int V,
                                             int rows) {
    int c = blockIdx.x * 32 + threadIdx.x;
    int v = blockIdx.y * EMB_IDS + threadIdx.y;
    int r0 = blockIdx.z * rows;
    int r1 = r0 + rows < N ? r0 + rows : N;
    if (c >= C || v >= V) return;
    float sum = 0.0f;
    for (int r = r0; r < r1; r++)
        if (idx[r] == v) sum += dout[(size_t)r * C + c];
    part[((size_t)blockIdx.z * V + v) * C + c] = scale * sum;
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
                             int C, int V) {
    if (B <= 0 || T <= 0 || C <= 0 || V <= 0) return;
    int N = B * T;
    if (V <= EMB_FAST_VOCAB) {
        // dwte is V * C columns of chunk sums, as a bias gradient is C
        ColumnChunks k = column_chunks(N);
        float *part = column_scratch((size_t)k.chunks * V * C);
        LAUNCH(embedding_wte_partial_kernel,
               dim3(ceil_div((size_t)C, 32), ceil_div((size_t)V, EMB_IDS),
                    k.chunks),
               dim3(32, EMB_IDS), 0, part, dout, idx, scale, N, C, V,
               k.rows);
        column_sums_finish_cuda(dwte, part, k.chunks, V * C);
    } else {
        LAUNCH(embedding_wte_grad_kernel,
               dim3(ceil_div((size_t)C, EMB_GRAD_THREADS), EMB_ID_BUCKETS),
               EMB_GRAD_THREADS, 0, dwte, dout, idx, scale, N, C);
    }
    if (dwpos)
        LAUNCH(embedding_pos_grad_kernel,
               ceil_div((size_t)T * C, EMB_THREADS), EMB_THREADS, 0, dwpos,
               dout, B, T, C);
}
