// Exercise 6.2 - reference answer: the bias corrections are the same for
// every element, so they are computed once; then one loop does decay,
// moments and step, in torch.optim.AdamW's order.
#include <math.h>

#include "ch6_exercises.h"

void ex_adamw_update(float *p, const float *g, float *m, float *v, size_t n,
                     int t, float lr, float wd, float beta1, float beta2,
                     float eps) {
    // m and v start at 0 and so are too small early on; dividing by
    // 1 - beta^t undoes that (both factors are 1 - beta at t = 1)
    float bc1 = 1.0f - powf(beta1, (float)t);
    float bc2_sqrt = sqrtf(1.0f - powf(beta2, (float)t));
    float step = lr / bc1;
    float decay = 1.0f - lr * wd;
    for (size_t i = 0; i < n; i++) {
        p[i] *= decay;                           // decoupled: not in m, v
        m[i] = beta1 * m[i] + (1.0f - beta1) * g[i];
        v[i] = beta2 * v[i] + (1.0f - beta2) * g[i] * g[i];
        float denom = sqrtf(v[i]) / bc2_sqrt + eps;
        p[i] -= step * m[i] / denom;
    }
}
