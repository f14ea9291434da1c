// Exercise 6.3 - reference answer: three regions, the fraction r and the
// cosine in double.
#include <math.h>

#include "ch6_exercises.h"

float ex_lr_schedule(int it, int warmup, int decay_steps, float lr_max,
                     float lr_min) {
    if (it < warmup)                             // 1/(w+1) .. w/(w+1)
        return (float)((double)lr_max * (it + 1) / (warmup + 1));
    if (it > decay_steps) return lr_min;
    const double pi = 3.14159265358979323846;
    double r = (double)(it - warmup) / (decay_steps - warmup);   // 0 .. 1
    double coeff = 0.5 * (1.0 + cos(pi * r));                     // 1 .. 0
    return (float)(lr_min + coeff * ((double)lr_max - lr_min));
}
