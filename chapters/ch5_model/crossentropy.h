// crossentropy.h - the language-model loss: for each position, minus the
// log of the probability the model gave the character that came next.
//
//   loss_n = logsumexp(logits[n, :]) - logits[n, target_n]
//   loss   = mean of loss_n over the positions whose target is not -1
//
// A target of -1 means "no answer here" (padding), as PyTorch's
// ignore_index=-1 in nanoGPT. Its gradient is the softmax minus the
// one-hot target, which is why the two are fused: the V probabilities
// are never stored on their own.
#ifndef CH5_CROSSENTROPY_H
#define CH5_CROSSENTROPY_H

//> xent-api
// The mean loss over the rows with a target (0 when there are none);
// *n_valid gets their number. Targets must be -1 or in [0, V).
float crossentropy_forward(const float *logits,  // (N, V)
                           const int *targets,   // (N,)
                           int N, int V, int *n_valid);

// dlogits = scale * (softmax(logits) - onehot(target)) row by row, and 0
// for rows whose target is -1. For the mean loss, scale = 1 / n_valid.
// dlogits is overwritten (not accumulated) and may be logits itself.
void crossentropy_backward(float *dlogits,        // (N, V)
                           const float *logits,   // (N, V)
                           const int *targets,    // (N,)
                           int N, int V, float scale);
//< xent-api

// log(sum_v exp(row[v])) of one row of V logits, the log-softmax's
// normaliser: the exps in float (exp_fast), summed in double, off from
// the exact value by about 1e-7 relative; NaN when a logit is NaN or
// infinite. Decoding's beam search (chapter 7) uses it too.
double crossentropy_logsumexp(const float *row, int V);

#endif
