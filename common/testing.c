#include "testing.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool diff_pattern(const float *got, const double *want_d,
                         const float *want_f, size_t n, double atol,
                         double rtol, char *hint, size_t size);

// The comparison of one element: within atol + rtol |want|; where want is
// not finite, only the same infinity, or a NaN for a NaN, passes.
static bool passes(double g, double w, double atol, double rtol) {
    return isfinite(w) ? isfinite(g) && fabs(g - w) <= atol + rtol * fabs(w)
                       : g == w || (isnan(g) && isnan(w));
}

static int close_impl(const char *what, const float *got,
                      const double *want_d, const float *want_f, size_t n,
                      double atol, double rtol, char *msg, size_t size) {
    size_t bad = 0, first = 0, worst = 0;
    double max_diff = 0;
    for (size_t i = 0; i < n; i++) {
        double w = want_d ? want_d[i] : (double)want_f[i];
        double g = got[i];
        double d = fabs(g - w);            // NaN when either one is NaN
        if (!passes(g, w, atol, rtol) && bad++ == 0) first = i;
        if (isnan(d)) d = INFINITY;        // a NaN counts as the worst
        if (d > max_diff || (i == 0 && d == max_diff)) {
            max_diff = d;
            worst = i;
        }
    }
    if (bad == 0) return 1;
    double wf = want_d ? want_d[first] : (double)want_f[first];
    int at = snprintf(msg, size,
             "%s: %zu of %zu elements differ; first at index %zu: got %.9g, "
             "want %.9g (atol %g, rtol %g); largest difference %.3g at "
             "index %zu", what, bad, n, first, (double)got[first], wf, atol,
             rtol, max_diff, worst);
    if (at > 0 && (size_t)at + 3 < size) {
        char hint[200];
        if (diff_pattern(got, want_d, want_f, n, atol, rtol, hint,
                         sizeof hint))
            snprintf(msg + at, size - (size_t)at, "; %s", hint);
    }
    return 0;
}

// ---- what the differing elements have in common ----------------------------

static double want_at(const double *want_d, const float *want_f, size_t i) {
    return want_d ? want_d[i] : (double)want_f[i];
}

// Whether every element that fails the comparison is f(want) = scale *
// want + shift instead, to twice the comparison's tolerance (atol scaled
// with the factor too: a result off by a factor carries its rounding
// errors times that factor).
static bool all_fit(const float *got, const double *want_d,
                    const float *want_f, size_t n, double atol, double rtol,
                    double scale, double shift) {
    double a = 2 * atol * fmax(1, fabs(scale));
    for (size_t i = 0; i < n; i++) {
        double w = want_at(want_d, want_f, i), g = got[i];
        if (passes(g, w, atol, rtol)) continue;
        double f = scale * w + shift;
        if (!(fabs(g - f) <= a + 2 * rtol * fabs(f))) return false;
    }
    return true;
}

// " (sqrt(3))", " (1/sqrt(3))" or "": a factor named as the square root
// of a whole number up to 256 (not a square) when it is one to within u,
// the relative precision of c (a scale such as 1/sqrt(HS) is the one most
// often missed); never when u leaves room for several.
static void factor_name(char *buf, size_t size, double c, double u) {
    double a2 = c * c, rel = fmax(2e-5, 2 * u);   // c^2's precision
    buf[0] = 0;
    for (int k = 2; k <= 256; k++) {
        int r = (int)lround(sqrt((double)k));
        if (r * r == k) continue;
        const char *sign = c < 0 ? "-" : "";
        if (fabs(a2 - k) <= rel * k && rel * k <= 0.05)
            snprintf(buf, size, " (%ssqrt(%d))", sign, k);
        else if (fabs(1 / a2 - k) <= rel * k && rel * k <= 0.05)
            snprintf(buf, size, " (%s1/sqrt(%d))", sign, k);
        if (buf[0]) return;
    }
}

// Looks at the elements outside the tolerance (at least 3 of them, with
// expected values that are not all the same) for one thing they share:
// got = -want (a sign), got = c want (a factor) or got = want + d (an
// offset), each to the comparison's own tolerance. Writes a one-line
// hint and returns true when one holds.
static bool diff_pattern(const float *got, const double *want_d,
                         const float *want_f, size_t n, double atol,
                         double rtol, char *hint, size_t size) {
    size_t bad = 0, big = n, other = n;
    for (size_t i = 0; i < n; i++) {
        double w = want_at(want_d, want_f, i), g = got[i];
        if (passes(g, w, atol, rtol)) continue;
        if (!isfinite(g) || !isfinite(w)) return false;
        bad++;
        // the differing element with the largest expected value gives the
        // factor and the offset most accurately
        if (big == n || fabs(w) > fabs(want_at(want_d, want_f, big)))
            big = i;
    }
    if (bad < 3) return false;   // one or two elements share anything
    double wb = want_at(want_d, want_f, big);
    // a second expected value, clearly another: else a factor and an
    // offset fit alike
    for (size_t i = 0; i < n && other == n; i++) {
        double w = want_at(want_d, want_f, i), g = got[i];
        if (!passes(g, w, atol, rtol)
            && fabs(w - wb) > 2 * (atol + rtol * fmax(fabs(w), fabs(wb))))
            other = i;
    }
    if (other == n) return false;
    if (all_fit(got, want_d, want_f, n, atol, rtol, -1, 0)) {
        snprintf(hint, size, "every differing element is the expected value "
                 "with the opposite sign: a sign flipped?");
        return true;
    }
    double c = wb != 0 ? got[big] / wb : 0;
    if (c != 0 && isfinite(c)
        && all_fit(got, want_d, want_f, n, atol, rtol, c, 0)) {
        char f[32];
        factor_name(f, sizeof f, c, (atol + rtol * fabs(wb)) / fabs(wb));
        snprintf(hint, size, "every differing element is %.5gx the expected "
                 "value%s: a missing or extra factor?", c, f);
        return true;
    }
    double d = got[big] - wb;
    if (all_fit(got, want_d, want_f, n, atol, rtol, 1, d)) {
        snprintf(hint, size, "every differing element is the expected value "
                 "%s %.5g: a constant offset (a term missing or extra?)",
                 d < 0 ? "minus" : "plus", fabs(d));
        return true;
    }
    return false;
}

int tensor_close(const char *what, const float *got, const double *want,
                 size_t n, double atol, double rtol, char *msg, size_t size) {
    return close_impl(what, got, want, NULL, n, atol, rtol, msg, size);
}

int tensor_close_f(const char *what, const float *got, const float *want,
                   size_t n, double atol, double rtol, char *msg, size_t size) {
    return close_impl(what, got, NULL, want, n, atol, rtol, msg, size);
}

int tensor_diff_hint(const float *got, const double *want, size_t n,
                     double atol, double rtol, char *hint, size_t size) {
    return diff_pattern(got, want, NULL, n, atol, rtol, hint, size);
}

int tensor_diff_hint_f(const float *got, const float *want, size_t n,
                       double atol, double rtol, char *hint, size_t size) {
    return diff_pattern(got, NULL, want, n, atol, rtol, hint, size);
}

static void grad_check_hint(char *msg, size_t size, LossFn loss, void *ctx,
                            float *param, const float *grad, size_t n,
                            double eps, double atol, double rtol);

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
    // and what the misses share, if anything (one factor: a lost scale)
    grad_check_hint(msg, size, loss, ctx, param, grad, n, eps, atol, rtol);
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

// Appends to grad_check's message what the elements that missed have in
// common (tensor_diff_hint: a factor, an offset or a sign), the numeric
// derivatives taken again: only a failed check pays for it.
static void grad_check_hint(char *msg, size_t size, LossFn loss, void *ctx,
                            float *param, const float *grad, size_t n,
                            double eps, double atol, double rtol) {
    size_t at = strlen(msg);
    double *num = at + 3 < size ? malloc(n * sizeof *num) : NULL;
    if (!num) return;
    for (size_t i = 0; i < n; i++)
        num[i] = numeric_derivative(loss, ctx, param, i, eps);
    char hint[200];
    if (diff_pattern(grad, num, NULL, n, atol, rtol, hint, sizeof hint))
        snprintf(msg + at, size - at, "; %s", hint);
    free(num);
}
