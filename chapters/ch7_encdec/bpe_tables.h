// bpe_tables.h - what byte-pair encoding looks things up in: a hash table
// from pairs of ids to an int, one from byte strings to their index, a
// cache of the ids of byte strings, and the loop that merges one word's
// symbols by rank. Chapter 7's BPE (bpe.c) uses them, and so does chapter
// 9's GPT-2 tokenizer.
//
// The tables use open addressing with linear probing, at most half full.
// They are only ever asked "what is stored for this key": nothing depends
// on the order of their slots, so results never depend on the hashes.
#ifndef CH7_BPE_TABLES_H
#define CH7_BPE_TABLES_H

#include <stddef.h>
#include <stdint.h>

// ---- (a, b) -> an int ------------------------------------------------------

typedef struct {
    uint64_t *keys;   // (cap,) a << 32 | b, or all ones where free
    int *vals;        // (cap,)
    size_t cap, n;
} PairMap;

// An empty map with room for n pairs before it grows; PairMap m = {0} is
// an empty map too, but pairmap_put needs pairmap_init first.
void pairmap_init(PairMap *m, size_t n);
void pairmap_free(PairMap *m);
// The value stored for (a, b), or -1 when there is none.
int pairmap_get(const PairMap *m, int a, int b);
// Stores val for (a, b), replacing what was there.
void pairmap_put(PairMap *m, int a, int b, int val);

// ---- byte strings -> 0, 1, 2, ... in the order they were added --------------

typedef struct {
    char *text;          // the strings, one after another
    size_t text_len, text_cap;
    size_t *off;         // (n,) where string i starts in text
    int *len;            // (n,)
    int n, n_cap;
    int *slots;          // (cap,) an index, or -1
    size_t cap;
} StrTab;

// The index of the n bytes at s, or -1. StrTab t = {0} is empty.
int strtab_find(const StrTab *t, const char *s, int n);
// Adds the n bytes at s, which are not in t yet; returns their index.
int strtab_add(StrTab *t, const char *s, int n);
void strtab_free(StrTab *t);

// ---- a cache: byte strings -> the ids they encode to ------------------------

typedef struct {
    StrTab keys;     // string k ...
    size_t *off;     // ... has the ids ids[off[k] .. off[k] + n[k])
    int *n;
    int *ids;
    size_t len, cap;
} IdCache;

// Copies the ids of the n bytes at s into out and returns how many, or
// -1 when they are not in the cache. IdCache c = {0} is empty.
int idcache_get(const IdCache *c, const char *s, int n, int *out);
// Remembers that the n bytes at s (not in c yet) encode to ids[0..len).
void idcache_put(IdCache *c, const char *s, int n, const int *ids, int len);
void idcache_free(IdCache *c);

// ---- the merge loop ---------------------------------------------------------

// Merges the len symbols of one word in place and returns how many are
// left. rank maps a pair of adjacent ids to its merge's rank r (lower
// merges first), merged[r] is the id the merge makes. The pair of lowest
// rank in the word is merged everywhere, left to right without overlap
// ("a a a" -> "aa a"), and that repeats until no adjacent pair has a rank.
int bpe_merge_word(int *sym, int len, const PairMap *rank, const int *merged);

#endif
