// bpe.c - byte-pair encoding: learning the merges, encoding and decoding
// a line, and the tokenizer as a string. See bpe.h for the vocabulary,
// the pieces and the tie rule.
//
// Learning keeps every distinct word once with its frequency, and for
// every pair of adjacent symbols its count and the words that hold it.
// A merge then visits only the words that hold its pair: it takes their
// pairs out of the counts, rewrites them, and puts their new pairs in.
// The most frequent pair is found with a heap whose entries may be
// stale: a count that went down since its entry was pushed is noticed
// when the entry comes to the top, and pushed again with its count.
#include "bpe.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpe_tables.h"
#include "mem.h"
#include "utf8.h"

typedef struct {
    int *v;
    int n, cap;
} IntVec;

static void iv_push(IntVec *a, int x) {
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 4;
        a->v = xrealloc(a->v, (size_t)a->cap * sizeof *a->v);
    }
    a->v[a->n++] = x;
}

// ---- the pieces of a line ---------------------------------------------------

// The end of the piece that starts at s[i] (i < n): one optional space,
// then every byte up to the next space or `stop`. A UTF-8 character
// never holds the byte of a space or a newline, so bytes will do.
static size_t piece_end(const char *s, size_t i, size_t n, char stop) {
    if (s[i] == ' ') i++;
    while (i < n && s[i] != ' ' && s[i] != stop) i++;
    return i;
}

// The id of code point cp, or BPE_UNK.
static int char_id(const Bpe *t, uint32_t cp) {
    int lo = 0, hi = t->n_chars;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (t->chars[mid] < cp) lo = mid + 1;
        else hi = mid;
    }
    return lo < t->n_chars && t->chars[lo] == cp ? BPE_ALPHA + lo : BPE_UNK;
}

// ---- the tables behind encoding ---------------------------------------------

#define BPE_CACHE_MAX (1 << 20)   // words remembered by bpe_encode

struct BpeTables {
    PairMap rank;     // (a, b) -> the merge that joins them
    int *merged;      // (M,) the id merge i makes: BPE_ALPHA + A + i
    IdCache seen;     // the encoding cache: piece -> its ids
    uint32_t *cps;    // scratch for one piece
    int scratch;      // its size
};

// Fills in what encoding and decoding look up: each id's UTF-8, and the
// rank of each merged pair.
static void bpe_finish(Bpe *t) {
    int A = t->n_chars, M = t->n_merges, V = BPE_ALPHA + A + M;
    t->vocab_size = V;
    t->off = xmalloc((size_t)(V + 1) * sizeof *t->off);
    // the lengths first (a merge is as long as its two halves), then
    // the bytes
    int *n = xmalloc((size_t)V * sizeof *n);
    char u[4];
    for (int v = 0; v < V; v++)
        n[v] = v < BPE_ALPHA ? 0
             : v < BPE_ALPHA + A ? utf8_encode(t->chars[v - BPE_ALPHA], u)
             : n[t->merges[2 * (v - BPE_ALPHA - A)]]
               + n[t->merges[2 * (v - BPE_ALPHA - A) + 1]];
    size_t len = 0;
    for (int v = 0; v < V; v++) {
        if (len + (size_t)n[v] > INT_MAX) die("bpe: the vocabulary's text "
                                              "is too long");
        t->off[v] = (int)len;
        len += (size_t)n[v];
    }
    t->off[V] = (int)len;
    t->bytes = xmalloc(len + 1);
    for (int v = BPE_ALPHA; v < V; v++) {
        char *dst = t->bytes + t->off[v];
        if (v < BPE_ALPHA + A) {
            utf8_encode(t->chars[v - BPE_ALPHA], dst);
        } else {
            int a = t->merges[2 * (v - BPE_ALPHA - A)];
            int b = t->merges[2 * (v - BPE_ALPHA - A) + 1];
            memcpy(dst, t->bytes + t->off[a], (size_t)n[a]);
            memcpy(dst + n[a], t->bytes + t->off[b], (size_t)n[b]);
        }
    }
    free(n);
    t->tab = xcalloc(1, sizeof *t->tab);
    pairmap_init(&t->tab->rank, (size_t)M);
    t->tab->merged = xmalloc((size_t)(M ? M : 1) * sizeof *t->tab->merged);
    for (int i = 0; i < M; i++) {
        pairmap_put(&t->tab->rank, t->merges[2 * i], t->merges[2 * i + 1], i);
        t->tab->merged[i] = BPE_ALPHA + A + i;
    }
}

void bpe_free(Bpe *t) {
    if (t->tab) {
        BpeTables *b = t->tab;
        pairmap_free(&b->rank);
        free(b->merged);
        idcache_free(&b->seen);
        free(b->cps);
        free(b);
    }
    free(t->chars);
    free(t->merges);
    free(t->bytes);
    free(t->off);
    *t = (Bpe){0};
}

// ---- learning ---------------------------------------------------------------------

typedef struct {
    long cnt;   // the pair's count when the entry was pushed
    int p;
} HeapEntry;

typedef struct {
    // the distinct words: word w is sym[start[w] .. + len[w]], seen freq[w]
    // times
    int W;
    int *start, *len, *sym;
    long *freq;
    // the pairs: pair p is (pa[p], pb[p]), counted count[p] times in all;
    // occ[p] lists the words that hold it (and maybe some that no longer
    // do)
    PairMap index;   // (a, b) -> p
    int np, np_cap;
    int *pa, *pb;
    long *count;
    IntVec *occ;
    IntVec fresh;    // the pairs made by the merge under way
    HeapEntry *heap; // a max-heap: higher count, then smaller (a, b)
    int nheap, heap_cap;
    int *seen, stamp;   // seen[w] == stamp: word w done in this merge
} Learner;

// Whether heap entry x goes above y: the tie rule.
static bool heap_above(const Learner *L, HeapEntry x, HeapEntry y) {
    if (x.cnt != y.cnt) return x.cnt > y.cnt;
    if (L->pa[x.p] != L->pa[y.p]) return L->pa[x.p] < L->pa[y.p];
    return L->pb[x.p] < L->pb[y.p];
}

static void heap_push(Learner *L, long cnt, int p) {
    if (L->nheap == L->heap_cap) {
        L->heap_cap = L->heap_cap ? 2 * L->heap_cap : 1024;
        L->heap = xrealloc(L->heap, (size_t)L->heap_cap * sizeof *L->heap);
    }
    int i = L->nheap++;
    HeapEntry e = {cnt, p};
    while (i > 0 && heap_above(L, e, L->heap[(i - 1) / 2])) {
        L->heap[i] = L->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    L->heap[i] = e;
}

static void heap_pop(Learner *L) {
    HeapEntry e = L->heap[--L->nheap];
    int i = 0, n = L->nheap;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && heap_above(L, L->heap[c + 1], L->heap[c])) c++;
        if (!heap_above(L, L->heap[c], e)) break;
        L->heap[i] = L->heap[c];
        i = c;
    }
    if (n > 0) L->heap[i] = e;
}

// The pair to merge next, or -1 when no pair is seen twice. Counts only
// ever go down (a merge makes new pairs, all with its new symbol, and
// takes from old ones), so an entry's count is at least its pair's: the
// top entry, once its count is right, is the largest.
static int best_pair(Learner *L) {
    while (L->nheap > 0) {
        HeapEntry top = L->heap[0];
        long now = L->count[top.p];
        if (now == top.cnt) return top.p;
        heap_pop(L);
        if (now >= 2) heap_push(L, now, top.p);
    }
    return -1;
}

//> bpe-pair-update
// Adds f to the count of pair (a, b), making it if new, and (when
// record) notes that word w holds it.
static void pair_add(Learner *L, int a, int b, long f, int w, bool record) {
    int p = pairmap_get(&L->index, a, b);
    if (p < 0) {
        if (L->np == L->np_cap) {
            int c = L->np_cap = L->np_cap ? 2 * L->np_cap : 1024;
            L->pa = xrealloc(L->pa, (size_t)c * sizeof *L->pa);
            L->pb = xrealloc(L->pb, (size_t)c * sizeof *L->pb);
            L->count = xrealloc(L->count, (size_t)c * sizeof *L->count);
            L->occ = xrealloc(L->occ, (size_t)c * sizeof *L->occ);
        }
        p = L->np++;
        L->pa[p] = a, L->pb[p] = b, L->count[p] = 0;
        L->occ[p] = (IntVec){0};
        pairmap_put(&L->index, a, b, p);
        iv_push(&L->fresh, p);
    }
    L->count[p] += f;
    IntVec *o = &L->occ[p];
    if (record && (o->n == 0 || o->v[o->n - 1] != w)) iv_push(o, w);
}

// Rewrites word w with every (a, b) replaced by x, from left to right,
// and moves the counts of its pairs from the old spelling to the new.
// Only the pairs with x need w in their lists: w is already in the
// others'.
static void merge_word(Learner *L, int w, int a, int b, int x) {
    int *s = L->sym + L->start[w], n = L->len[w];
    long f = L->freq[w];
    int i = 0;
    while (i + 1 < n && !(s[i] == a && s[i + 1] == b)) i++;
    if (i + 1 >= n) return;   // an old entry of the list: not any more
    for (i = 0; i + 1 < n; i++)
        L->count[pairmap_get(&L->index, s[i], s[i + 1])] -= f;
    int j = 0;
    for (i = 0; i < n; j++) {
        if (i + 1 < n && s[i] == a && s[i + 1] == b) s[j] = x, i += 2;
        else s[j] = s[i++];
    }
    L->len[w] = n = j;
    for (i = 0; i + 1 < n; i++)
        pair_add(L, s[i], s[i + 1], f, w, s[i] == x || s[i + 1] == x);
}
//< bpe-pair-update

// Merge pair p into the new symbol x in every word that holds it.
static void apply_merge(Learner *L, int p, int x) {
    int a = L->pa[p], b = L->pb[p];
    IntVec occ = L->occ[p];   // no pair with x is p: nothing adds to it
    L->occ[p] = (IntVec){0};
    L->stamp++;
    L->fresh.n = 0;
    for (int k = 0; k < occ.n; k++) {
        int w = occ.v[k];
        if (L->seen[w] == L->stamp) continue;
        L->seen[w] = L->stamp;
        merge_word(L, w, a, b, x);
    }
    free(occ.v);
    for (int k = 0; k < L->fresh.n; k++) {
        int q = L->fresh.v[k];
        if (L->count[q] >= 2) heap_push(L, L->count[q], q);
    }
}

static void learner_free(Learner *L) {
    free(L->start);
    free(L->len);
    free(L->sym);
    free(L->freq);
    pairmap_free(&L->index);
    free(L->pa);
    free(L->pb);
    free(L->count);
    for (int p = 0; p < L->np; p++) free(L->occ[p].v);
    free(L->occ);
    free(L->fresh.v);
    free(L->heap);
    free(L->seen);
}

// The distinct pieces of the texts with their frequencies, in the order
// they first appear. Each line is checked to be UTF-8 first.
static int count_words(StrTab *words, long **freq, const char *const *texts,
                       const size_t *lens, int n_texts, Error *err) {
    int cap = 0;
    size_t room = 0;
    uint32_t *cps = NULL;
    for (int k = 0; k < n_texts; k++) {
        const char *s = texts[k];
        size_t n = lens[k], line = 0;
        for (size_t i = 0; i < n; line++) {
            const char *nl = memchr(s + i, '\n', n - i);
            size_t end = nl ? (size_t)(nl - s) : n;
            if (end - i > room)
                cps = xrealloc(cps, (room = 2 * (end - i)) * sizeof *cps);
            Error bad;
            if (memchr(s + i, '\0', end - i)) {
                free(cps);
                return error_set(err, "text %d, line %zu holds a NUL byte",
                                 k + 1, line + 1);
            }
            if (utf8_decode(s + i, end - i, cps, &bad) < 0) {
                free(cps);
                return error_set(err, "text %d, line %zu: %s", k + 1,
                                 line + 1, bad.msg);
            }
            if (end - i > INT_MAX / 2) {
                free(cps);
                return error_set(err, "text %d, line %zu is too long", k + 1,
                                 line + 1);
            }
            while (i < end) {
                size_t e = piece_end(s, i, end, '\n');
                int w = strtab_find(words, s + i, (int)(e - i));
                if (w < 0) {
                    w = strtab_add(words, s + i, (int)(e - i));
                    if (w == cap) {
                        cap = cap ? 2 * cap : 1024;
                        *freq = xrealloc(*freq, (size_t)cap * sizeof **freq);
                    }
                    (*freq)[w] = 0;
                }
                (*freq)[w]++;
                i = e;
            }
            i = end + 1;
        }
    }
    free(cps);
    return 0;
}

// The alphabet: the code points among cps[0 .. n-1], ascending, each
// once (a bit per code point, read 64 at a time).
static void find_alphabet(Bpe *t, const uint32_t *cps, long n) {
    enum { NW = 0x110000 / 64 };
    uint64_t *have = xcalloc(NW, sizeof *have);
    for (long i = 0; i < n; i++) have[cps[i] / 64] |= 1ull << (cps[i] % 64);
    int A = 0;
    for (int w = 0; w < NW; w++) A += __builtin_popcountll(have[w]);
    t->chars = xmalloc((size_t)(A ? A : 1) * sizeof *t->chars);
    t->n_chars = 0;
    for (int w = 0; w < NW; w++)
        for (uint64_t b = have[w]; b; b &= b - 1)
            t->chars[t->n_chars++] = (uint32_t)(64 * w + __builtin_ctzll(b));
    free(have);
}

// Sets up the words as symbols and counts every pair.
static int learner_init(Learner *L, Bpe *t, const char *const *texts,
                        const size_t *lens, int n_texts, Error *err) {
    StrTab words = {0};
    long *freq = NULL;
    if (count_words(&words, &freq, texts, lens, n_texts, err)) {
        strtab_free(&words);
        free(freq);
        return -1;
    }
    int W = words.n;
    uint32_t *cps = xmalloc((words.text_len + 1) * sizeof *cps);
    int *cp_start = xmalloc((size_t)(W + 1) * sizeof *cp_start);
    int *cp_len = xmalloc((size_t)(W + 1) * sizeof *cp_len);
    long total = 0;
    for (int w = 0; w < W; w++) {
        long c = utf8_decode(words.text + words.off[w], (size_t)words.len[w],
                             cps + total, NULL);   // valid: checked above
        cp_start[w] = (int)total, cp_len[w] = (int)c;
        total += c;
    }
    find_alphabet(t, cps, total);
    *L = (Learner){0};
    L->W = W;
    L->start = cp_start, L->len = cp_len, L->freq = freq;
    L->sym = xmalloc((size_t)(total + 1) * sizeof *L->sym);
    for (long i = 0; i < total; i++) L->sym[i] = char_id(t, cps[i]);
    free(cps);
    strtab_free(&words);
    L->seen = xcalloc((size_t)(W + 1), sizeof *L->seen);
    pairmap_init(&L->index, (size_t)total / 4 + 16);
    for (int w = 0; w < W; w++)
        for (int i = 0; i + 1 < L->len[w]; i++)
            pair_add(L, L->sym[L->start[w] + i], L->sym[L->start[w] + i + 1],
                     L->freq[w], w, true);
    for (int p = 0; p < L->np; p++)
        if (L->count[p] >= 2) heap_push(L, L->count[p], p);
    return 0;
}

int bpe_learn(Bpe *t, const char *const *texts, const size_t *lens,
              int n_texts, int n_merges, Error *err) {
    *t = (Bpe){0};
    if (n_merges < 0 || n_merges > (1 << 24))
        return error_set(err, "the number of merges must be in [0, %d], "
                         "not %d", 1 << 24, n_merges);
    Learner L;
    if (learner_init(&L, t, texts, lens, n_texts, err)) return -1;
    if (t->n_chars == 0) {
        learner_free(&L);
        bpe_free(t);
        return error_set(err, "no character to learn from: the texts are "
                         "empty");
    }
    int A = t->n_chars, m = 0;
    t->merges = xmalloc((size_t)(n_merges ? n_merges : 1) * 2 * sizeof(int));
    //> bpe-merge-loop
    for (; m < n_merges; m++) {
        int p = best_pair(&L);   // the most frequent pair, by the tie rule
        if (p < 0) break;        // none is seen twice
        t->merges[2 * m] = L.pa[p];
        t->merges[2 * m + 1] = L.pb[p];
        apply_merge(&L, p, BPE_ALPHA + A + m);
    }
    //< bpe-merge-loop
    t->n_merges = m;
    learner_free(&L);
    bpe_finish(t);
    return 0;
}

// ---- encoding and decoding -----------------------------------------------------

// The ids of one piece (valid UTF-8, n bytes) into out; returns how many.
static int encode_piece(Bpe *t, const char *s, int n, int *out) {
    BpeTables *tb = t->tab;
    int len = idcache_get(&tb->seen, s, n, out);
    if (len >= 0) return len;
    if (n > tb->scratch) {
        tb->scratch = n;
        tb->cps = xrealloc(tb->cps, (size_t)n * sizeof *tb->cps);
    }
    len = (int)utf8_decode(s, (size_t)n, tb->cps, NULL);
    for (int i = 0; i < len; i++) out[i] = char_id(t, tb->cps[i]);
    len = bpe_merge_word(out, len, &tb->rank, tb->merged);
    if (tb->seen.keys.n < BPE_CACHE_MAX) idcache_put(&tb->seen, s, n, out, len);
    return len;
}

int bpe_encode(Bpe *t, const char *text, size_t n, int *out, Error *err) {
    BpeTables *tb = t->tab;
    if (n > INT_MAX / 2)
        return error_set(err, "a line of %zu bytes is too long to encode", n);
    if (n > (size_t)tb->scratch) {
        tb->scratch = (int)n;
        tb->cps = xrealloc(tb->cps, n * sizeof *tb->cps);
    }
    if (utf8_decode(text, n, tb->cps, err) < 0) return -1;
    int count = 0;
    for (size_t i = 0; i < n;) {
        size_t e = piece_end(text, i, n, ' ');
        count += encode_piece(t, text + i, (int)(e - i), out + count);
        i = e;
    }
    return count;
}

static const char *const SPECIAL[] = {"<pad>", "<bos>", "<eos>", "<unk>"};
static const char REPLACEMENT[] = "\xef\xbf\xbd";   // U+FFFD

char *bpe_decode(const Bpe *t, const int *ids, int n, size_t *len,
                 Error *err) {
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        int v = ids[i];
        if (v < 0 || v >= t->vocab_size) {
            error_set(err, "token %d of %d is id %d, outside the vocabulary "
                      "[0, %d)", i + 1, n, v, t->vocab_size);
            return NULL;
        }
        total += v == BPE_UNK ? 3 : (size_t)(t->off[v + 1] - t->off[v]);
    }
    char *s = xmalloc(total + 1), *p = s;
    for (int i = 0; i < n; i++) {
        int v = ids[i];
        if (v == BPE_UNK) {
            memcpy(p, REPLACEMENT, 3), p += 3;
        } else {
            size_t k = (size_t)(t->off[v + 1] - t->off[v]);
            memcpy(p, t->bytes + t->off[v], k), p += k;
        }
    }
    *p = '\0';
    if (len) *len = total;
    return s;
}

void bpe_token_text(const Bpe *t, int id, char *buf, size_t size) {
    if (size == 0) return;
    if (id < 0 || id >= t->vocab_size) {
        snprintf(buf, size, "<id %d?>", id);
        return;
    }
    if (id < BPE_ALPHA) {
        snprintf(buf, size, "%s", SPECIAL[id]);
        return;
    }
    const char *s = t->bytes + t->off[id];
    int n = t->off[id + 1] - t->off[id];
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < n;) {
        uint32_t cp;
        int k = (unsigned char)s[i] < 0x80 ? 1 : (unsigned char)s[i] < 0xe0 ? 2
                : (unsigned char)s[i] < 0xf0 ? 3 : 4;
        utf8_decode(s + i, (size_t)k, &cp, NULL);
        char piece[16];
        if (cp == ' ') snprintf(piece, sizeof piece, "\xe2\x96\x81");   // ▁
        else if (cp < 0x20 || (cp >= 0x7f && cp <= 0xa0) || cp == 0xad)
            snprintf(piece, sizeof piece, "<U+%04X>", cp);
        else snprintf(piece, sizeof piece, "%.*s", k, s + i);
        size_t pl = strlen(piece);
        if (at + pl + 1 > size) break;   // whole characters only
        memcpy(buf + at, piece, pl + 1);
        at += pl;
        i += k;
    }
}

// ---- the tokenizer as a string -------------------------------------------------

char *bpe_to_string(const Bpe *t, size_t *len) {
    size_t cap = 64 + 4 * (size_t)t->n_chars + 24 * (size_t)t->n_merges;
    char *s = xmalloc(cap), *p = s;
    p += sprintf(p, "bpe1 %d %d\n", t->n_chars, t->n_merges);
    for (int i = 0; i < t->n_chars; i++) p += utf8_encode(t->chars[i], p);
    *p++ = '\n';
    for (int i = 0; i < t->n_merges; i++)
        p += sprintf(p, "%d %d\n", t->merges[2 * i], t->merges[2 * i + 1]);
    *p = '\0';
    if (len) *len = (size_t)(p - s);
    return s;
}

// A decimal number at *p (digits only, no leading zero, at most max);
// moves *p past it. 0, or -1.
static int parse_uint(const char **p, long max, long *out) {
    const char *s = *p;
    long v = 0;
    int n = 0;
    while (s[n] >= '0' && s[n] <= '9') {
        if (n == 9) return -1;
        v = 10 * v + (s[n++] - '0');
    }
    if (n == 0 || (n > 1 && s[0] == '0') || v > max) return -1;
    *p = s + n;
    *out = v;
    return 0;
}

// The most bytes the text of all tokens together may take in a loaded
// tokenizer. A merge is as long as its two halves, so a string of a few
// hundred bytes whose merges each join the one before with itself asks
// for 2^M bytes; learning never does that (a merged pair occurs twice in
// the text), and a real vocabulary's tokens take some kilobytes.
#define BPE_MAX_TEXT (1 << 24)

// The bytes of all tokens of t (whose merges are read), or more than
// BPE_MAX_TEXT when they would exceed it.
static size_t text_bytes(const Bpe *t) {
    int A = t->n_chars, M = t->n_merges;
    size_t *n = xmalloc(((size_t)A + (size_t)M) * sizeof *n);
    size_t total = 0;
    char u[4];
    for (int i = 0; i < A + M && total <= BPE_MAX_TEXT; i++) {
        if (i < A) {
            n[i] = (size_t)utf8_encode(t->chars[i], u);
        } else {
            size_t a = n[t->merges[2 * (i - A)] - BPE_ALPHA];
            size_t b = n[t->merges[2 * (i - A) + 1] - BPE_ALPHA];
            // both at most BPE_MAX_TEXT: the sum cannot overflow
            n[i] = a + b;
        }
        total += n[i];
    }
    free(n);
    return total;
}

#define BAD(...) do {                                                      \
        char what_[256];                                                   \
        snprintf(what_, sizeof what_, __VA_ARGS__);                        \
        error_set(err, "tokenizer string: %s (byte %zu)", what_,           \
                  (size_t)(p - s));                                        \
        goto fail;                                                         \
    } while (0)

int bpe_from_string(Bpe *out, const char *s, Error *err) {
    Bpe t = {0};
    PairMap seen = {0};
    const char *p = s;
    size_t total = strlen(s);
    long A, M;
    if (strncmp(p, "bpe1 ", 5) != 0) BAD("does not start with \"bpe1 \"");
    p += 5;
    if (parse_uint(&p, 0x110000, &A) || A < 1)
        BAD("the alphabet's size is not a number in [1, 1114112]");
    if (*p++ != ' ') BAD("expected a space after the alphabet's size");
    if (parse_uint(&p, 1 << 24, &M))
        BAD("the number of merges is not a number in [0, 16777216]");
    if (*p++ != '\n') BAD("expected a newline after the header");
    size_t left = total - (size_t)(p - s);
    if ((size_t)A > left || (size_t)M > left / 4)
        BAD("the header asks for %ld characters and %ld merges, more than "
            "%zu bytes can hold", A, M, left);
    t.chars = xmalloc((size_t)A * sizeof *t.chars);
    for (long i = 0; i < A; i++) {
        unsigned char b = (unsigned char)*p;
        int k = b < 0x80 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;
        if (b == 0) BAD("the string ends inside the alphabet");
        if (utf8_decode(p, (size_t)k, &t.chars[i], NULL) != 1)
            BAD("character %ld of the alphabet is not valid UTF-8", i + 1);
        if (i > 0 && t.chars[i] <= t.chars[i - 1])
            BAD("the alphabet is not in ascending order at character %ld",
                i + 1);
        p += k;
    }
    t.n_chars = (int)A;
    if (*p++ != '\n') BAD("expected a newline after the alphabet");
    t.merges = xmalloc((size_t)(M ? M : 1) * 2 * sizeof *t.merges);
    pairmap_init(&seen, (size_t)M);
    for (long i = 0; i < M; i++) {
        long hi = BPE_ALPHA + A + i - 1, a, b;
        if (parse_uint(&p, hi, &a) || a < BPE_ALPHA || *p++ != ' '
            || parse_uint(&p, hi, &b) || b < BPE_ALPHA || *p++ != '\n')
            BAD("merge %ld is not \"a b\" with ids in [%d, %ld]", i + 1,
                BPE_ALPHA, hi);
        int twin = pairmap_get(&seen, (int)a, (int)b);
        if (twin >= 0) BAD("merge %ld repeats merge %d", i + 1, twin + 1);
        pairmap_put(&seen, (int)a, (int)b, (int)i);
        t.merges[2 * i] = (int)a, t.merges[2 * i + 1] = (int)b;
    }
    t.n_merges = (int)M;
    if (*p) BAD("unexpected text after merge %ld", M);
    if (text_bytes(&t) > BPE_MAX_TEXT)
        BAD("the tokens' text would take more than %d bytes (merges that "
            "join long tokens again and again)", BPE_MAX_TEXT);
    pairmap_free(&seen);
    bpe_finish(&t);
    *out = t;
    return 0;
fail:
    pairmap_free(&seen);
    bpe_free(&t);
    return -1;
}
