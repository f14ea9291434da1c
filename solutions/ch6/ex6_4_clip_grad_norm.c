// Exercise 6.4 - reference answer: the sum of squares in double, then one
// scale for every element (which keeps the gradient's direction).
#include <math.h>

#include "ch6_exercises.h"

double ex_clip_grad_norm(float *g, size_t n, float max_norm) {
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += (double)g[i] * g[i];
    double norm = sqrt(sum);
    if (max_norm <= 0) return norm;
    double coef = max_norm / (norm + 1e-6);
    if (coef < 1.0)                  // below max_norm: leave g untouched
        for (size_t i = 0; i < n; i++) g[i] = (float)(g[i] * coef);
    return norm;
}
