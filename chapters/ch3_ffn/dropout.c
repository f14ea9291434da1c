#include "dropout.h"

#include <string.h>

#include "parallel.h"

int dropout_check_p(float p, const char *what, Error *err) {
    if (!(p >= 0.0f && p < 1.0f))           // also catches NaN
        return error_set(err, "%s must be in [0, 1), got %g", what,
                         (double)p);
    return 0;
}

//> dropout
int dropout_forward(float *out, float *mask, const float *inp, float p,
                    Rng *rng, size_t n, Error *err) {
    if (dropout_check_p(p, "dropout: p", err) != 0) return -1;
    if (p == 0.0f) {                        // the identity: draws nothing
        if (out != inp) memmove(out, inp, n * sizeof *out);
        PARALLEL_FOR
        for (size_t i = 0; i < n; i++) mask[i] = 1.0f;
        return 0;
    }
    if (!rng)
        return error_set(err, "dropout: p = %g needs a random number "
                         "generator, got none", (double)p);
    float scale = 1.0f / (1.0f - p);
    // One draw per element, in order: the same mask on any thread count.
    // The draws land in mask first (rng_uniform_fill makes them in one
    // vectorised loop), then become 0 or the scale.
    rng_uniform_fill(rng, mask, n);
    PARALLEL_FOR
    for (size_t i = 0; i < n; i++) {
        mask[i] = mask[i] < p ? 0.0f : scale;
        out[i] = inp[i] * mask[i];
    }
    return 0;
}

void dropout_backward(float *dinp, const float *dout, const float *mask,
                      size_t n) {
    PARALLEL_FOR
    for (size_t i = 0; i < n; i++) dinp[i] += dout[i] * mask[i];
}
//< dropout
