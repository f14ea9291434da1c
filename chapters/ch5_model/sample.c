#include "sample.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"

int sample_options_check(const SampleOptions *o, Error *err) {
    if (!(o->temperature >= 0) || isinf(o->temperature))
        return error_set(err, "sampling: temperature must be >= 0 (0 is "
                         "greedy), got %g", o->temperature);
    if (o->top_k < 0)
        return error_set(err, "sampling: top-k must be >= 0 (0 is off), "
                         "got %d", o->top_k);
    if (!(o->top_p > 0 && o->top_p <= 1))
        return error_set(err, "sampling: top-p must be in (0, 1] (1 is "
                         "off), got %g", o->top_p);
    return 0;
}

void sampler_init(Sampler *s, int V) {
    s->V = V;
    s->probs = alloc_floats((size_t)V);
    s->sorted = xcalloc((size_t)V, sizeof *s->sorted);
}

size_t sampler_floats(int V) {
    Sampler s;
    return (size_t)V + mem_floats((size_t)V * sizeof *s.sorted);
}

void sampler_free(Sampler *s) {
    free(s->probs);
    free(s->sorted);
    memset(s, 0, sizeof *s);
}

// Descending by value, ascending by id among equals: a total order, so
// the result never depends on the sort's whims.
static int by_value_desc(const void *a, const void *b) {
    const struct SampleSlot *x = a, *y = b;
    if (x->p != y->p) return x->p > y->p ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static void sort_desc(const float *v, int V, Sampler *s) {
    for (int i = 0; i < V; i++) s->sorted[i] = (struct SampleSlot){v[i], i};
    qsort(s->sorted, (size_t)V, sizeof *s->sorted, by_value_desc);
}

//> top-k
void top_k_filter(float *logits, int V, int k, Sampler *s) {
    if (k <= 0 || k >= V) return;
    sort_desc(logits, V, s);
    float kth = s->sorted[k - 1].p;
    for (int i = 0; i < V; i++)
        if (logits[i] < kth) logits[i] = -INFINITY;
}
//< top-k

//> top-p
void top_p_filter(float *probs, int V, float p, Sampler *s) {
    if (p >= 1) return;
    sort_desc(probs, V, s);
    // the shortest prefix of the sorted ids whose mass reaches p; the
    // most likely id is always in it
    double mass = 0;
    int keep = 0;
    while (keep < V && (keep == 0 || mass < p)) mass += s->sorted[keep++].p;
    for (int i = keep; i < V; i++) probs[s->sorted[i].id] = 0;
    for (int i = 0; i < keep; i++) probs[s->sorted[i].id] /= (float)mass;
}
//< top-p

static int argmax(const float *v, int V) {
    int best = 0;
    for (int i = 1; i < V; i++)
        if (v[i] > v[best]) best = i;
    return best;
}

//> sample-next
int sample_next(const float *logits, const SampleOptions *o, Sampler *s,
                Rng *rng) {
    int V = s->V;
    if (o->temperature == 0) return argmax(logits, V);
    float *p = s->probs;
    for (int i = 0; i < V; i++) p[i] = logits[i] / o->temperature;
    top_k_filter(p, V, o->top_k, s);
    // softmax; the maximum survives any top-k, so exp never sees +inf
    float mx = p[argmax(p, V)];
    double sum = 0;
    for (int i = 0; i < V; i++) sum += p[i] = expf(p[i] - mx);
    for (int i = 0; i < V; i++) p[i] = (float)(p[i] / sum);
    top_p_filter(p, V, o->top_p, s);
    // inverse CDF: the first id whose running total passes u
    float u = rng_uniform(rng);
    double run = 0;
    int last = 0;
    for (int i = 0; i < V; i++) {
        if (p[i] <= 0) continue;
        run += p[i];
        last = i;
        if (u < run) return i;
    }
    return last;   // u landed above a total rounded just below 1
}
//< sample-next
