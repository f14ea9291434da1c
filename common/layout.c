#include "layout.h"

#include "mem.h"

size_t layout_floats(const Slot *s, int n) {
    size_t total = 0;
    for (int i = 0; i < n; i++) total += s[i].count;
    return total;
}

float *layout_point(const Slot *s, int n, float *base) {
    for (int i = 0; i < n; i++) {
        *s[i].view = s[i].count ? base : NULL;
        base += s[i].count;
    }
    return base;
}

float *layout_alloc(const Slot *s, int n) {
    float *mem = alloc_floats(layout_floats(s, n));
    layout_point(s, n, mem);
    return mem;
}

bool layout_fits(int B, int T, int cB, int cT) {
    return T <= cT && (long long)B * T <= (long long)cB * cT;
}
