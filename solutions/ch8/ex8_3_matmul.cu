// Exercise 8.3 - reference answer: 16 x 16 tiles of a and b in shared
// memory, one thread per element of c.
#include "cuda_rt.h"

extern "C" {
#include "ch8_exercises.h"
}

#define TILE 16

// Block (bx, by) computes c's tile at rows by*TILE.., columns bx*TILE..;
// thread (tx, ty) its element (row, col). Each step along K loads one
// tile of a and one of b (zeros past the matrices' edges, which add
// nothing), and every thread of the block uses all of both.
__global__ static void matmul_kernel(float *c, const float *a,
                                     const float *b, int M, int N, int K) {
    __shared__ float ta[TILE][TILE], tb[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        ta[ty][tx] = row < M && k0 + tx < K ? a[(size_t)row * K + k0 + tx]
                                            : 0.0f;
        tb[ty][tx] = k0 + ty < K && col < N ? b[(size_t)(k0 + ty) * N + col]
                                            : 0.0f;
        __syncthreads();   // both tiles are whole before anyone reads them
        for (int k = 0; k < TILE; k++) acc += ta[ty][k] * tb[k][tx];
        __syncthreads();   // all are done with them before the next load
    }
    if (row < M && col < N) c[(size_t)row * N + col] = acc;
}

void ex_matmul_cuda(float *c, const float *a, const float *b, int M, int N,
                    int K) {
    if (M == 0 || N == 0) return;
    dim3 grid(ceil_div((size_t)N, TILE), ceil_div((size_t)M, TILE));
    LAUNCH(matmul_kernel, grid, dim3(TILE, TILE), 0, c, a, b, M, N, K);
}
