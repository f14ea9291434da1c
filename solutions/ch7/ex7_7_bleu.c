// Exercise 7.7 - reference answer: the clipped n-gram matches of one
// sentence by comparing every n-gram with every other, and the corpus
// score from the summed statistics, sacreBLEU's way.
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "ch7_exercises.h"
#include "exercise.h"

// Whether the n words at a and at b are the same.
static bool same(const char *const *a, const char *const *b, int n) {
    for (int k = 0; k < n; k++)
        if (strcmp(a[k], b[k]) != 0) return false;
    return true;
}

// How many times the n-gram g occurs in the words w[0..len).
static long occurrences(const char *const *g, int n, const char *const *w,
                        int len) {
    long c = 0;
    for (int i = 0; i + n <= len; i++) c += same(g, w + i, n);
    return c;
}

void ex_bleu_ngram_stats(long counts[4], long totals[4],
                         const char *const *hyp, int nh,
                         const char *const *ref, int nr) {
    for (int n = 1; n <= 4; n++) {
        counts[n - 1] = 0;
        totals[n - 1] = nh >= n ? nh - n + 1 : 0;
        for (int i = 0; i + n <= nh; i++) {
            // count each distinct n-gram once: at its first occurrence
            bool seen = false;
            for (int j = 0; j < i && !seen; j++)
                seen = same(hyp + j, hyp + i, n);
            if (seen) continue;
            long in_hyp = occurrences(hyp + i, n, hyp, nh);
            long in_ref = occurrences(hyp + i, n, ref, nr);
            counts[n - 1] += in_hyp < in_ref ? in_hyp : in_ref;
        }
    }
}

double ex_bleu_score(double precisions[4], double *bp, const long counts[4],
                     const long totals[4], long sys_len, long ref_len) {
    *bp = 1.0;
    if (sys_len < ref_len)
        *bp = sys_len > 0 ? exp(1 - (double)ref_len / (double)sys_len) : 0;
    bool any = false;
    for (int n = 0; n < 4; n++) {
        precisions[n] = 0;
        any = any || counts[n] > 0;
    }
    if (!any) return 0;
    double smooth = 1;
    for (int n = 0; n < 4 && totals[n] > 0; n++) {
        if (counts[n] == 0) {
            smooth *= 2;
            precisions[n] = 100.0 / (smooth * (double)totals[n]);
        } else {
            precisions[n] = 100.0 * (double)counts[n] / (double)totals[n];
        }
    }
    double sum = 0;
    for (int n = 0; n < 4; n++)
        sum += precisions[n] > 0 ? log(precisions[n]) : -9999999999.0;
    return *bp * exp(sum / 4);
}
