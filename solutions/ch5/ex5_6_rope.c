// Exercise 5.6 - reference answer: turn each (2i, 2i+1) pair of every row
// by its angle, computed in double.
#include <math.h>

#include "ch5_exercises.h"

void ex_rope(float *x, int B, int NH, int T, int HS, int pos0) {
    for (int r = 0; r < B * NH * T; r++) {       // every (b, head, t) row
        float *row = x + (size_t)r * HS;
        int pos = pos0 + r % T;
        for (int i = 0; i < HS / 2; i++) {
            double a = pos * pow(10000.0, -2.0 * i / HS);
            double c = cos(a), s = sin(a);
            double x0 = row[2 * i], x1 = row[2 * i + 1];
            row[2 * i] = (float)(x0 * c - x1 * s);
            row[2 * i + 1] = (float)(x0 * s + x1 * c);
        }
    }
}
