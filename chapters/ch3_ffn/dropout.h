// dropout.h - inverted dropout, the regulariser nanoGPT puts after the
// feed-forward network (and after attention, and on the embeddings).
//
// In training, each element is zeroed with probability p and the survivors
// are scaled by 1 / (1 - p), so that the expected value of every output is
// its input and nothing needs rescaling at evaluation time, when p = 0.
//
// The random draws, exactly: for i = 0, 1, ..., n-1 in order, one
// u_i = rng_uniform(rng) (24 random bits in [0, 1)); element i is dropped
// when u_i < p and kept otherwise. So dropout over n elements advances the
// generator by exactly n draws, and since rng_uniform draws what torch.rand
// draws, the mask is (torch.rand(n) >= p) after the same seed. (That is
// not the mask nn.Dropout would draw; PyTorch draws it another way.) With
// p = 0 the forward pass is the identity and draws nothing at all.
#ifndef CH3_DROPOUT_H
#define CH3_DROPOUT_H

#include <stddef.h>

#include "error.h"
#include "rng.h"

//> dropout-api
// out[i] = inp[i] * mask[i], where mask[i] is 0 (dropped) or 1 / (1 - p)
// (kept): the mask holds the scale, so the backward pass is one multiply.
// out may be the same array as inp. Returns 0, or -1 with a message when p
// is not in [0, 1) or a generator is missing (rng may be NULL when p = 0).
int dropout_forward(float *out,        // (n,)
                    float *mask,       // (n,) written, for the backward
                    const float *inp,  // (n,)
                    float p, Rng *rng, size_t n, Error *err);

// dinp += dout * mask: a dropped element passes no gradient back, a kept
// one passes it scaled by 1 / (1 - p), the same factor as forward.
void dropout_backward(float *dinp,        // (n,)
                      const float *dout,  // (n,)
                      const float *mask,  // (n,) from dropout_forward
                      size_t n);
//< dropout-api

// 0 when p is a valid dropout probability, else -1 with the message
// "<what> must be in [0, 1), got <p>" (what: "dropout: p", say).
int dropout_check_p(float p, const char *what, Error *err);

#endif
