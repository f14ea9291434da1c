// chart.h - the losses of a run's evaluations, and a text chart of them
// that fits an 80-column terminal.
#ifndef CH6_CHART_H
#define CH6_CHART_H

#include <stdio.h>

typedef struct {
    int *steps;             // the steps of the evaluations
    double *train, *val;    // their losses
    int n, cap;
} Curve;

void curve_add(Curve *c, int step, double train, double val);
void curve_free(Curve *c);

// The chart: '*' train, 'o' val, '@' where both fall in one cell; the
// y axis from the lowest to the highest loss, the x axis by step.
// Nothing for fewer than two evaluations.
void curve_draw(const Curve *c, FILE *out);

#endif
