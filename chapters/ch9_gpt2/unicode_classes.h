// unicode_classes.h - the four classes of characters that GPT-2's
// pre-tokeniser tells apart, for every Unicode code point.
//
// GPT-2's pattern (tokenizer.h) speaks of letters \p{L}, numbers \p{N}
// and white space \s. In the regex engine of tiktoken (Rust's regex
// crate) \p{L} is the general categories Lu Ll Lt Lm Lo, \p{N} is Nd Nl
// No, and \s is the White_Space property (25 characters: TAB to CR,
// space, U+0085, the no-break space, U+1680, U+2000 to U+200A, the line
// and paragraph separators, U+202F, U+205F, U+3000). No character is in
// two of them.
//
// Unicode version: 16.0.0. Characters are added with each version (15.1
// added 622 CJK letters, 16.0 another 4,302 letters and 80 numbers), so
// two tokenizers agree only when their tables do. tiktoken 0.14's regex
// engine classifies every one of the 1,112,064 code points as Unicode
// 16.0.0 does; tests/reference/gen_ch9_unicode.py --check asks it.
// (Hugging Face's tokenizers match with Oniguruma, whose tables may be of
// another version: they can differ on characters new since.)
//
// unicode_classes.c is GENERATED from the Unicode Character Database by
// that script: never edit it by hand.
#ifndef CH9_UNICODE_CLASSES_H
#define CH9_UNICODE_CLASSES_H

#include <stdint.h>

enum { UC_OTHER, UC_LETTER, UC_NUMBER, UC_SPACE };

typedef struct {
    uint32_t lo, hi;   // the code points lo .. hi (both in)
    int cls;           // UC_LETTER, UC_NUMBER or UC_SPACE
} UcRange;

// The class of each ASCII character (U+0000 .. U+007F).
extern const unsigned char uc_ascii[128];
// Every code point above U+007F in a class other than UC_OTHER, as
// uc_n_ranges sorted, disjoint ranges.
extern const UcRange uc_ranges[];
extern const int uc_n_ranges;

// The class of code point cp (any value; above U+10FFFF is UC_OTHER):
// ASCII from its table, the rest by binary search over the ranges.
static inline int uc_class(uint32_t cp) {
    if (cp < 128) return uc_ascii[cp];
    int lo = 0, hi = uc_n_ranges;   // the range holding cp is in [lo, hi)
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (uc_ranges[mid].hi < cp) lo = mid + 1;
        else if (uc_ranges[mid].lo > cp) hi = mid;
        else return uc_ranges[mid].cls;
    }
    return UC_OTHER;
}

#endif
