// activation.h - the nonlinearities of the feed-forward network: ReLU and
// GELU, each with its backward pass.
//
// They work element by element on n floats, so the shape of the tensor does
// not matter: an (N, F) hidden layer is just N * F numbers. out may be the
// same array as inp. The backward passes take the forward's INPUT (not its
// output) and accumulate (+=) into dinp, like every backward in this book.
#ifndef CH3_ACTIVATION_H
#define CH3_ACTIVATION_H

#include <stddef.h>

//> activation-api
// ReLU: out = max(0, x). Its derivative is 1 for x > 0 and 0 for x <= 0
// (at the kink x = 0 we take 0, as PyTorch does).
void relu_forward(float *out,        // (n,)
                  const float *inp,  // (n,)
                  size_t n);
void relu_backward(float *dinp,       // (n,)  += dout * relu'(inp)
                   const float *dout, // (n,)
                   const float *inp,  // (n,)  what relu_forward was given
                   size_t n);

// GELU: out = x * Phi(x), Phi the standard normal CDF. GELU_EXACT is this
// erf form, PyTorch's default F.gelu(x); GELU_TANH is the tanh
// approximation of GPT-2 and BERT, F.gelu(x, approximate='tanh'). Both are
// computed in a form the compiler vectorises, within about 5e-7 of the
// exact values (PyTorch's own float32 GELU: 1.2e-6).
//
// Activation names the FFN's nonlinearity (ffn.h): one of the two GELUs,
// or RELU, max(0, x), the FFN of the 2017 Transformer (chapter 7's
// encoder and decoder). gelu_forward and gelu_backward take only the two
// GELUs.
typedef enum { GELU_EXACT, GELU_TANH, RELU } Activation;

void gelu_forward(float *out,        // (n,)
                  const float *inp,  // (n,)
                  Activation kind, size_t n);
void gelu_backward(float *dinp,       // (n,)  += dout * gelu'(inp)
                   const float *dout, // (n,)
                   const float *inp,  // (n,)  what gelu_forward was given
                   Activation kind, size_t n);
//< activation-api

// "exact", "tanh" or "relu", for messages and the --gelu flag.
const char *activation_name(Activation act);

#endif
