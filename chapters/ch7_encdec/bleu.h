// bleu.h - scoring translations: corpus BLEU and chrF, exactly as
// sacreBLEU 2.6.0 computes them with its defaults.
//
// BLEU (Papineni et al., 2002) compares word n-grams (n = 1..4) of each
// hypothesis with those of its reference. Each hypothesis n-gram counts
// as matched at most as often as it occurs in the reference (the clipped
// count); matches and hypothesis n-grams are summed over the whole corpus
// before dividing, so the precisions p_1..p_4 are corpus-level. The score
// is their geometric mean times a brevity penalty for a corpus of
// hypotheses shorter than its references:
//
//   BLEU = BP * exp((log p_1 + ... + log p_4) / 4)     (in percent)
//   BP   = 1 when c >= r, else exp(1 - r / c)     c, r: corpus lengths
//
// Words are what sacreBLEU's default tokenizer "13a" makes of the text
// (mteval-v13a.pl, the WMT scorer): it splits punctuation off, but keeps
// the period and the comma inside numbers. An order with no match at all
// would make the geometric mean 0; the "exp" smoothing (sacreBLEU's
// default, the NIST scorer's) counts the k-th such order as 1 / 2^k of a
// match instead.
//
// chrF (Popovic, 2015) compares character n-grams (n = 1..6) of the text
// with whitespace removed: it averages the precisions and the recalls
// over the orders, then combines them in an F-score that weighs recall
// beta = 2 times as much as precision. It needs no tokenizer and gives
// partial credit for a word with the wrong ending.
//
// Text is UTF-8 (checked: a malformed sentence is an error naming it);
// chrF counts characters, not bytes. Lowercasing (off by default, as in
// sacreBLEU) covers ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic
// capitals; Python's lower() knows every script and the Greek final
// sigma, this does not.
#ifndef CH7_BLEU_H
#define CH7_BLEU_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

#define BLEU_ORDER 4
#define CHRF_ORDER 6
#define CHRF_BETA 2

typedef struct {
    double score;                    // 0..100
    long counts[BLEU_ORDER];         // clipped matches, summed
    long totals[BLEU_ORDER];         // hypothesis n-grams, summed
    double precisions[BLEU_ORDER];   // percent, smoothed where 0
    double bp;                       // brevity penalty
    long sys_len, ref_len;           // words of hypotheses, references
    bool lowercase;                  // for the signature
} BleuResult;

typedef struct {
    double score;                    // 0..100
    // per order n = 1..6: hypothesis n-grams, reference n-grams, matches
    long hyp[CHRF_ORDER], ref[CHRF_ORDER], match[CHRF_ORDER];
    bool lowercase;
} ChrfResult;

// The 13a tokenization of one line (len bytes of UTF-8), as sacreBLEU
// applies it: lowercased first when asked, trailing whitespace stripped,
// tokens joined by single spaces. Returns a malloc'd NUL-terminated
// string (free it), or NULL with a message when the line is not UTF-8.
char *bleu_tokenize_13a(const char *line, size_t len, bool lowercase,
                        Error *err);

// Corpus BLEU of n hypotheses against n references (one each, UTF-8,
// NUL-terminated). Returns 0, or -1 with a message naming the sentence.
int bleu_corpus(BleuResult *r, const char *const *hyps,
                const char *const *refs, int n, bool lowercase, Error *err);

// From r's counts, totals and lengths: its precisions, bp and score.
void bleu_compute(BleuResult *r);

// Corpus chrF2 (character 6-grams, no word n-grams, beta 2, whitespace
// removed), as bleu_corpus.
int chrf_corpus(ChrfResult *r, const char *const *hyps,
                const char *const *refs, int n, bool lowercase, Error *err);

// From r's statistics: its score.
void chrf_compute(ChrfResult *r);

// sacreBLEU's text line, "BLEU = 34.61 67.1/42.0/28.3/19.4 (BP = 1.000
// ratio = 1.010 hyp_len = 9321 ref_len = 9230)" and "chrF2 = 61.24"; with
// sig, the signature comes after the name as sacreBLEU's command line
// writes it: "BLEU|nrefs:1|case:mixed|...|version:2.6.0 = 34.61 ...".
// Writes at most size bytes (NUL included); returns the line's length.
int bleu_format(char *buf, size_t size, const BleuResult *r, bool sig);
int chrf_format(char *buf, size_t size, const ChrfResult *r, bool sig);

// "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0" and
// "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0".
const char *bleu_signature(bool lowercase);
const char *chrf_signature(bool lowercase);

#endif
