// layernorm.cu - chapter 4's LayerNorm on the GPU.
//
// Every row of C channels is normalised on its own, so the forward pass,
// and the backward pass's dinp, give one warp (32 threads) to each row:
// the lanes walk the row 32 floats apart, so a warp reads 32 neighbouring
// floats at a time (one coalesced access), and the row's sums meet
// through warp shuffles, with no shared memory and no __syncthreads.
//
// dweight and dbias are sums down the columns, over all B*T rows. Adding
// into them with float atomics from every row would give a different
// rounding each run, so they take linear.cu's column sums instead (the
// bias's gradient is the same kind of sum): the rows are cut into
// chunks, a block sums its chunk for 32 columns into a scratch buffer,
// and then one thread per column adds up the chunks' partial sums in
// chunk order. The chunks depend only on B*T, so the result is the same
// every run. The scratch buffer is linear.cu's, kept for the program's
// life (which is why layernorm_backward_cuda is not reentrant).
//
// The CPU accumulates its sums in double; here they are fp32 (doubles
// are slow on most GPUs), which for a row of a few thousand channels
// costs about 1e-6 relative.
#include "cuda_rt.h"

#ifdef __CUDACC__
#include <cuda_bf16.h>
#endif

extern "C" {
#include "layernorm.cuh"
#include "linear.cuh"
}

typedef __nv_bfloat16 bf16;

#define LN_WARPS 4                 // rows (warps) per block: 128 threads
#define LN_TILE 32                 // columns per block of the column sums
#define LN_LANES 8                 // row lanes per column: 256 threads
#define FULL_MASK 0xffffffffu

// The sum of v over the 32 lanes of the warp, in every lane: each step
// adds the value of the lane `offset` away, halving the offset (the
// "butterfly"), so after five steps every lane holds the whole sum.
__device__ static inline float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_xor_sync(FULL_MASK, v, offset);
    return v;
}

//> layernorm-cuda
// Warp w of block b normalises row r = b * LN_WARPS + w. Two passes over
// the row, as the CPU: the mean first, then the squares of x - mean (no
// cancellation, as sum(x^2) - mean^2 would suffer). With out16 (bf16
// mode), the output rounded to bf16 goes there too.
__global__ void layernorm_forward_kernel(float *out, bf16 *out16,
                                         float *mean, float *rstd,
                                         const float *inp,
                                         const float *weight,
                                         const float *bias, int N, int C) {
    int lane = threadIdx.x % 32;
    int r = blockIdx.x * LN_WARPS + threadIdx.x / 32;
    if (r >= N) return;   // the whole warp leaves together
    const float *x = inp + (size_t)r * C;
    float sum = 0.0f;
    for (int i = lane; i < C; i += 32) sum += x[i];
    float m = warp_sum(sum) / C;
    float sq = 0.0f;
    for (int i = lane; i < C; i += 32) sq += (x[i] - m) * (x[i] - m);
    float s = rsqrtf(warp_sum(sq) / C + LAYERNORM_EPS);   // biased variance
    float *y = out + (size_t)r * C;
    for (int i = lane; i < C; i += 32) {
        float xhat = (x[i] - m) * s;
        y[i] = xhat * weight[i] + (bias ? bias[i] : 0.0f);
        if (out16) out16[(size_t)r * C + i] = __float2bfloat16(y[i]);
    }
    if (lane == 0) {   // kept for the backward pass
        mean[r] = m;
        rstd[r] = s;
    }
}

// dinp of row r, one warp per row as the forward pass. With g = weight *
// dout and xhat = (x - mean) * rstd,
//   dinp = skip + rstd * (g - mean(g) - xhat * mean(g * xhat)),
// the two means being the row's two warp sums. skip is dinp itself to
// add into it, NULL to set it, or another array: the gradient that
// reaches the input by a residual's skip (block.cu's fused form).
__global__ void layernorm_backward_kernel(float *dinp, const float *skip,
                                          const float *dout,
                                          const float *inp,
                                          const float *weight,
                                          const float *mean,
                                          const float *rstd, int N, int C) {
    int lane = threadIdx.x % 32;
    int r = blockIdx.x * LN_WARPS + threadIdx.x / 32;
    if (r >= N) return;
    const float *x = inp + (size_t)r * C, *dy = dout + (size_t)r * C;
    float m = mean[r], s = rstd[r];
    float sum_g = 0.0f, sum_gx = 0.0f;
    for (int i = lane; i < C; i += 32) {
        float g = weight[i] * dy[i];
        sum_g += g;
        sum_gx += g * ((x[i] - m) * s);
    }
    float a = warp_sum(sum_g) / C, b = warp_sum(sum_gx) / C;
    float *dx = dinp + (size_t)r * C;
    for (int i = lane; i < C; i += 32) {
        float xhat = (x[i] - m) * s;
        float g = s * (weight[i] * dy[i] - a - xhat * b);
        dx[i] = skip ? skip[(size_t)r * C + i] + g : g;
    }
}

// The first half of dweight and dbias: block (tile, chunk) sums rows
// [chunk * rows, (chunk + 1) * rows) of LN_TILE columns. Thread (tx, ty)
// owns column tile * LN_TILE + tx and every LN_LANES-th row from ty, so a
// warp reads 32 neighbouring floats of one row; the LN_LANES partial sums
// of a column then meet in shared memory, added in a fixed order.
__global__ void layernorm_param_partial_kernel(float *part_w, float *part_b,
                                               const float *dout,
                                               const float *inp,
                                               const float *mean,
                                               const float *rstd, int N,
                                               int C, int rows) {
    __shared__ float sw[LN_LANES][LN_TILE], sb[LN_LANES][LN_TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int c = blockIdx.x * LN_TILE + tx;
    int r0 = blockIdx.y * rows;
    int r1 = r0 + rows < N ? r0 + rows : N;
    float dw = 0.0f, db = 0.0f;
    if (c < C) {
        for (int r = r0 + ty; r < r1; r += LN_LANES) {
            float dy = dout[(size_t)r * C + c];
            float xhat = (inp[(size_t)r * C + c] - mean[r]) * rstd[r];
            dw += dy * xhat;
            db += dy;
        }
    }
    sw[ty][tx] = dw;
    sb[ty][tx] = db;
    __syncthreads();   // every lane's sum is in shared memory
    if (ty == 0 && c < C) {
        for (int k = 1; k < LN_LANES; k++) {
            dw += sw[k][tx];
            db += sb[k][tx];
        }
        part_w[(size_t)blockIdx.y * C + c] = dw;
        part_b[(size_t)blockIdx.y * C + c] = db;
    }
}
//< layernorm-cuda

void layernorm_forward_cuda(float *out, float *mean, float *rstd,
                            const float *inp, const float *weight,
                            const float *bias, int B, int T, int C) {
    int N = B * T;
    if (N <= 0 || C <= 0) return;
    LAUNCH(layernorm_forward_kernel, ceil_div((size_t)N, LN_WARPS),
           LN_WARPS * 32, 0, out, (bf16 *)NULL, mean, rstd, inp, weight,
           bias, N, C);
}

void layernorm_forward_copy_cuda(float *out, uint16_t *out16, float *mean,
                                 float *rstd, const float *inp,
                                 const float *weight, const float *bias,
                                 int B, int T, int C) {
    int N = B * T;
    if (N <= 0 || C <= 0) return;
    LAUNCH(layernorm_forward_kernel, ceil_div((size_t)N, LN_WARPS),
           LN_WARPS * 32, 0, out, (bf16 *)out16, mean, rstd, inp, weight,
           bias, N, C);
}

// Every backward form: dinp = skip + its gradient (skip NULL: set).
static void layernorm_backward_any(float *dinp, const float *skip,
                                   float *dweight, float *dbias,
                                   const float *dout, const float *inp,
                                   const float *weight, const float *mean,
                                   const float *rstd, int B, int T, int C) {
    int N = B * T;
    if (N <= 0 || C <= 0) return;
    LAUNCH(layernorm_backward_kernel, ceil_div((size_t)N, LN_WARPS),
           LN_WARPS * 32, 0, dinp, skip, dout, inp, weight, mean,
           rstd, N, C);
    // The chunks, the scratch and the final sums are linear.cu's, which
    // sums a bias's gradient down its columns the same way.
    ColumnChunks k = column_chunks(N);
    float *part_w = column_scratch(2 * (size_t)k.chunks * C);
    float *part_b = part_w + (size_t)k.chunks * C;
    LAUNCH(layernorm_param_partial_kernel,
           dim3(ceil_div((size_t)C, LN_TILE), k.chunks),
           dim3(LN_TILE, LN_LANES), 0, part_w, part_b, dout, inp, mean,
           rstd, N, C, k.rows);
    column_sums_finish_cuda(dweight, part_w, k.chunks, C);
    if (dbias) column_sums_finish_cuda(dbias, part_b, k.chunks, C);
}

void layernorm_backward_cuda(float *dinp, float *dweight, float *dbias,
                             const float *dout, const float *inp,
                             const float *weight, const float *mean,
                             const float *rstd, int B, int T, int C) {
    layernorm_backward_any(dinp, dinp, dweight, dbias, dout, inp, weight,
                           mean, rstd, B, T, C);
}

void layernorm_backward_set_cuda(float *dinp, float *dweight, float *dbias,
                                 const float *dout, const float *inp,
                                 const float *weight, const float *mean,
                                 const float *rstd, int B, int T, int C) {
    layernorm_backward_any(dinp, NULL, dweight, dbias, dout, inp, weight,
                           mean, rstd, B, T, C);
}

void layernorm_backward_skip_cuda(float *dinp, const float *skip,
                                  float *dweight, float *dbias,
                                  const float *dout, const float *inp,
                                  const float *weight, const float *mean,
                                  const float *rstd, int B, int T, int C) {
    layernorm_backward_any(dinp, skip, dweight, dbias, dout, inp, weight,
                           mean, rstd, B, T, C);
}
