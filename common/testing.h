// testing.h - the runtime the unit tests share.
//
// Nothing here depends on the Check library, so these helpers can be tested
// themselves; tests/check_util.h wraps them in Check assertions.
#ifndef COMMON_TESTING_H
#define COMMON_TESTING_H

#include <stddef.h>

// Element-wise closeness: |got[i] - want[i]| <= atol + rtol * |want[i]|,
// and NaN or infinity where want is finite always fails. Returns 1 when all
// n elements pass. Otherwise returns 0 and writes into msg the first bad
// index with both values, the number of bad elements and the largest
// absolute difference (and where it is).
int tensor_close(const char *what, const float *got, const double *want,
                 size_t n, double atol, double rtol, char *msg, size_t size);

// The same, with a float32 reference.
int tensor_close_f(const char *what, const float *got, const float *want,
                   size_t n, double atol, double rtol, char *msg, size_t size);

// What the elements outside the tolerance have in common, which the
// messages above add when there is something: when at least 3 differ,
// with expected values that are not all equal, and every one of them is
//   the expected value negated:  "... the opposite sign: a sign flipped?"
//   c times it (one c for all):  "every differing element is 1.7321
//                                 (sqrt(3))x the expected value: a
//                                 missing or extra factor?"
//   it plus one constant d:      "... the expected value plus 0.5: a
//                                 constant offset (a term missing or
//                                 extra?)"
// to the comparison's own tolerance, writes that hint into hint and
// returns 1; otherwise returns 0. Mixed errors, one or two differing
// elements, NaNs and infinities give no hint.
int tensor_diff_hint(const float *got, const double *want, size_t n,
                     double atol, double rtol, char *hint, size_t size);
int tensor_diff_hint_f(const float *got, const float *want, size_t n,
                       double atol, double rtol, char *hint, size_t size);

// Central finite differences, in double, against an analytic gradient.
// loss(ctx) evaluates the scalar loss at the current values of param (it
// runs the float forward pass and reduces in double). For each of the n
// elements of param, the checker sets param[i] = x +- eps, evaluates
// (L+ - L-) / 2 eps and restores param[i] exactly. It passes when
// |numeric - analytic| <= atol + rtol * max(|numeric|, |analytic|) for all
// elements; otherwise writes the worst element into msg and returns 0.
typedef double (*LossFn)(void *ctx);
int grad_check(const char *what, LossFn loss, void *ctx, float *param,
               const float *grad, size_t n, double eps, double atol,
               double rtol, char *msg, size_t size);

// The central difference for one element (param[i] restored exactly).
double numeric_derivative(LossFn loss, void *ctx, float *param, size_t i,
                          double eps);

// For programs that print a gradient check: max |numeric - analytic| over
// the n elements divided by max |numeric| (the raw error if all are 0).
double grad_rel_error(LossFn loss, void *ctx, float *param,
                      const float *grad, size_t n, double eps);

#endif
