#include "linear.h"

#include <assert.h>
#include <string.h>

#include "gemm.h"
#include "parallel.h"

#define LIN_COLS 64   // bias-gradient columns per task (a quarter KiB)

//> linear-forward
void linear_forward(float *out, const float *inp, const float *weight,
                    const float *bias, int N, int C_in, int C_out) {
    assert(N >= 0 && C_in >= 0 && C_out >= 0);
    if (N == 0 || C_out == 0) return;
    // With a bias, every row of out starts at it and the product is added
    // (beta = 1); without, the product overwrites out (beta = 0), which
    // saves a pass over memory.
    if (bias)
        for (int n = 0; n < N; n++)
            memcpy(out + (size_t)n * C_out, bias, (size_t)C_out * sizeof *out);
    if (C_in == 0) {                        // an empty sum adds nothing
        if (!bias) memset(out, 0, (size_t)N * C_out * sizeof *out);
        return;
    }
    // out (N, C_out) = inp (N, C_in) @ weight^T (C_in, C_out) [+ out]
    gemm(false, true, N, C_out, C_in, 1.0f, inp, C_in, weight, C_in,
         bias ? 1.0f : 0.0f, out, C_out);
}
//< linear-forward

//> linear-backward
void linear_backward(float *dinp, float *dweight, float *dbias,
                     const float *dout, const float *inp,
                     const float *weight, int N, int C_in, int C_out) {
    assert(N >= 0 && C_in >= 0 && C_out >= 0);
    if (N == 0 || C_out == 0) return;
    if (dinp && C_in > 0)   // dinp (N, C_in) += dout (N, C_out) @ weight
        gemm(false, false, N, C_in, C_out, 1.0f, dout, C_out, weight, C_in,
             1.0f, dinp, C_in);
    if (C_in > 0)           // dweight (C_out, C_in) += dout^T @ inp
        gemm(true, false, C_out, C_in, N, 1.0f, dout, C_out, inp, C_in,
             1.0f, dweight, C_in);
    if (!dbias) return;
    // dbias[o] += sum over the N rows. Going down one column at a time
    // would read a float from every row; instead a block of LIN_COLS
    // columns is summed row after row into a vector of partial sums, which
    // reads each row's stretch in one go and vectorises. Each thread owns
    // whole blocks, and every column is still summed in row order, so the
    // results are repeatable whatever the thread count.
    PARALLEL_FOR
    for (int o0 = 0; o0 < C_out; o0 += LIN_COLS) {
        int m = C_out - o0 < LIN_COLS ? C_out - o0 : LIN_COLS;
        float sum[LIN_COLS] = {0};
        for (int n = 0; n < N; n++) {
            const float *row = dout + (size_t)n * C_out + o0;
            for (int j = 0; j < m; j++) sum[j] += row[j];
        }
        for (int j = 0; j < m; j++) dbias[o0 + j] += sum[j];
    }
}
//< linear-backward
