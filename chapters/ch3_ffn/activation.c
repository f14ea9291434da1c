#include "activation.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>

#include "fastexp.h"
#include "parallel.h"

//> relu
void relu_forward(float *out, const float *inp, size_t n) {
    PARALLEL_FOR
    for (size_t i = 0; i < n; i++) out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
}

void relu_backward(float *dinp, const float *dout, const float *inp,
                   size_t n) {
    PARALLEL_FOR
    for (size_t i = 0; i < n; i++)
        if (inp[i] > 0.0f) dinp[i] += dout[i];   // slope 1, else slope 0
}
//< relu


//> gelu-exact
#define INV_SQRT2 0.70710678118654752440f       // 1 / sqrt(2)
#define INV_SQRT_2PI 0.39894228040143267794f    // 1 / sqrt(2 pi)

// Phi(x), given gauss = e^(-x^2/2). The tail P(N > |x|) = erfc(|x|/sqrt 2)
// / 2 comes from formula 7.1.26 of Abramowitz and Stegun (erf to within
// 1.5e-7); Phi(x) is that tail for x < 0 and 1 minus it for x >= 0, so
// there is no 1 + erf(x) to cancel when x is very negative.
static inline float normal_cdf(float x, float gauss) {
    float t = 1.0f / (1.0f + 0.3275911f * INV_SQRT2 * fabsf(x));
    float poly = FMADD(1.061405429f, t, -1.453152027f);     // Horner
    poly = FMADD(poly, t, 1.421413741f);
    poly = FMADD(poly, t, -0.284496736f);
    poly = FMADD(poly, t, 0.254829592f);
    float tail = 0.5f * gauss * t * poly;
    return x < 0.0f ? tail : 1.0f - tail;
}

static inline float gelu_exact(float x) {
    return x * normal_cdf(x, exp_fast(-0.5f * x * x));
}

// d/dx x Phi(x) = Phi(x) + x phi(x), phi(x) = e^(-x^2/2) / sqrt(2 pi)
static inline float gelu_exact_grad(float x) {
    float gauss = exp_fast(-0.5f * x * x);
    return normal_cdf(x, gauss) + x * INV_SQRT_2PI * gauss;
}
//< gelu-exact

//> gelu-tanh
#define SQRT_2_OVER_PI 0.79788456080286535588f  // sqrt(2 / pi)
#define GELU_CUBIC 0.044715f

// Phi(x) ~ (1 + tanh(u)) / 2 with u = sqrt(2/pi) (x + 0.044715 x^3), and
// (1 + tanh(u)) / 2 = 1 / (1 + e^(-2u)) = sigmoid(2u): one exp, and no
// 1 + tanh(u) that cancels when tanh(u) is close to -1.
static inline float gelu_tanh(float x) {
    float u = SQRT_2_OVER_PI * (x + GELU_CUBIC * x * x * x);
    return x / (1.0f + exp_fast(-2.0f * u));
}

// d/dx x s(2u) = s + x * 2 s (1 - s) du/dx, with s = sigmoid(2u), as
// sigmoid' = sigmoid (1 - sigmoid); 1 - s = e^(-2u) s.
static inline float gelu_tanh_grad(float x) {
    float u = SQRT_2_OVER_PI * (x + GELU_CUBIC * x * x * x);
    float du = SQRT_2_OVER_PI * (1.0f + 3.0f * GELU_CUBIC * x * x);
    float e = exp_fast(-2.0f * u), s = 1.0f / (1.0f + e);
    return s + 2.0f * x * s * (e * s) * du;
}
//< gelu-tanh

//> gelu
void gelu_forward(float *out, const float *inp, Activation kind, size_t n) {
    assert(kind != RELU);
    if (kind == GELU_TANH) {
        PARALLEL_FOR
        for (size_t i = 0; i < n; i++) out[i] = gelu_tanh(inp[i]);
    } else {
        PARALLEL_FOR
        for (size_t i = 0; i < n; i++) out[i] = gelu_exact(inp[i]);
    }
}

void gelu_backward(float *dinp, const float *dout, const float *inp,
                   Activation kind, size_t n) {
    assert(kind != RELU);
    if (kind == GELU_TANH) {
        PARALLEL_FOR
        for (size_t i = 0; i < n; i++)
            dinp[i] += dout[i] * gelu_tanh_grad(inp[i]);
    } else {
        PARALLEL_FOR
        for (size_t i = 0; i < n; i++)
            dinp[i] += dout[i] * gelu_exact_grad(inp[i]);
    }
}
//< gelu

const char *activation_name(Activation act) {
    return act == RELU ? "relu" : act == GELU_TANH ? "tanh" : "exact";
}
