// Exercise 6.2 - one AdamW step, as torch.optim.AdamW. See
// ch6_exercises.h.
#include "ch6_exercises.h"
#include "exercise.h"

void ex_adamw_update(float *p, const float *g, float *m, float *v, size_t n,
                     int t, float lr, float wd, float beta1, float beta2,
                     float eps) {
    EXERCISE_TODO("6.2");
}
