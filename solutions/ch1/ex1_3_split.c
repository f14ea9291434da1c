// Exercise 1.3 - reference answer.
#include "ch1_exercises.h"

void ex_split(const int *ids, size_t n, double train_frac, Split *train,
              Split *val) {
    size_t cut = (size_t)(train_frac * (double)n);   // floor, as int() does
    if (cut > n) cut = n;
    *train = (Split){ids, cut};
    *val = (Split){ids + cut, n - cut};
}
