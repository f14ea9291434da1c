#include "optim.h"

#include <math.h>
#include <stdio.h>

#include "parallel.h"

//> adamw
void adamw_update(float *p, const float *g, float *m, float *v, size_t n,
                  int t, float lr, float wd, const AdamWConfig *c) {
    const float b1 = c->beta1, b2 = c->beta2;
    // the bias corrections: m and v start at 0, so early on they
    // underestimate; dividing by 1 - beta^t undoes that on average
    const float bc1 = 1.0f - powf(b1, (float)t);
    const float bc2_sqrt = sqrtf(1.0f - powf(b2, (float)t));
    const float step = lr / bc1, decay = 1.0f - lr * wd;
    PARALLEL_FOR
    for (long i = 0; i < (long)n; i++) {
        float gi = g[i];
        m[i] = b1 * m[i] + (1.0f - b1) * gi;
        v[i] = b2 * v[i] + (1.0f - b2) * gi * gi;
        float denom = sqrtf(v[i]) / bc2_sqrt + c->eps;
        p[i] = p[i] * decay - step * m[i] / denom;
    }
}
//< adamw

//> schedule
float lr_schedule(int it, int warmup, int decay_steps, float lr_max,
                  float lr_min) {
    if (it < warmup) return lr_max * (float)(it + 1) / (float)(warmup + 1);
    if (it > decay_steps) return lr_min;
    double ratio = decay_steps > warmup
                       ? (double)(it - warmup) / (decay_steps - warmup) : 1;
    const double pi = 3.14159265358979323846;
    double coeff = 0.5 * (1.0 + cos(pi * ratio));   // 1 -> 0
    return (float)(lr_min + coeff * ((double)lr_max - lr_min));
}
//< schedule

void lr_schedule_describe(char *buf, size_t size, int steps, int warmup,
                          int decay_steps, float lr_max, float lr_min,
                          bool to_last) {
    if (lr_min == lr_max && warmup == 0)
        snprintf(buf, size, "constant");
    else if (steps <= warmup)   // the run ends inside its warmup
        snprintf(buf, size, "warmup %d: the run ends before the peak, no "
                 "cosine", warmup);
    else if (to_last)
        snprintf(buf, size, "warmup %d, cosine to the last step", warmup);
    else
        snprintf(buf, size, "warmup %d, cosine to step %d", warmup,
                 decay_steps);
}

//> clip
// The squares are summed in NORM_PARTS fixed pieces of g, in parallel, and
// the pieces' sums added in order: the same result on any thread count.
// Within a piece, 8 running sums side by side let the compiler vectorise.
#define NORM_PARTS 64

double grad_norm(const float *g, size_t n) {
    double part[NORM_PARTS];
    PARALLEL_FOR
    for (int k = 0; k < NORM_PARTS; k++) {
        size_t i = n / NORM_PARTS * k, end = k == NORM_PARTS - 1
                                                 ? n : i + n / NORM_PARTS;
        double acc[8] = {0}, sum = 0;
        for (; i + 8 <= end; i += 8)
            for (int j = 0; j < 8; j++)
                acc[j] += (double)g[i + j] * g[i + j];
        for (; i < end; i++) sum += (double)g[i] * g[i];
        for (int j = 0; j < 8; j++) sum += acc[j];
        part[k] = sum;
    }
    double sum = 0;
    for (int k = 0; k < NORM_PARTS; k++) sum += part[k];
    return sqrt(sum);
}

double clip_grad_norm(float *g, size_t n, float max_norm) {
    double norm = grad_norm(g, n);
    if (max_norm <= 0) return norm;
    double coef = max_norm / (norm + 1e-6);
    if (coef < 1) {
        float s = (float)coef;
        PARALLEL_FOR
        for (long i = 0; i < (long)n; i++) g[i] *= s;
    }
    return norm;
}
//< clip
