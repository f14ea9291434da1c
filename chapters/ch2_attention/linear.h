// linear.h - the linear (fully connected) layer: out = inp @ weight^T + bias.
//
// It lives in chapter 2 because attention needs its projections before
// chapter 3 (the feed-forward network) explains the layer in full; chapter 3
// links this code rather than copying it.
//
// The weight is stored (C_out, C_in), row o holding the weights of output
// channel o, as PyTorch's nn.Linear stores it, so checkpoints need no
// transposes. Both functions go through gemm() (OpenBLAS).
//
// Sizes may be zero (an empty product is zero: with C_in == 0 the output is
// the bias); a negative size is a programmer error.
#ifndef CH2_LINEAR_H
#define CH2_LINEAR_H

// out[n, o] = bias[o] + sum_i inp[n, i] * weight[o, i]
void linear_forward(float *out,          // (N, C_out)
                    const float *inp,    // (N, C_in)
                    const float *weight, // (C_out, C_in)
                    const float *bias,   // (C_out,) or NULL for none
                    int N, int C_in, int C_out);

// Accumulates (+=) the gradients of the loss, given dout = dL/dout:
//   dinp    += dout @ weight        (N, C_in)    skipped when dinp is NULL
//   dweight += dout^T @ inp         (C_out, C_in)
//   dbias   += sum over n of dout   (C_out,)     skipped when dbias is NULL
void linear_backward(float *dinp,          // (N, C_in) or NULL
                     float *dweight,       // (C_out, C_in)
                     float *dbias,         // (C_out,) or NULL
                     const float *dout,    // (N, C_out)
                     const float *inp,     // (N, C_in)
                     const float *weight,  // (C_out, C_in)
                     int N, int C_in, int C_out);

#endif
