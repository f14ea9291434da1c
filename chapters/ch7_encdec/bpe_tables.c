// bpe_tables.c - the hash tables and the merge loop of bpe_tables.h.
#include "bpe_tables.h"

#include <stdlib.h>
#include <string.h>

#include "mem.h"

static uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

// ---- (a, b) -> an int -------------------------------------------------------

#define EMPTY UINT64_MAX

static uint64_t pair_key(int a, int b) {
    return (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
}

void pairmap_init(PairMap *m, size_t n) {
    m->cap = 16;
    while (m->cap < 2 * n) m->cap *= 2;
    m->keys = xmalloc(m->cap * sizeof *m->keys);
    m->vals = xmalloc(m->cap * sizeof *m->vals);
    memset(m->keys, 0xff, m->cap * sizeof *m->keys);
    m->n = 0;
}

void pairmap_free(PairMap *m) {
    free(m->keys);
    free(m->vals);
    *m = (PairMap){0};
}

static size_t pm_slot(const PairMap *m, uint64_t key) {
    size_t i = mix64(key) & (m->cap - 1);
    while (m->keys[i] != EMPTY && m->keys[i] != key) i = (i + 1) & (m->cap - 1);
    return i;
}

int pairmap_get(const PairMap *m, int a, int b) {
    if (!m->cap) return -1;
    size_t i = pm_slot(m, pair_key(a, b));
    return m->keys[i] == EMPTY ? -1 : m->vals[i];
}

static void pm_put_key(PairMap *m, uint64_t key, int val) {
    if (2 * (m->n + 1) > m->cap) {   // at most half full
        PairMap old = *m;
        pairmap_init(m, old.cap);
        for (size_t i = 0; i < old.cap; i++)
            if (old.keys[i] != EMPTY) pm_put_key(m, old.keys[i], old.vals[i]);
        pairmap_free(&old);
    }
    size_t i = pm_slot(m, key);
    if (m->keys[i] == EMPTY) m->n++;
    m->keys[i] = key;
    m->vals[i] = val;
}

void pairmap_put(PairMap *m, int a, int b, int val) {
    pm_put_key(m, pair_key(a, b), val);
}

// ---- byte strings -> 0, 1, 2, ... -------------------------------------------

static uint64_t hash_bytes(const char *s, size_t n) {
    uint64_t h = 0xcbf29ce484222325ULL;   // FNV-1a
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    return mix64(h);
}

static void st_slots(StrTab *t, size_t cap) {
    free(t->slots);
    t->cap = cap;
    t->slots = xmalloc(cap * sizeof *t->slots);
    memset(t->slots, 0xff, cap * sizeof *t->slots);
}

static size_t st_slot(const StrTab *t, const char *s, int n, uint64_t h) {
    size_t i = h & (t->cap - 1);
    for (;; i = (i + 1) & (t->cap - 1)) {
        int k = t->slots[i];
        if (k < 0 || (t->len[k] == n
                      && memcmp(t->text + t->off[k], s, (size_t)n) == 0))
            return i;
    }
}

int strtab_find(const StrTab *t, const char *s, int n) {
    if (!t->cap) return -1;
    return t->slots[st_slot(t, s, n, hash_bytes(s, (size_t)n))];
}

int strtab_add(StrTab *t, const char *s, int n) {
    if (2 * (size_t)(t->n + 1) > t->cap) {
        st_slots(t, t->cap ? 2 * t->cap : 1024);
        for (int k = 0; k < t->n; k++) {
            const char *ks = t->text + t->off[k];
            size_t i = st_slot(t, ks, t->len[k], hash_bytes(ks, t->len[k]));
            t->slots[i] = k;
        }
    }
    if (t->n == t->n_cap) {
        t->n_cap = t->n_cap ? 2 * t->n_cap : 1024;
        t->off = xrealloc(t->off, t->n_cap * sizeof *t->off);
        t->len = xrealloc(t->len, t->n_cap * sizeof *t->len);
    }
    if (t->text_len + (size_t)n > t->text_cap) {
        while (t->text_len + (size_t)n > t->text_cap)
            t->text_cap = t->text_cap ? 2 * t->text_cap : 1 << 16;
        t->text = xrealloc(t->text, t->text_cap);
    }
    memcpy(t->text + t->text_len, s, (size_t)n);
    t->off[t->n] = t->text_len;
    t->len[t->n] = n;
    t->text_len += (size_t)n;
    t->slots[st_slot(t, s, n, hash_bytes(s, (size_t)n))] = t->n;
    return t->n++;
}

void strtab_free(StrTab *t) {
    free(t->text);
    free(t->off);
    free(t->len);
    free(t->slots);
    *t = (StrTab){0};
}

// ---- the cache --------------------------------------------------------------

int idcache_get(const IdCache *c, const char *s, int n, int *out) {
    int k = strtab_find(&c->keys, s, n);
    if (k < 0) return -1;
    memcpy(out, c->ids + c->off[k], (size_t)c->n[k] * sizeof *out);
    return c->n[k];
}

void idcache_put(IdCache *c, const char *s, int n, const int *ids, int len) {
    int k = strtab_add(&c->keys, s, n);
    if (k % 1024 == 0) {
        c->off = xrealloc(c->off, (size_t)(k + 1024) * sizeof *c->off);
        c->n = xrealloc(c->n, (size_t)(k + 1024) * sizeof *c->n);
    }
    while (c->len + (size_t)len > c->cap) {
        c->cap = c->cap ? 2 * c->cap : 1 << 14;
        c->ids = xrealloc(c->ids, c->cap * sizeof *c->ids);
    }
    memcpy(c->ids + c->len, ids, (size_t)len * sizeof *ids);
    c->off[k] = c->len, c->n[k] = len;
    c->len += (size_t)len;
}

void idcache_free(IdCache *c) {
    strtab_free(&c->keys);
    free(c->off);
    free(c->n);
    free(c->ids);
    *c = (IdCache){0};
}

// ---- the merge loop ---------------------------------------------------------

int bpe_merge_word(int *sym, int len, const PairMap *rank, const int *merged) {
    //> bpe-encode-word
    // Merge the pair of lowest rank (the merge learnt first), everywhere
    // in the word, until no pair of the word was ever merged. The merges
    // apply in the order they were learnt, as they did to the training
    // words.
    for (;;) {
        int best = -1, a = 0, b = 0;
        for (int i = 0; i + 1 < len; i++) {
            int r = pairmap_get(rank, sym[i], sym[i + 1]);
            if (r >= 0 && (best < 0 || r < best))
                best = r, a = sym[i], b = sym[i + 1];
        }
        if (best < 0) break;
        int j = 0;
        for (int i = 0; i < len; j++) {
            if (i + 1 < len && sym[i] == a && sym[i + 1] == b)
                sym[j] = merged[best], i += 2;
            else sym[j] = sym[i++];
        }
        len = j;
    }
    //< bpe-encode-word
    return len;
}
