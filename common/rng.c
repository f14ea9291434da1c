#include "rng.h"

#include <assert.h>
#include <math.h>

// MT19937 constants (Matsumoto & Nishimura, 1998).
#define MT_M 397
#define MT_MATRIX_A 0x9908b0dfu
#define MT_UPPER 0x80000000u
#define MT_LOWER 0x7fffffffu

//> rng-seed
void rng_seed(Rng *r, uint64_t seed) {
    // PyTorch keeps the low 32 bits of the seed for this generator.
    r->state[0] = (uint32_t)(seed & 0xffffffffu);
    for (int i = 1; i < RNG_N; i++) {
        uint32_t prev = r->state[i - 1];
        r->state[i] = 1812433253u * (prev ^ (prev >> 30)) + (uint32_t)i;
    }
    r->next = RNG_N;                       // regenerate on the first draw
}
//< rng-seed

// One word of the twist: the top bit of a, the low 31 of b, mixed into c.
static inline uint32_t twist(uint32_t a, uint32_t b, uint32_t c) {
    uint32_t y = (a & MT_UPPER) | (b & MT_LOWER);
    uint32_t v = c ^ (y >> 1);
    return (y & 1u) ? v ^ MT_MATRIX_A : v;
}

// state[i] becomes twist(state[i], state[i + 1], state[i + M]), indices
// taken modulo N, for i = 0 .. N-1 in order. The loop is cut where the
// indices wrap around, so that no modulo is left and the first two parts
// vectorise; every word still sees the same old and new words as in the
// one loop with modulos.
static void rng_twist(Rng *r) {
    uint32_t *s = r->state;
    int i = 0;
    for (; i < RNG_N - MT_M; i++) s[i] = twist(s[i], s[i + 1], s[i + MT_M]);
    for (; i < RNG_N - 1; i++)
        s[i] = twist(s[i], s[i + 1], s[i + MT_M - RNG_N]);
    s[i] = twist(s[i], s[0], s[MT_M - 1]);
    r->next = 0;
}

static inline uint32_t temper(uint32_t y) {
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

uint32_t rng_u32(Rng *r) {
    if (r->next >= RNG_N) rng_twist(r);
    return temper(r->state[r->next++]);
}

//> rng-below
uint32_t rng_below(Rng *r, uint32_t n) {
    assert(n > 0);                         // a caller's bug, not user input
    return rng_u32(r) % n;
}
//< rng-below

// The low 24 bits of a draw as a float in [0, 1).
static inline float to_uniform(uint32_t u) {
    return (float)(u & ((1u << 24) - 1)) * (1.0f / 16777216.0f);
}

float rng_uniform(Rng *r) { return to_uniform(rng_u32(r)); }

void rng_uniform_fill(Rng *r, float *out, size_t n) {
    // what is left of the twisted state at a time, in one loop that
    // vectorises, rather than a call per number
    while (n > 0) {
        if (r->next >= RNG_N) rng_twist(r);
        size_t k = (size_t)(RNG_N - r->next);
        k = k < n ? k : n;
        const uint32_t *s = r->state + r->next;
        for (size_t i = 0; i < k; i++) out[i] = to_uniform(temper(s[i]));
        r->next += (int)k;
        out += k;
        n -= k;
    }
}

// Box-Muller on one block of 16 uniforms: the first 8 become cosines, the
// last 8 sines, exactly as PyTorch's normal_fill_16.
static void normal_block16(float *x, float mean, float std) {
    const double two_pi = 6.283185307179586476925;
    for (int j = 0; j < 8; j++) {
        float u1 = 1.0f - x[j];            // in (0, 1]: log is finite
        float u2 = x[j + 8];
        float radius = sqrtf(-2.0f * logf(u1));
        float theta = (float)(two_pi * (double)u2);  // as PyTorch
        x[j] = radius * cosf(theta) * std + mean;
        x[j + 8] = radius * sinf(theta) * std + mean;
    }
}

void rng_normal_fill(Rng *r, float *out, size_t n, float mean, float std) {
    if (n < 16) {
        float block[16];
        for (int i = 0; i < 16; i++) block[i] = rng_uniform(r);
        normal_block16(block, mean, std);
        for (size_t i = 0; i < n; i++) out[i] = block[i];
        return;
    }
    rng_uniform_fill(r, out, n);
    for (size_t i = 0; i + 16 <= n; i += 16)
        normal_block16(out + i, mean, std);
    if (n % 16 != 0) {
        // PyTorch redoes the last 16 values with fresh uniforms.
        float *tail = out + n - 16;
        rng_uniform_fill(r, tail, 16);
        normal_block16(tail, mean, std);
    }
}
