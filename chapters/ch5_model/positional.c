#include "positional.h"

#include <math.h>

//> sinusoidal
void sinusoidal_table(float *pe, int T, int C) {
    for (int t = 0; t < T; t++) {
        float *row = pe + (long)t * C;
        for (int c = 0; c < C; c += 2) {
            // the pair's frequency: 10000^(-c/C) with c = 2i
            double w = exp(-log(10000.0) * c / C);
            row[c] = (float)sin(t * w);
            if (c + 1 < C) row[c + 1] = (float)cos(t * w);
        }
    }
}
//< sinusoidal
