#include "bleu.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "utf8.h"

// ---- code points ------------------------------------------------------------

// A growable array of code points.
typedef struct {
    uint32_t *a;
    size_t n, cap;
} Cps;

static void cps_reserve(Cps *c, size_t cap) {
    if (cap <= c->cap) return;
    c->cap = cap < 64 ? 64 : cap;
    c->a = xrealloc(c->a, c->cap * sizeof *c->a);
}

static void cps_push(Cps *c, uint32_t cp) {
    if (c->n == c->cap) cps_reserve(c, 2 * c->cap);
    c->a[c->n++] = cp;
}

// What Python's str.split() and str.strip() take for whitespace.
static bool py_space(uint32_t c) {
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85
           || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A)
           || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F
           || c == 0x3000;
}

// Python's lower() for the scripts bleu.h names. U+0130 (I with a dot)
// becomes two code points there, 'i' and U+0307; the caller adds the
// second when this returns 'i' for it.
static uint32_t lower_cp(uint32_t c) {
    if (c >= 'A' && c <= 'Z') return c + 32;
    if (c < 0xC0) return c;
    if (c <= 0xDE) return c == 0xD7 ? c : c + 32;
    if (c == 0x130) return 'i';
    if (c == 0x178) return 0xFF;
    if ((c >= 0x100 && c <= 0x137) || (c >= 0x14A && c <= 0x177))
        return c % 2 == 0 ? c + 1 : c;
    if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E))
        return c % 2 == 1 ? c + 1 : c;
    if (c == 0x386) return 0x3AC;
    if (c >= 0x388 && c <= 0x38A) return c + 37;
    if (c == 0x38C) return 0x3CC;
    if (c == 0x38E || c == 0x38F) return c + 63;
    if (c >= 0x391 && c <= 0x3AB && c != 0x3A2) return c + 32;
    if (c >= 0x400 && c <= 0x40F) return c + 80;
    if (c >= 0x410 && c <= 0x42F) return c + 32;
    if (c == 0x1E9E) return 0xDF;
    return c;
}

// Decodes a line into c (replacing its contents), lowercased when asked.
static int decode_line(Cps *c, const char *s, size_t len, bool lowercase,
                       Error *err) {
    cps_reserve(c, len + 1);
    long n = utf8_decode(s, len, c->a, err);
    if (n < 0) return -1;
    c->n = (size_t)n;
    if (!lowercase) return 0;
    Cps t = {0};
    cps_reserve(&t, c->n + 16);
    for (size_t i = 0; i < c->n; i++) {
        cps_push(&t, lower_cp(c->a[i]));
        if (c->a[i] == 0x130) cps_push(&t, 0x307);
    }
    free(c->a);
    *c = t;
    return 0;
}

// Python's str.replace(from, to) on c, both ASCII: every occurrence,
// left to right, none overlapping.
static void replace_all(Cps *c, const char *from, const char *to) {
    size_t nf = strlen(from), nt = strlen(to), i = 0;
    while (i < c->n && c->a[i] != (uint8_t)from[0]) i++;
    if (i == c->n) return;      // the usual case: nothing to replace
    Cps t = {0};
    cps_reserve(&t, c->n + 1);
    for (i = 0; i < c->n;) {
        size_t k = 0;
        while (k < nf && i + k < c->n && c->a[i + k] == (uint8_t)from[k]) k++;
        if (k == nf) {
            for (size_t j = 0; j < nt; j++) cps_push(&t, (uint8_t)to[j]);
            i += nf;
        } else {
            cps_push(&t, c->a[i++]);
        }
    }
    free(c->a);
    *c = t;
}

// ---- the 13a tokenizer ------------------------------------------------------

static bool is_digit(uint32_t c) { return c >= '0' && c <= '9'; }
static bool is_dot_comma(uint32_t c) { return c == '.' || c == ','; }

//> bleu-13a
// The punctuation that 13a always splits off: every printable ASCII
// symbol except the apostrophe, the hyphen, the period and the comma
// (and the space, which it surrounds with spaces, harmlessly).
static bool split_always(uint32_t c) {
    return (c >= ' ' && c <= '&') || (c >= '(' && c <= '+') || c == '/'
           || (c >= ':' && c <= '@') || (c >= '[' && c <= '`')
           || (c >= '{' && c <= '~');
}

// The four rules of mteval-v13a, each a pass over the whole line that
// matches left to right and never looks at what it just wrote:
//   1. a symbol of split_always       -> " symbol "
//   2. a non-digit before '.' or ','  -> "x . "   (not "3.5", "1,000")
//   3. '.' or ',' before a non-digit  -> " . x"
//   4. a digit before '-'             -> "5 - "   ("5-6" is "5 - 6")
static void rule_pass(Cps *c, int rule) {
    Cps t = {0};
    cps_reserve(&t, 3 * c->n + 4);
    const uint32_t *a = c->a;
    size_t n = c->n;
    for (size_t i = 0; i < n;) {
        uint32_t x = a[i], y = i + 1 < n ? a[i + 1] : 0;
        bool two = i + 1 < n;
        if (rule == 1 && split_always(x)) {
            cps_push(&t, ' '), cps_push(&t, x), cps_push(&t, ' ');
        } else if (rule == 2 && two && !is_digit(x) && is_dot_comma(y)) {
            cps_push(&t, x), cps_push(&t, ' ');
            cps_push(&t, y), cps_push(&t, ' ');
            i++;
        } else if (rule == 3 && two && is_dot_comma(x) && !is_digit(y)) {
            cps_push(&t, ' '), cps_push(&t, x);
            cps_push(&t, ' '), cps_push(&t, y);
            i++;
        } else if (rule == 4 && two && is_digit(x) && y == '-') {
            cps_push(&t, x), cps_push(&t, ' ');
            cps_push(&t, y), cps_push(&t, ' ');
            i++;
        } else {
            cps_push(&t, x);
        }
        i++;
    }
    free(c->a);
    *c = t;
}

// Tokenizes c in place: the tokens joined by single spaces.
static void tokenize_13a(Cps *c) {
    while (c->n > 0 && py_space(c->a[c->n - 1])) c->n--;   // rstrip()
    replace_all(c, "<skipped>", "");
    replace_all(c, "-\n", "");
    replace_all(c, "\n", " ");
    replace_all(c, "&quot;", "\"");     // the four entities, in this order
    replace_all(c, "&amp;", "&");
    replace_all(c, "&lt;", "<");
    replace_all(c, "&gt;", ">");
    // a space at both ends, so that rules 2 and 3 see one there
    cps_push(c, ' '), cps_push(c, ' ');
    memmove(c->a + 1, c->a, (c->n - 2) * sizeof *c->a);
    c->a[0] = ' ';
    for (int rule = 1; rule <= 4; rule++) rule_pass(c, rule);
    size_t w = 0;                       // split() and ' '.join()
    for (size_t i = 0; i < c->n; i++) {
        if (!py_space(c->a[i])) c->a[w++] = c->a[i];
        else if (w > 0 && c->a[w - 1] != ' ') c->a[w++] = ' ';
    }
    if (w > 0 && c->a[w - 1] == ' ') w--;
    c->n = w;
}
//< bleu-13a

static char *encode(const Cps *c) {
    char *s = xmalloc(4 * c->n + 1);
    size_t k = 0;
    for (size_t i = 0; i < c->n; i++) k += utf8_encode(c->a[i], s + k);
    s[k] = 0;
    return s;
}

char *bleu_tokenize_13a(const char *line, size_t len, bool lowercase,
                        Error *err) {
    Cps c = {0};
    if (decode_line(&c, line, len, lowercase, err) != 0) {
        free(c.a);
        return NULL;
    }
    tokenize_13a(&c);
    char *s = encode(&c);
    free(c.a);
    return s;
}

// ---- counting n-grams -------------------------------------------------------

// A hash table of n-grams: sequences of n symbols (code points, or the
// ids of words), each a pointer into the caller's arrays, with two
// counts. Open addressing with linear probing; cleared per sentence.
typedef struct {
    const uint32_t *key;   // NULL: empty slot
    uint32_t hash;
    int n, hyp, ref;
} Slot;

typedef struct {
    Slot *s;
    size_t cap;         // slots in use: a power of 2
    size_t allocated;   // slots allocated
} Table;

// Empties t, with room for `need` n-grams at half load at most. Only the
// slots this sentence needs are cleared (and later scanned).
static void table_clear(Table *t, size_t need) {
    size_t cap = 64;
    while (cap < 2 * need) cap *= 2;
    if (cap > t->allocated) {
        free(t->s);
        t->s = xmalloc(cap * sizeof *t->s);
        t->allocated = cap;
    }
    t->cap = cap;
    memset(t->s, 0, cap * sizeof *t->s);
}

static uint32_t hash_seq(const uint32_t *k, int n) {
    uint32_t h = 2166136261u ^ (uint32_t)n;
    for (int i = 0; i < n; i++) h = (h ^ k[i]) * 16777619u;
    return h ^ (h >> 15);
}

// The slot of the n-gram k[0..n), a fresh one (counts 0) if it is new.
static Slot *table_get(Table *t, const uint32_t *k, int n) {
    uint32_t h = hash_seq(k, n);
    size_t mask = t->cap - 1, i = h & mask;
    for (;; i = (i + 1) & mask) {
        Slot *s = &t->s[i];
        if (!s->key) {
            *s = (Slot){k, h, n, 0, 0};
            return s;
        }
        if (s->hash == h && s->n == n
            && memcmp(s->key, k, (size_t)n * sizeof *k) == 0)
            return s;
    }
}

typedef struct {
    Table grams, words;
    Cps hyp, ref;              // one sentence's text
    uint32_t *hid, *rid;       // its words' ids
    size_t id_cap;
} Work;

static void work_free(Work *w) {
    free(w->grams.s), free(w->words.s);
    free(w->hyp.a), free(w->ref.a);
    free(w->hid), free(w->rid);
}

// Splits a tokenized line (words joined by single spaces) into word ids:
// equal words get equal ids. Returns the number of words.
static int word_ids(Table *words, const Cps *c, uint32_t *ids,
                    uint32_t *next) {
    int nw = 0;
    for (size_t i = 0; i < c->n;) {
        size_t j = i;
        while (j < c->n && c->a[j] != ' ') j++;
        Slot *s = table_get(words, c->a + i, (int)(j - i));
        if (s->hyp == 0) s->hyp = (int)++*next;
        ids[nw++] = (uint32_t)s->hyp;
        i = j + 1;
    }
    return nw;
}

//> bleu-clip
// One sentence's clipped matches and hypothesis n-grams, added to r. An
// n-gram matches at most as often as the reference holds it: "the the
// the" against "the cat" matches one "the", not three.
static void bleu_sentence(BleuResult *r, Table *t, const uint32_t *hyp,
                          int nh, const uint32_t *ref, int nr) {
    table_clear(t, (size_t)BLEU_ORDER * (nh + nr));
    for (int n = 1; n <= BLEU_ORDER; n++) {
        for (int i = 0; i + n <= nr; i++) table_get(t, ref + i, n)->ref++;
        for (int i = 0; i + n <= nh; i++) table_get(t, hyp + i, n)->hyp++;
        if (nh >= n) r->totals[n - 1] += nh - n + 1;
    }
    for (size_t i = 0; i < t->cap; i++) {
        const Slot *s = &t->s[i];
        if (s->key && s->hyp > 0 && s->ref > 0)
            r->counts[s->n - 1] += s->hyp < s->ref ? s->hyp : s->ref;
    }
    r->sys_len += nh;
    r->ref_len += nr;
}
//< bleu-clip

// Sentence k's hypothesis and reference as code points in w; 0, or -1
// with a message naming which of the two is bad.
static int decode_pair(Work *w, const char *hyp, const char *ref, int k,
                       bool lowercase, Error *err) {
    Error e;
    bool hyp_bad = decode_line(&w->hyp, hyp, strlen(hyp), lowercase, &e) != 0;
    if (hyp_bad || decode_line(&w->ref, ref, strlen(ref), lowercase, &e) != 0)
        return error_set(err, "%s %d: %s", hyp_bad ? "hypothesis"
                         : "reference", k + 1, e.msg);
    return 0;
}

int bleu_corpus(BleuResult *r, const char *const *hyps,
                const char *const *refs, int n, bool lowercase, Error *err) {
    *r = (BleuResult){.lowercase = lowercase};
    Work w = {0};
    int rc = 0;
    for (int k = 0; k < n && rc == 0; k++) {
        if ((rc = decode_pair(&w, hyps[k], refs[k], k, lowercase, err)))
            break;
        tokenize_13a(&w.hyp);
        tokenize_13a(&w.ref);
        size_t need = w.hyp.n + w.ref.n + 1;   // words <= characters
        if (need > w.id_cap) {
            w.id_cap = need;
            w.hid = xrealloc(w.hid, need * sizeof *w.hid);
            w.rid = xrealloc(w.rid, need * sizeof *w.rid);
        }
        table_clear(&w.words, need);
        uint32_t next = 0;
        int nh = word_ids(&w.words, &w.hyp, w.hid, &next);
        int nr = word_ids(&w.words, &w.ref, w.rid, &next);
        bleu_sentence(r, &w.grams, w.hid, nh, w.rid, nr);
    }
    work_free(&w);
    if (rc == 0) bleu_compute(r);
    return rc;
}

//> bleu-score
// The brevity penalty and the geometric mean of the four precisions, in
// percent. The k-th order without a single match counts 1 / 2^k matches
// ("exp" smoothing), so that one missing 4-gram does not zero the score.
// An order without any n-gram (every hypothesis shorter than n words)
// ends the loop: its precision stays 0 and so does the score.
void bleu_compute(BleuResult *r) {
    double c = (double)r->sys_len, ref = (double)r->ref_len;
    r->bp = 1.0;
    if (r->sys_len < r->ref_len) r->bp = c > 0 ? exp(1 - ref / c) : 0.0;
    bool any = false;
    for (int n = 0; n < BLEU_ORDER; n++) {
        r->precisions[n] = 0.0;
        any = any || r->counts[n] > 0;
    }
    r->score = 0.0;
    if (!any) return;
    double smooth = 1.0;
    for (int n = 0; n < BLEU_ORDER && r->totals[n] > 0; n++) {
        if (r->counts[n] == 0) {
            smooth *= 2;
            r->precisions[n] = 100.0 / (smooth * (double)r->totals[n]);
        } else {
            r->precisions[n] = 100.0 * (double)r->counts[n]
                               / (double)r->totals[n];
        }
    }
    double sum = 0.0;   // log 0 is taken as -9999999999, as sacreBLEU does
    for (int n = 0; n < BLEU_ORDER; n++)
        sum += r->precisions[n] > 0 ? log(r->precisions[n]) : -9999999999.0;
    r->score = r->bp * exp(sum / BLEU_ORDER);
}
//< bleu-score

// ---- chrF -------------------------------------------------------------------

// The text of a line without its whitespace (sacreBLEU's
// ''.join(line.split())).
static void drop_spaces(Cps *c) {
    size_t w = 0;
    for (size_t i = 0; i < c->n; i++)
        if (!py_space(c->a[i])) c->a[w++] = c->a[i];
    c->n = w;
}

//> chrf-stats
// One sentence's character n-gram statistics, added to r. When the
// reference is shorter than n characters, sacreBLEU counts none of the
// hypothesis's n-grams either.
static void chrf_sentence(ChrfResult *r, Table *t, const Cps *hyp,
                          const Cps *ref) {
    int nh = (int)hyp->n, nr = (int)ref->n;
    table_clear(t, (size_t)CHRF_ORDER * (nh + nr));
    for (int n = 1; n <= CHRF_ORDER; n++) {
        for (int i = 0; i + n <= nr; i++) table_get(t, ref->a + i, n)->ref++;
        for (int i = 0; i + n <= nh; i++) table_get(t, hyp->a + i, n)->hyp++;
        if (nr >= n) {
            r->ref[n - 1] += nr - n + 1;
            if (nh >= n) r->hyp[n - 1] += nh - n + 1;
        }
    }
    for (size_t i = 0; i < t->cap; i++) {
        const Slot *s = &t->s[i];
        if (s->key && s->hyp > 0 && s->ref > 0)
            r->match[s->n - 1] += s->hyp < s->ref ? s->hyp : s->ref;
    }
}
//< chrf-stats

int chrf_corpus(ChrfResult *r, const char *const *hyps,
                const char *const *refs, int n, bool lowercase, Error *err) {
    *r = (ChrfResult){.lowercase = lowercase};
    Work w = {0};
    int rc = 0;
    for (int k = 0; k < n && rc == 0; k++) {
        if ((rc = decode_pair(&w, hyps[k], refs[k], k, lowercase, err)))
            break;
        drop_spaces(&w.hyp);
        drop_spaces(&w.ref);
        chrf_sentence(r, &w.grams, &w.hyp, &w.ref);
    }
    work_free(&w);
    if (rc == 0) chrf_compute(r);
    return rc;
}

//> chrf-score
// Precision and recall of each order n that the corpus has n-grams of,
// both averaged over those orders, then one F-score with recall weighed
// beta times as much: F = (1 + b^2) P R / (b^2 P + R).
void chrf_compute(ChrfResult *r) {
    double f = CHRF_BETA * CHRF_BETA, prec = 0.0, rec = 0.0;
    int orders = 0;
    for (int n = 0; n < CHRF_ORDER; n++) {
        if (r->hyp[n] > 0 && r->ref[n] > 0) {
            prec += (double)r->match[n] / (double)r->hyp[n];
            rec += (double)r->match[n] / (double)r->ref[n];
            orders++;
        }
    }
    if (orders > 0) prec /= orders, rec /= orders;
    r->score = 0.0;
    if (prec + rec != 0.0)
        r->score = 100 * ((1 + f) * prec * rec / (f * prec + rec));
}
//< chrf-score

// ---- printing ---------------------------------------------------------------

const char *bleu_signature(bool lowercase) {
    return lowercase
        ? "nrefs:1|case:lc|eff:no|tok:13a|smooth:exp|version:2.6.0"
        : "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0";
}

const char *chrf_signature(bool lowercase) {
    return lowercase
        ? "nrefs:1|case:lc|eff:yes|nc:6|nw:0|space:no|version:2.6.0"
        : "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0";
}

int bleu_format(char *buf, size_t size, const BleuResult *r, bool sig) {
    double ratio = r->ref_len ? (double)r->sys_len / (double)r->ref_len : 0;
    return snprintf(buf, size, "BLEU%s%s = %.2f %.1f/%.1f/%.1f/%.1f (BP = "
                    "%.3f ratio = %.3f hyp_len = %ld ref_len = %ld)",
                    sig ? "|" : "", sig ? bleu_signature(r->lowercase) : "",
                    r->score, r->precisions[0], r->precisions[1],
                    r->precisions[2], r->precisions[3], r->bp, ratio,
                    r->sys_len, r->ref_len);
}

int chrf_format(char *buf, size_t size, const ChrfResult *r, bool sig) {
    return snprintf(buf, size, "chrF%d%s%s = %.2f", CHRF_BETA,
                    sig ? "|" : "", sig ? chrf_signature(r->lowercase) : "",
                    r->score);
}
