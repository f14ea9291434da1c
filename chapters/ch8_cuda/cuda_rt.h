// cuda_rt.h - what every .cu file of this chapter includes: CUDA itself
// (or, without nvcc, the host emulation of emu/emu.h), error checks that name
// the call and its file line, and the one launcher through which every
// kernel starts, so that the same source builds for both.
//
//   LAUNCH(kernel, grid, block, shared_bytes, args...)
//
// is kernel<<<grid, block, shared_bytes, cuda_stream()>>>(args...) with
// nvcc, followed by
// a check of the launch, and the emulator's emu_launch otherwise.
// SHARED_ARRAY(float, buf) declares the launch's dynamic shared memory,
// 32-byte aligned: an extern __shared__ array promises the compiler only
// its type's alignment, and the warp matrix API's loads and stores need
// 32 bytes (the emulation's buffer is aligned the same way).
// This header is C++ (.cu files only); C code includes the .cuh headers.
#ifndef CH8_CUDA_RT_H
#define CH8_CUDA_RT_H

#ifdef __CUDACC__
#include <cublas_v2.h>
#include <cuda_runtime.h>
#else
#include "emu/emu.h"
#endif

#include <stddef.h>

extern "C" {
#include "runtime.cuh"
}

// Prints "<prog>: error: FILE:LINE: CALL: MESSAGE" and exits with 1.
[[noreturn]] void cuda_fail(const char *call, const char *msg,
                            const char *file, int line);

#define CUDA_CHECK(call)                                                  \
    do {                                                                  \
        cudaError_t e_ = (call);                                          \
        if (e_ != cudaSuccess)                                            \
            cuda_fail(#call, cudaGetErrorString(e_), __FILE__, __LINE__); \
    } while (0)

#define CUBLAS_CHECK(call)                                                \
    do {                                                                  \
        cublasStatus_t s_ = (call);                                       \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                  \
            cuda_fail(#call, cublasGetStatusString(s_), __FILE__,         \
                      __LINE__);                                          \
    } while (0)

//> launch
#ifdef __CUDACC__
#define LAUNCH(kernel, grid, block, shmem, ...)                           \
    do {                                                                  \
        kernel<<<(grid), (block), (shmem), cuda_stream()>>>(__VA_ARGS__); \
        CUDA_CHECK(cudaGetLastError());                                   \
        cuda_count_write();                                               \
    } while (0)
#define SHARED_ARRAY(type, name) extern __shared__ __align__(32) type name[]
#else
#define LAUNCH(kernel, grid, block, shmem, ...)                           \
    do {                                                                  \
        emu_launch(#kernel, (grid), (block), (shmem),                     \
                   [=] { kernel(__VA_ARGS__); }, __FILE__, __LINE__);     \
        CUDA_CHECK(cudaGetLastError());                                   \
        cuda_count_write();                                               \
    } while (0)
#define SHARED_ARRAY(type, name) type *name = (type *)emu_dynamic_shared()
#endif
//< launch

// Blocks of `threads` to cover n items.
static inline unsigned ceil_div(size_t n, unsigned threads) {
    return (unsigned)((n + threads - 1) / threads);
}

// The one cuBLAS handle of the program (created on first use).
cublasHandle_t cuda_blas(void);

// The one stream every launch, product and memset of the program goes
// to (created on first use): a stream of its own rather than the
// default one, because only such a stream can be captured into a graph
// (runtime.cuh). It waits for the synchronous copies and they for it,
// as the default stream did, so the order of the program is unchanged.
cudaStream_t cuda_stream(void);

#endif
