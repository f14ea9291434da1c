// fastexp.h - exp_fast, an e^x that a compiler can vectorise: the
// attention softmax (attention.c) and the GELUs of chapter 3 use it, and
// chapter 3's text takes it apart. And max_fast, a row's maximum that
// vectorises, for the softmax, the loss and decoding.
#ifndef CH2_FASTEXP_H
#define CH2_FASTEXP_H

#include <math.h>
#include <stdint.h>

//> fast-exp
// a * b + c in one instruction with one rounding (a fused multiply-add)
// where the CPU has one, which halves the instructions of a polynomial;
// elsewhere the two operations (fmaf there would be a slow library call).
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
#define FMADD(a, b, c) fmaf(a, b, c)
#else
#define FMADD(a, b, c) ((a) * (b) + (c))
#endif

// e^x, written so that the compiler can vectorise a loop that calls it
// (libm's expf is one opaque call per value). Split x = k ln2 + r with k
// an integer and |r| <= ln2/2; then e^x = 2^k e^r, 2^k is put straight
// into a float's exponent bits, and e^r is its Taylor series to r^7, off by
// less than r^8/8! < 6e-9. x is clamped to [-87, 88], where 2^k stays a
// normal float; e^-87 = 1.6e-38 stands in for anything smaller (and for
// NaN, so that the conversion to int below is always defined).
static inline float exp_fast(float x) {
    const float log2e = 1.44269504f, round = 0x1.8p23f;
    const float ln2_hi = 0.693145752f, ln2_lo = 1.42860677e-06f;
    x = x > -87.0f ? x : -87.0f;
    x = x < 88.0f ? x : 88.0f;
    float k = FMADD(x, log2e, round) - round;  // x / ln2 to an integer
    float r = FMADD(-k, ln2_lo, FMADD(-k, ln2_hi, x));  // ln2 = hi + lo
    float p = 1.0f / 5040;                // Horner: ((r/7! + 1/6!) r + ..
    p = FMADD(p, r, 1.0f / 720);
    p = FMADD(p, r, 1.0f / 120);
    p = FMADD(p, r, 1.0f / 24);
    p = FMADD(p, r, 1.0f / 6);
    p = FMADD(p, r, 1.0f / 2);
    p = FMADD(p, r, 1.0f);
    p = FMADD(p, r, 1.0f);
    union { uint32_t u; float f; } two_k = {.u = (uint32_t)((int)k + 127)
                                                 << 23};
    return p * two_k.f;
}
//< fast-exp

//> fast-max
// The largest of x[0..n-1] (-infinity for n = 0; a NaN is passed over),
// written so that it vectorises: 64 running maxima side by side. With 16,
// gcc 12 keeps each running maximum in a scalar register and compares one
// float at a time; with 64 it uses vector max instructions. The last
// n % 64 values go into the lanes too, and the 64 lanes are folded in
// halves (32, 16, .., 1), each half a vector instruction: folded one lane
// at a time they would be 64 compares in a row, each waiting for the last,
// longer than the whole loop for a row of 128. The result does not depend
// on the order.
#define MAX_FAST_LANES 64
static inline float max_fast(const float *x, int n) {
    float m[MAX_FAST_LANES];
    for (int j = 0; j < MAX_FAST_LANES; j++) m[j] = -INFINITY;
    int i = 0;
    for (; i + MAX_FAST_LANES <= n; i += MAX_FAST_LANES)
        for (int j = 0; j < MAX_FAST_LANES; j++)
            m[j] = x[i + j] > m[j] ? x[i + j] : m[j];
    for (int j = 0; j < n - i; j++)
        m[j] = x[i + j] > m[j] ? x[i + j] : m[j];
    for (int half = MAX_FAST_LANES / 2; half > 0; half /= 2)
        for (int j = 0; j < half; j++)
            m[j] = m[j + half] > m[j] ? m[j + half] : m[j];
    return m[0];
}
//< fast-max

#endif
