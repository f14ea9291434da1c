#include "profile.h"

#include <string.h>

bool prof_on = false;
double prof_seconds[PROF_KINDS][2];

const char *prof_name(ProfKind k) {
    static const char *names[PROF_KINDS] = {
        "data (batches)", "embedding", "matmul (Linear)",
        "attention core", "normalisation", "elementwise",
        "loss (softmax + xent)", "optimiser"};
    return k < PROF_KINDS ? names[k] : "?";
}

void prof_reset(void) { memset(prof_seconds, 0, sizeof prof_seconds); }
