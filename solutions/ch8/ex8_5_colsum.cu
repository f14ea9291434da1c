// Exercise 8.5 - reference answer: a block per chunk of rows and 32
// columns, its 8 lanes of rows meeting in shared memory; then a thread
// per column adding the chunks' sums in chunk order.
#include "cuda_rt.h"

extern "C" {
#include "ch8_exercises.h"
}

#define TILE 32    // columns per block
#define LANES 8    // lanes of rows per column

// Block (bx, by): rows by * rows .. of columns TILE * bx .. into
// part[by * C + c].
__global__ static void chunk_kernel(float *part, const float *m, int N,
                                    int C, int rows) {
    __shared__ float s[LANES][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int c = blockIdx.x * TILE + tx;
    int r0 = blockIdx.y * rows;
    int r1 = r0 + rows < N ? r0 + rows : N;
    float sum = 0.0f;
    if (c < C)
        for (int r = r0 + ty; r < r1; r += LANES) sum += m[(size_t)r * C + c];
    s[ty][tx] = sum;
    __syncthreads();   // all 8 lanes' sums are written
    if (ty == 0 && c < C) {
        for (int k = 1; k < LANES; k++) sum += s[k][tx];
        part[(size_t)blockIdx.y * C + c] = sum;
    }
}

// Thread c: dst[c] += the chunks' sums of column c, in chunk order.
__global__ static void final_kernel(float *dst, const float *part,
                                    int chunks, int C) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    float sum = 0.0f;
    for (int k = 0; k < chunks; k++) sum += part[(size_t)k * C + c];
    dst[c] += sum;
}

void ex_column_sums_cuda(float *dst, const float *m, int N, int C, int rows,
                         float *part) {
    int chunks = (int)ceil_div((size_t)N, (unsigned)rows);
    LAUNCH(chunk_kernel, dim3(ceil_div((size_t)C, TILE), chunks),
           dim3(TILE, LANES), 0, part, m, N, C, rows);
    LAUNCH(final_kernel, ceil_div((size_t)C, 128), 128, 0, dst, part,
           chunks, C);
}
