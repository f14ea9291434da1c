// linear.cu - chapter 2's linear layer on the GPU: the two products go
// to cuBLAS (gemm_cuda, the same calls as linear.c makes to gemm), and
// the bias is small kernels of our own: a fill, and the column sums of
// its gradient (which layernorm.cu's parameter gradients use too).
#include "cuda_rt.h"

extern "C" {
#include "gemm.cuh"
#include "linear.cuh"
}

// Every row of out starts as the bias: out[n, o] = bias[o].
__global__ void bias_fill_kernel(float *out, const float *bias, int N,
                                 int C_out) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (size_t)N * C_out) out[i] = bias[i % C_out];
}

//> column-sums-cuda
// Sums down the columns of an (N, C) matrix, over all N rows, as the
// bias's gradient needs (and LayerNorm's parameters, in layernorm.cu).
// One thread per column would give a GPU a few hundred threads for
// millions of additions, so the rows are cut into chunks instead: block
// (tile, chunk) sums one chunk of rows for COL_TILE columns into a
// scratch buffer, and a second kernel adds each column's chunk sums in
// chunk order. Both orders depend on N and C alone, so the result is the
// same every run, with no atomics.
#define COL_TILE 32            // columns per block
#define COL_LANES 8            // row lanes per column: 256 threads
#define COL_CHUNK_ROWS 256     // rows per chunk
#define COL_MAX_CHUNKS 1024    // (so the scratch stays small)

ColumnChunks column_chunks(int N) {
    // Chunks of COL_CHUNK_ROWS rows (fewer, longer ones past the most).
    int chunks = (int)ceil_div((size_t)N, COL_CHUNK_ROWS);
    if (chunks > COL_MAX_CHUNKS) chunks = COL_MAX_CHUNKS;
    if (chunks < 1) chunks = 1;
    int rows = (int)ceil_div((size_t)N, (unsigned)chunks);
    if (rows < 1) rows = 1;
    ColumnChunks k = {(int)ceil_div((size_t)N, (unsigned)rows), rows};
    return k;   // none of the chunks is empty
}

// Block (tile, chunk) sums rows [chunk * rows, (chunk + 1) * rows) of
// COL_TILE columns of m. Thread (tx, ty) owns column tile * COL_TILE +
// tx and every COL_LANES-th row from ty, so a warp reads 32 neighbouring
// floats of one row; the COL_LANES sums of a column then meet in shared
// memory, added in a fixed order, and go to part[chunk, column].
__global__ void column_partial_kernel(float *part, const float *m, int N,
                                      int C, int rows) {
    __shared__ float s[COL_LANES][COL_TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int c = blockIdx.x * COL_TILE + tx;
    int r0 = blockIdx.y * rows;
    int r1 = r0 + rows < N ? r0 + rows : N;
    float sum = 0.0f;
    if (c < C)
        for (int r = r0 + ty; r < r1; r += COL_LANES)
            sum += m[(size_t)r * C + c];
    s[ty][tx] = sum;
    __syncthreads();   // every lane's sum is in shared memory
    if (ty == 0 && c < C) {
        for (int k = 1; k < COL_LANES; k++) sum += s[k][tx];
        part[(size_t)blockIdx.y * C + c] = sum;
    }
}

// dst[c] += the chunks' sums of column c, added in chunk order.
__global__ void column_final_kernel(float *dst, const float *part,
                                    int chunks, int C) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    float sum = 0.0f;
    for (int k = 0; k < chunks; k++) sum += part[(size_t)k * C + c];
    dst[c] += sum;
}
//< column-sums-cuda

// The scratch of the chunk sums, grown on demand and never freed: one
// buffer for every column sum of the program (launches on one stream run
// in order, so two sums never use it at once).
static float *col_scratch = NULL;
static size_t col_scratch_size = 0;

float *column_scratch(size_t n) {
    if (n > col_scratch_size) {
        cuda_free(col_scratch);
        col_scratch = cuda_alloc_floats(n);
        col_scratch_size = n;
    }
    return col_scratch;
}

void column_sums_finish_cuda(float *dst, const float *part, int chunks,
                             int C) {
    LAUNCH(column_final_kernel, ceil_div((size_t)C, 128), 128, 0, dst,
           part, chunks, C);
}

void column_sums_cuda(float *dst, const float *m, int N, int C) {
    if (N <= 0 || C <= 0) return;
    ColumnChunks k = column_chunks(N);
    float *part = column_scratch((size_t)k.chunks * C);
    LAUNCH(column_partial_kernel, dim3(ceil_div((size_t)C, COL_TILE),
           k.chunks), dim3(COL_TILE, COL_LANES), 0, part, m, N, C, k.rows);
    column_sums_finish_cuda(dst, part, k.chunks, C);
}

//> linear-cuda
void linear_forward_cuda(float *out, const float *inp, const float *weight,
                         const float *bias, int N, int C_in, int C_out) {
    if (N == 0 || C_out == 0) return;
    size_t n = (size_t)N * C_out;
    if (bias) LAUNCH(bias_fill_kernel, ceil_div(n, 256), 256, 0, out, bias,
                     N, C_out);
    else if (C_in == 0) cuda_zero(out, n);
    if (C_in == 0) return;
    // out (N, C_out) = inp (N, C_in) @ weight^T (C_in, C_out) [+ out]
    gemm_cuda(false, true, N, C_out, C_in, 1.0f, inp, C_in, weight, C_in,
              bias ? 1.0f : 0.0f, out, C_out);
}

// dinp gets beta_in * dinp + its gradient: beta_in 1 adds (the CPU's
// rule), 0 sets it without reading it.
static void linear_backward_beta(float *dinp, float beta_in, float *dweight,
                                 float *dbias, const float *dout,
                                 const float *inp, const float *weight,
                                 int N, int C_in, int C_out) {
    if (N == 0 || C_out == 0) return;
    if (dinp && C_in > 0)   // dinp (N, C_in) += dout (N, C_out) @ weight
        gemm_cuda(false, false, N, C_in, C_out, 1.0f, dout, C_out, weight,
                  C_in, beta_in, dinp, C_in);
    if (C_in > 0)           // dweight (C_out, C_in) += dout^T @ inp
        gemm_cuda(true, false, C_out, C_in, N, 1.0f, dout, C_out, inp,
                  C_in, 1.0f, dweight, C_in);
    if (dbias)              // dbias (C_out) += the column sums of dout
        column_sums_cuda(dbias, dout, N, C_out);
}

void linear_backward_cuda(float *dinp, float *dweight, float *dbias,
                          const float *dout, const float *inp,
                          const float *weight, int N, int C_in, int C_out) {
    linear_backward_beta(dinp, 1.0f, dweight, dbias, dout, inp, weight, N,
                         C_in, C_out);
}

void linear_backward_set_cuda(float *dinp, float *dweight, float *dbias,
                              const float *dout, const float *inp,
                              const float *weight, int N, int C_in,
                              int C_out) {
    linear_backward_beta(dinp, 0.0f, dweight, dbias, dout, inp, weight, N,
                         C_in, C_out);
}
//< linear-cuda
