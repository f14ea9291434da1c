#include "testing.h"

#include <math.h>
#include <stdio.h>

static int close_impl(const char *what, const float *got,
                      const double *want_d, const float *want_f, size_t n,
                      double atol, double rtol, char *msg, size_t size) {
    size_t bad = 0, first = 0, worst = 0;
    double max_diff = 0;
    for (size_t i = 0; i < n; i++) {
        double w = want_d ? want_d[i] : (double)want_f[i];
        double g = got[i];
        double d = fabs(g - w);            // NaN when either one is NaN
        int ok = isfinite(w) ? (isfinite(g) && d <= atol + rtol * fabs(w))
                             : (g == w || (isnan(g) && isnan(w)));
        if (!ok && bad++ == 0) first = i;
        if (isnan(d)) d = INFINITY;        // a NaN counts as the worst
        if (d > max_diff || (i == 0 && d == max_diff)) {
            max_diff = d;
            worst = i;
        }
    }
    if (bad == 0) return 1;
    double wf = want_d ? want_d[first] : (double)want_f[first];
    snprintf(msg, size,
             "%s: %zu of %zu elements differ; first at index %zu: got %.9g, "
             "want %.9g (atol %g, rtol %g); largest difference %.3g at "
             "index %zu", what, bad, n, first, (double)got[first], wf, atol,
             rtol, max_diff, worst);
    return 0;
}

int tensor_close(const char *what, const float *got, const double *want,
                 size_t n, double atol, double rtol, char *msg, size_t size) {
    return close_impl(what, got, want, NULL, n, atol, rtol, msg, size);
}

int tensor_close_f(const char *what, const float *got, const float *want,
                   size_t n, double atol, double rtol, char *msg, size_t size) {
    return close_impl(what, got, NULL, want, n, atol, rtol, msg, size);
}

//> grad-check
// dL/dparam[i] by central differences: (L(x + eps) - L(x - eps)) / 2 eps,
// with the steps actually taken in float, and param[i] restored exactly.
double numeric_derivative(LossFn loss, void *ctx, float *param, size_t i,
                          double eps) {
    float saved = param[i];
    param[i] = (float)(saved + eps);
    double plus_eps = (double)param[i] - saved;
    double l_plus = loss(ctx);
    param[i] = (float)(saved - eps);
    double minus_eps = saved - (double)param[i];
    double l_minus = loss(ctx);
    param[i] = saved;
    return (l_plus - l_minus) / (plus_eps + minus_eps);
}

int grad_check(const char *what, LossFn loss, void *ctx, float *param,
               const float *grad, size_t n, double eps, double atol,
               double rtol, char *msg, size_t size) {
    double worst_excess = 0;
    size_t worst = n;
    double worst_num = 0;
    for (size_t i = 0; i < n; i++) {
        double numeric = numeric_derivative(loss, ctx, param, i, eps);
        double analytic = grad[i];
        double scale = fmax(fabs(numeric), fabs(analytic));
        double excess = fabs(numeric - analytic) - (atol + rtol * scale);
        if (!isfinite(analytic) || !isfinite(numeric)) excess = INFINITY;
        if (excess > worst_excess || (worst == n && excess > 0)) {
            worst_excess = excess;
            worst = i;
            worst_num = numeric;
        }
    }
    if (worst == n) return 1;
    snprintf(msg, size, "%s: gradient check failed at index %zu of %zu: "
             "analytic %.9g, numeric %.9g (atol %g, rtol %g)", what, worst,
             n, (double)grad[worst], worst_num, atol, rtol);
    return 0;
}

double grad_rel_error(LossFn loss, void *ctx, float *param,
                      const float *grad, size_t n, double eps) {
    double err = 0, scale = 0;
    for (size_t i = 0; i < n; i++) {
        double numeric = numeric_derivative(loss, ctx, param, i, eps);
        err = fmax(err, fabs(numeric - grad[i]));
        scale = fmax(scale, fabs(numeric));
    }
    return scale > 0 ? err / scale : err;
}
//< grad-check
