// ch8_exercises.h - the exercises of chapter 8: five kernels, each with
// the host function that launches it. Your answers go in exercises/ch8/
// (one .cu file per exercise: CUDA C++, which this project builds under
// the host emulation of emu/emu.h, so no GPU is needed to do them or to
// grade them); `make check EXERCISES=exercises` grades them, and
// tests/ch8/test_ex8.c holds you to the contracts below.
//
// Every pointer is a DEVICE pointer (cuda_alloc_floats); tensors are
// float32, row-major, shapes in the comments. Start each file with
//   #include "cuda_rt.h"
// and launch every kernel with LAUNCH(kernel, grid, block, shared_bytes,
// args...) (cuda_rt.h), never with <<<...>>> itself, so that the same
// file builds for the GPU and for the emulation. Choose your block sizes
// as named constants. Sizes are never multiples of your block size in
// the tests: the last block's extra threads must do nothing harmful.
//
// The tests run each kernel several times: with the block's threads all
// at once (as on a GPU), and one thread at a time in three orders
// (emu/emu_schedule.h), where a missing __syncthreads gives wrong numbers
// every time rather than now and then; a result that changes with the
// order is named as a missing __syncthreads. Writing past the end of an
// output fails; so does a value read from shared memory that nobody wrote
// (the emulator fills dynamic shared memory with NaN). Calling this chapter's
// own kernels (gelu_forward_cuda, ...) would pass and teach nothing.
#ifndef CH8_EXERCISES_H
#define CH8_EXERCISES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// Exercise 8.1 - GELU, tanh form, one thread per element:
//   out[i] = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), x = inp[i]
// (chapter 3's gelu_forward with GELU_TANH, within 1e-5 of its largest
// value). A grid of ceil_div(n, threads) blocks; n may be 0 (then
// launch nothing: a grid of 0 blocks is an error on a GPU).
void ex_gelu_forward_cuda(float *out,        // (n,)
                          const float *inp,  // (n,)
                          size_t n);

// Exercise 8.2 - softmax of each row, one block per row (grid N). The
// block's threads stride over the row's D values; the row's maximum and
// then the sum of exp(x - max) come from a reduction of the threads'
// partial results in shared memory (a tree, with a __syncthreads between
// its levels), and every thread then writes its values
//   out[n, i] = exp(inp[n, i] - max) / sum.
// D >= 1, any size: 1, fewer than your threads, not a power of two, many
// times your threads. Rows of logits like 1000 or -1000 stay finite (as
// chapter 2's softmax_forward; within 1e-5 of it).
void ex_softmax_forward_cuda(float *out,        // (N, D)
                             const float *inp,  // (N, D)
                             int N, int D);

// Exercise 8.3 - the matrix product c = a b with shared-memory tiles:
// blocks of TILE x TILE = 16 x 16 threads, each block computes one
// 16 x 16 tile of c; it walks along K one tile at a time, its threads
// loading a 16 x 16 tile of a and of b into shared memory (0 where the
// tile passes the edge of the matrix), waiting for each other, adding
// their products, and waiting again before the next tiles overwrite
// these. Any M, N, K >= 1 (not multiples of 16). Summed in fp32 in the
// order of k: within 1e-5 of the exact product (relative to its largest
// value).
void ex_matmul_cuda(float *c,         // (M, N)
                    const float *a,   // (M, K)
                    const float *b,   // (K, N)
                    int M, int N, int K);

// Exercise 8.4 - LayerNorm forward, one WARP (32 threads) per row, so
// several rows per block. The lanes stride over the row's C values and
// combine their partial sums with __shfl_xor_sync(0xffffffff, v, offset)
// for offsets 16, 8, 4, 2, 1 (after which every lane holds the total):
// first the mean, then the variance as the mean of (x - mean)^2 (two
// passes over the row: the one-pass E[x^2] - mean^2 loses everything in
// float for rows whose mean is large against their spread). Then
//   rstd = 1 / sqrt(var + 1e-5),  out = (x - mean) rstd weight + bias,
// and mean[n], rstd[n] written once per row. bias may be NULL. The warps
// of the last block past row N - 1 must do nothing (whole warps: a
// shuffle needs all 32 lanes). Chapter 4's layernorm_forward, within
// 1e-5.
void ex_layernorm_forward_cuda(float *out,           // (N, C)
                               float *mean,          // (N,)
                               float *rstd,          // (N,)
                               const float *inp,     // (N, C)
                               const float *weight,  // (C,)
                               const float *bias,    // (C,) or NULL
                               int N, int C);

// Exercise 8.5 - the sums down the columns of m (N, C), as a bias's
// gradient: dst[c] += m[0, c] + m[1, c] + ... + m[N-1, c] for every c,
// in two kernels and without atomics (linear.cu's column sums):
//  1. a grid of ceil(C / 32) x chunks blocks of 32 x 8 threads, chunks =
//     ceil(N / rows): block (bx, by) sums rows by * rows .. min((by + 1)
//     * rows, N) - 1 of the columns 32 bx .. 32 bx + 31. Thread (tx, ty)
//     adds every 8th of those rows, from the chunk's row ty, for column
//     c = 32 bx + tx; the 8 sums of a column meet in shared memory, and
//     thread ty = 0 adds them in order of ty and writes part[by * C + c];
//  2. one thread per column adds part[0 * C + c], part[1 * C + c], ...
//     in chunk order and adds the total into dst[c].
// part is device scratch of at least chunks * C floats, given to you.
// N, C and rows are >= 1, and rows may be anything: more than N, fewer
// than 8. Within 1e-5 of chapter 2's bias gradient, and the same bits
// whatever order the threads run in (which float atomics would not give).
void ex_column_sums_cuda(float *dst,        // (C,) += the column sums
                         const float *m,    // (N, C)
                         int N, int C, int rows,
                         float *part);      // (chunks * C,) scratch

#ifdef __cplusplus
}
#endif

#endif
