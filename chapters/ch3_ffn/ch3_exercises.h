// ch3_exercises.h - the exercises of chapter 3. Your answers go in
// exercises/ch3/ (one file per exercise); `make check EXERCISES=exercises`
// grades them, and tests/ch3/test_ex3.c holds you to the contracts below.
//
// All tensors are float32, row-major, with the shapes given in the
// comments. Every backward function ADDS (+=) its gradients to what the
// gradient arrays already hold; it never overwrites them. A linear layer
// stores its weight (C_out, C_in), as PyTorch does: y = x @ W^T + b.
// You may use anything in common/ (gemm, ...) and your own answers to
// other exercises (then an exercise you have not done yet fails too).
// Chapter 2's linear_forward is fine to use in exercise 3.4; calling its
// linear_backward in exercise 3.3 would pass the tests and teach nothing.
#ifndef CH3_EXERCISES_H
#define CH3_EXERCISES_H

#include <stddef.h>

// Exercise 3.1 - ReLU, forward and backward.
// out[i] = max(0, inp[i]).
// dinp[i] += dout[i] where inp[i] > 0, and nothing where inp[i] <= 0
// (the derivative at the kink 0 is taken to be 0, as in PyTorch).
void ex_relu_forward(float *out,          // (n,)
                     const float *inp,    // (n,)
                     size_t n);
void ex_relu_backward(float *dinp,        // (n,)
                      const float *dout,  // (n,)
                      const float *inp,   // (n,)
                      size_t n);

// Exercise 3.2 - GELU, the exact form, forward and backward.
// out[i] = x Phi(x) with x = inp[i] and Phi(x) = (1 + erf(x / sqrt(2))) / 2
// the standard normal CDF (erf, erff and erfcf are in <math.h>).
// dinp[i] += dout[i] * (Phi(x) + x phi(x)), phi(x) = exp(-x^2/2)/sqrt(2 pi).
// out within 1e-6 and dinp within 2e-6 (each plus 1e-5 relative) of
// PyTorch's F.gelu and its derivative, for |x| up to 10.
void ex_gelu_forward(float *out,          // (n,)
                     const float *inp,    // (n,)
                     size_t n);
void ex_gelu_backward(float *dinp,        // (n,)
                      const float *dout,  // (n,)
                      const float *inp,   // (n,)
                      size_t n);

// Exercise 3.3 - the backward pass of a linear layer out = inp @ weight^T
// + bias, given dout = dL/dout:
//   dinp    += dout @ weight           (skipped when dinp is NULL)
//   dweight += dout^T @ inp
//   dbias   += the sum of dout's rows  (skipped when dbias is NULL)
// Sizes are at least 1.
void ex_linear_backward(float *dinp,          // (N, C_in) or NULL
                        float *dweight,       // (C_out, C_in)
                        float *dbias,         // (C_out,) or NULL
                        const float *dout,    // (N, C_out)
                        const float *inp,     // (N, C_in)
                        const float *weight,  // (C_out, C_in)
                        int N, int C_in, int C_out);

// Exercise 3.4 - SwiGLU, forward and backward, without biases or dropout.
// For each of the N rows of x:
//   gate = x @ w_gate^T,  up = x @ w_up^T          (N, H) each, kept
//   out  = (SiLU(gate) * up) @ w_down^T            (N, C)
// with SiLU(g) = g * sigmoid(g) = g / (1 + exp(-g)), * element by element.
// The forward pass writes out, gate and up (the backward pass's cache).
// The backward pass gets dout = dL/dout, the gate and up of that forward
// pass, and ADDS dL/dx, dL/dw_gate, dL/dw_up and dL/dw_down.
void ex_swiglu_forward(float *out,            // (N, C)
                       float *gate,           // (N, H)
                       float *up,             // (N, H)
                       const float *x,        // (N, C)
                       const float *w_gate,   // (H, C)
                       const float *w_up,     // (H, C)
                       const float *w_down,   // (C, H)
                       int N, int C, int H);
void ex_swiglu_backward(float *dx,            // (N, C)
                        float *dw_gate,       // (H, C)
                        float *dw_up,         // (H, C)
                        float *dw_down,       // (C, H)
                        const float *dout,    // (N, C)
                        const float *gate,    // (N, H)
                        const float *up,      // (N, H)
                        const float *x,       // (N, C)
                        const float *w_gate,  // (H, C)
                        const float *w_up,    // (H, C)
                        const float *w_down,  // (C, H)
                        int N, int C, int H);

#endif
