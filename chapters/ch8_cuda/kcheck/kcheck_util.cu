// kcheck_util.cu - the helpers that the checks share (kcheck_util.cuh).
#include "kcheck_util.cuh"

#include <stdarg.h>

extern "C" {
#include "dropout.cuh"
}

namespace kc {

// ---- inputs and results ---------------------------------------------------

float *host_randn(Rng *rng, size_t n, float std) {
    float *p = (float *)xmalloc((n ? n : 1) * sizeof *p);
    rng_normal_fill(rng, p, n, 0.0f, std);
    return p;
}

float *layernorm_input(Rng *rng, size_t n) {
    float *x = host_randn(rng, n, 3.0f);
    for (size_t i = 0; i < n; i++) x[i] += 1.5f;
    return x;
}

float *host_copy(const float *p, size_t n) {
    float *q = (float *)xmalloc((n ? n : 1) * sizeof *q);
    memcpy(q, p, n * sizeof *q);
    return q;
}

float *to_device(const float *h, size_t n) {
    float *d = cuda_alloc_floats(n);
    cuda_upload(d, h, n);
    return d;
}

void report_sizes(KReport *rep, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rep->sizes, sizeof rep->sizes, fmt, ap);
    va_end(ap);
}

// Appends a result of error err against tol, at the report's sizes (a
// full report keeps what it has: KCHECK_MAX is more than any check
// appends).
static void add_result(KReport *rep, const char *name, double err,
                       double tol) {
    if (rep->n >= KCHECK_MAX) return;
    KResult *r = &rep->r[rep->n++];
    snprintf(r->name, sizeof r->name, "%s", name);
    snprintf(r->sizes, sizeof r->sizes, "%s", rep->sizes);
    r->err = err;
    r->tol = tol;
    r->ok = r->err <= tol;   // false for NaN
}

double relative_error(const float *got, const float *want, size_t n) {
    double diff = 0, scale = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - want[i]);
        if (diff == diff && !(d <= diff)) diff = d;   // a NaN sticks
        if (fabs(want[i]) > scale) scale = fabs(want[i]);
    }
    return diff / (scale > 0 ? scale : 1.0);
}

size_t bits_differ(const float *a, const float *b, size_t n) {
    size_t differ = 0;
    for (size_t i = 0; i < n; i++)
        differ += memcmp(&a[i], &b[i], sizeof *a) != 0;
    return differ;
}

void compare_host(KReport *rep, const char *name, const float *got,
                  const float *want, size_t n, double tol) {
    add_result(rep, name, relative_error(got, want, n), tol);
}

void compare(KReport *rep, const char *name, const float *got_dev,
             const float *want, size_t n, double tol) {
    float *got = (float *)xmalloc((n ? n : 1) * sizeof *got);
    cuda_download(got, got_dev, n);
    compare_host(rep, name, got, want, n, tol);
    free(got);
}

void compare_value(KReport *rep, const char *name, double got, double want,
                   double tol) {
    add_result(rep, name, fabs(got - want) / (want != 0 ? fabs(want) : 1.0),
               tol);
}

void report_value(KReport *rep, const char *name, double value, double tol) {
    add_result(rep, name, fabs(value), tol);
}

bool skip_without_bf16(KReport *rep, bool needed) {
    if (!needed || cuda_compute_capability() >= 80) return false;
    if (!rep->sizes[0]) report_sizes(rep, "bf16");
    int n = rep->n;
    add_result(rep, "bf16, tensor cores", 0, 0);
    if (rep->n > n) rep->r[n].skipped = true;
    return true;
}

void cuda_free_all(std::initializer_list<void *> dev) {
    for (void *p : dev) cuda_free(p);
}

void free_all(std::initializer_list<void *> host) {
    for (void *p : host) free(p);
}

// ---- guards past the outputs ----------------------------------------------

static const float GUARD_VALUE = -12345.0f;

float *to_device_guarded(const float *h, size_t n) {
    float guard[OUT_GUARD];
    for (int i = 0; i < OUT_GUARD; i++) guard[i] = GUARD_VALUE;
    float *d = cuda_alloc_floats(n + OUT_GUARD);
    cuda_upload(d + n, guard, OUT_GUARD);
    if (h) cuda_upload(d, h, n);
    return d;
}

float *nan_guarded(size_t n) {
    float *nan = (float *)xmalloc((n ? n : 1) * sizeof *nan);
    for (size_t i = 0; i < n; i++) nan[i] = NAN;
    float *d = to_device_guarded(nan, n);
    free(nan);
    return d;
}

int guard_damage(const float *d, size_t n) {
    float guard[OUT_GUARD];
    cuda_download(guard, d + n, OUT_GUARD);
    int bad = 0;
    for (int i = 0; i < OUT_GUARD; i++) bad += !(guard[i] == GUARD_VALUE);
    return bad;
}

// ---- bf16 -----------------------------------------------------------------

// Rather than by the bit trick of the emulation: the two bf16 values on
// either side of x (x cut to its top 16 bits, and the next bf16 away from
// zero, an ulp of x's exponent further), whichever is nearer in exact
// double arithmetic; a tie goes to the one whose last bit is 0. For a
// NaN, any NaN will do.
uint16_t bf16_nearest(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    uint32_t cut = u & 0xffff0000u;
    uint16_t k = (uint16_t)(cut >> 16);
    if (isinf(x) || isnan(x)) return isnan(x) ? 0x7fff : k;
    float lo;
    memcpy(&lo, &cut, sizeof lo);
    int e = (int)((u >> 23) & 0xff);   // 0: a subnormal, spaced as e = 1
    double ulp = ldexp(1.0, (e ? e : 1) - 127 - 7);
    double a = fabs((double)x), below = a - fabs((double)lo);
    double above = fabs((double)lo) + ulp - a;
    if (above < below || (above == below && (k & 1))) k++;
    return k;   // a carry into the exponent is right, up to infinity
}

float bf16_value(uint16_t k) {
    uint32_t u = (uint32_t)k << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

void round_bf16(float *x, size_t n) {
    for (size_t i = 0; i < n; i++) x[i] = bf16_value(bf16_nearest(x[i]));
}

size_t copy_mismatches(const uint16_t *copy_dev, const float *of_dev,
                       size_t n) {
    float *of = (float *)xmalloc((n ? n : 1) * sizeof *of);
    uint16_t *copy = (uint16_t *)xmalloc((n ? n : 1) * sizeof *copy);
    cuda_download(of, of_dev, n);
    CUDA_CHECK(cudaMemcpy(copy, copy_dev, n * sizeof *copy,
                          cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += copy[i] != bf16_nearest(of[i]);
    free(of), free(copy);
    return bad;
}

// ---- dropout --------------------------------------------------------------

float *expected_mask(float p, uint64_t seed, uint64_t offset, size_t n) {
    float *m = (float *)xmalloc((n ? n : 1) * sizeof *m);
    float scale = 1.0f / (1.0f - p);
    for (size_t i = 0; i < n; i++)
        m[i] = dropout_uniform(seed, offset + i) < p ? 0.0f : scale;
    return m;
}

// ---- the small GPT --------------------------------------------------------

GptConfig small_gpt(int block_size, int n_embd) {
    GptConfig cfg = gpt_config_default(GPT_VOCAB);
    cfg.block_size = block_size, cfg.n_layer = 2, cfg.n_head = 4;
    cfg.n_embd = n_embd, cfg.n_ffn = 4 * n_embd, cfg.dropout = 0.0f;
    return cfg;
}

void spread_1d_weights(Gpt *m, Rng *rng) {
    for (int i = 0; i < m->n_tensors; i++)
        if (m->tensors[i].ndim == 1)
            rng_normal_fill(rng, m->params + m->tensors[i].offset,
                            (size_t)m->tensors[i].shape[0], 0.5f, 0.3f);
}

}   // namespace kc
