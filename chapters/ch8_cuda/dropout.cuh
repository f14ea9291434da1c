// dropout.cuh - chapter 3's dropout (dropout.h) on the GPU.
//
// The CPU draws its mask from one sequential generator: element i's
// uniform is the i-th draw after the previous layer's. Thousands of GPU
// threads cannot take turns on one generator, so here every element's
// uniform is a pure function of where it is: a hash of (seed, counter),
// with counter = offset + i. Any thread can compute its own draw, in any
// order, and the same call gives the same mask on any GPU (and, through
// dropout_uniform, on the host). The caller moves offset past the n
// counters a call used, as the CPU's generator moves past n draws.
// Element i is dropped when its uniform is < p, as on the CPU, so the
// masks have the same law but not the same values as chapter 3's.
#ifndef CH8_DROPOUT_CUH
#define CH8_DROPOUT_CUH

#include <stddef.h>
#include <stdint.h>

#include "dropout.h"   // the CPU functions ported here

// Functions that both the host and a kernel call: __host__ __device__
// for nvcc; plain functions for a C compiler and under the emulation.
#ifdef __CUDACC__
#define CUDA_HOST_DEVICE __host__ __device__
#else
#define CUDA_HOST_DEVICE
#endif

// splitmix64's output function (Steele, Lea and Flood, 2014; the
// constants are Stafford's "Mix13"): two xor-shift-multiply rounds that
// spread every input bit over every output bit. A 64-bit multiply costs a
// GPU a few instructions, nothing beside dropout's memory traffic.
CUDA_HOST_DEVICE static inline uint64_t dropout_mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// The uniform of counter under seed: 24 random bits in [0, 1), exact in
// a float, as the CPU's rng_uniform. It is splitmix64's counter-th output
// from the state mix64(seed): state + counter * golden ratio, mixed. The
// seed is mixed first so that two nearby seeds (1 and 2) do not give two
// streams that are the same numbers shifted by a few counters.
//> dropout-uniform
CUDA_HOST_DEVICE static inline float dropout_uniform(uint64_t seed,
                                                     uint64_t counter) {
    uint64_t z = dropout_mix64(dropout_mix64(seed)
                               + counter * 0x9E3779B97F4A7C15ull);
    return (float)(z >> 40) * (1.0f / 16777216.0f);   // top 24 bits / 2^24
}
//< dropout-uniform

#ifdef __cplusplus
extern "C" {
#endif

// As dropout_forward, with element i's uniform dropout_uniform(seed,
// offset + i): mask[i] = 0 when it is < p, else 1 / (1 - p), and
// out[i] = inp[i] * mask[i]. out may be inp. p = 0 is the identity (mask
// all ones, as the CPU). p must be in [0, 1): the program stops
// otherwise (check it once with dropout_check_p).
void dropout_forward_cuda(float *out,        // (n,)
                          float *mask,       // (n,) written
                          const float *inp,  // (n,)
                          float p, uint64_t seed, uint64_t offset, size_t n);

// As dropout_backward: dinp += dout * mask.
void dropout_backward_cuda(float *dinp,        // (n,)
                           const float *dout,  // (n,)
                           const float *mask,  // (n,)
                           size_t n);

// dinp = dout * mask (set, not added to; dinp may be dout): the model's
// embedding dropout, whose gradient nothing else adds to.
void dropout_backward_set_cuda(float *dinp, const float *dout,
                               const float *mask, size_t n);

#ifdef __cplusplus
}
#endif

#endif
