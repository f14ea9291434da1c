// rng.h - a seedable, reproducible random number generator.
//
// The generator is the 32-bit Mersenne Twister (MT19937), the one PyTorch's
// CPU generator uses, seeded the same way as torch.manual_seed(seed). The
// same seed gives the same numbers on every machine and every run, and
//   rng_below(&r, n)      draws what torch.randint(n, ...) draws,
//   rng_uniform(&r)       draws what torch.rand(...) (float32) draws,
//   rng_normal_fill(...)  fills like torch.randn(...) for 16 or more values
//                         (to float rounding).
// All state lives in the Rng struct, so a checkpoint can save it.
#ifndef COMMON_RNG_H
#define COMMON_RNG_H

#include <stddef.h>
#include <stdint.h>

#define RNG_N 624

typedef struct {
    uint32_t state[RNG_N];
    int next;                // index of the next word of state to temper
} Rng;

void rng_seed(Rng *r, uint64_t seed);

// The next raw 32-bit output.
uint32_t rng_u32(Rng *r);

// Uniform integer in [0, n), n >= 1: raw % n, as torch.randint. The modulo
// bias is below n / 2^32, far below anything a batch sampler can notice.
uint32_t rng_below(Rng *r, uint32_t n);

// Uniform float in [0, 1) with 24 random bits (one draw).
float rng_uniform(Rng *r);

// out[0..n-1] = n calls of rng_uniform, in order (the same numbers and
// the same state after), only faster.
void rng_uniform_fill(Rng *r, float *out, size_t n);

// n normal(mean, std) floats. For n >= 16 this is PyTorch's vectorised
// Box-Muller over blocks of 16 uniforms, so torch.randn(n) after the same
// seed gives the same values (up to float rounding in log/sin/cos, ~1e-7).
// For n < 16 the same transform runs on one block of 16 uniforms, which
// PyTorch does not do (it uses a double-precision path there).
void rng_normal_fill(Rng *r, float *out, size_t n, float mean, float std);

#endif
