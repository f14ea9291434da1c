// Exercise 9.2 - reference answer: find the pair of lowest rank, rewrite
// the ids with it merged wherever it stands (a merged pair's second id is
// consumed, so "a a a" gives "aa a"), and go again until nothing merges.
#include "ch9_exercises.h"

// Replaces each (a, b) in ids[0..n) by m, left to right; the new count.
static int merge_everywhere(int *ids, int n, int a, int b, int m) {
    int out = 0, i = 0;
    while (i < n) {
        bool pair = i + 1 < n && ids[i] == a && ids[i + 1] == b;
        ids[out++] = pair ? m : ids[i];
        i += pair ? 2 : 1;
    }
    return out;
}

int ex_bpe_merge(const Gpt2Tokenizer *t, int *ids, int n) {
    while (n > 1) {
        int best_rank = -1, best_at = 0, merged = 0;
        for (int i = 0; i + 1 < n; i++) {
            int m, r = gpt2_tok_merge_rank(t, ids[i], ids[i + 1], &m);
            if (r >= 0 && (best_rank < 0 || r < best_rank))
                best_rank = r, best_at = i, merged = m;
        }
        if (best_rank < 0) break;   // no pair left to merge
        n = merge_everywhere(ids, n, ids[best_at], ids[best_at + 1], merged);
    }
    return n;
}
