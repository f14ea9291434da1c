// Exercise 5.2 - reference answer: every angle in double, rounded once.
#include <math.h>

#include "ch5_exercises.h"

void ex_sinusoidal_table(float *pe, int T, int C) {
    for (int t = 0; t < T; t++) {
        float *row = pe + (size_t)t * C;
        for (int j = 0; j < C; j++) {
            int i = j / 2;                       // channel j is in pair i
            double w = pow(10000.0, -2.0 * i / C);
            double angle = t * w;
            row[j] = (float)(j % 2 == 0 ? sin(angle) : cos(angle));
        }
    }
}
