// Exercise 5.4 - reference answer: sort (probability, index) pairs, walk
// down them until the total reaches p, keep that prefix.
#include <stdlib.h>

#include "ch5_exercises.h"
#include "mem.h"

typedef struct {
    float p;
    int i;
} Token;

static int cmp_token(const void *a, const void *b) {
    const Token *x = a, *y = b;
    if (x->p != y->p) return x->p < y->p ? 1 : -1;   // larger first
    return (x->i > y->i) - (x->i < y->i);            // then lower index
}

void ex_top_p(float *probs, int V, float p) {
    if (p >= 1) return;               // every token kept, the row as it is
    Token *order = xmalloc((size_t)V * sizeof *order);
    for (int v = 0; v < V; v++) order[v] = (Token){probs[v], v};
    qsort(order, (size_t)V, sizeof *order, cmp_token);
    int keep = V;                     // unless the total reaches p first
    if (p <= 0) keep = 1;
    else {
        double total = 0;
        for (int n = 0; n < V; n++) {
            total += order[n].p;
            if (total >= p) { keep = n + 1; break; }
        }
    }
    double kept = 0;
    for (int n = 0; n < keep; n++) kept += order[n].p;
    for (int n = keep; n < V; n++) probs[order[n].i] = 0.0f;
    for (int n = 0; n < keep; n++)
        probs[order[n].i] = (float)(order[n].p / kept);
    free(order);
}
