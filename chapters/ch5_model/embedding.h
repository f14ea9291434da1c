// embedding.h - the model's first layer: a row lookup plus positions.
//
//   out[b, t, :] = scale * wte[idx[b, t], :] + pos[t, :]
//
// scale is 1 in a GPT; chapter 7's encoder-decoder, as "Attention Is All
// You Need", multiplies the rows by sqrt(C). pos is the learned wpe or the fixed sinusoidal table; both are (at
// least T, C). An embedding is a linear layer applied to a one-hot vector,
// so its backward pass is the matching scatter: the gradient of row v of
// wte is the sum of dout over every position where idx is v.
#ifndef CH5_EMBEDDING_H
#define CH5_EMBEDDING_H

//> embedding-api
// Ids are not checked here (gpt_forward checks them once).
void embedding_forward(float *out,          // (B, T, C)
                       const int *idx,      // (B, T) ids in [0, V)
                       const float *wte,    // (V, C)
                       float scale,         // of the rows: 1, or sqrt(C)
                       const float *pos,    // (>= T, C)
                       int B, int T, int C);

// dwte[idx[b,t]] += scale * dout[b,t]; dwpos[t] += sum over b of dout[b,t]
// (skipped when dwpos is NULL: the sinusoidal table learns nothing).
void embedding_backward(float *dwte,        // (V, C)
                        float *dwpos,       // (>= T, C) or NULL
                        const float *dout,  // (B, T, C)
                        const int *idx,     // (B, T)
                        float scale,        // as in the forward pass
                        int B, int T, int C);
//< embedding-api

#endif
