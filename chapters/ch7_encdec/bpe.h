// bpe.h - byte-pair encoding (BPE): a subword vocabulary learnt from the
// training sentences, as Sennrich, Haddow and Birch's "Neural Machine
// Translation of Rare Words with Subword Units" does it.
//
// Start from the characters; count every pair of adjacent symbols in the
// training words; the most frequent pair becomes a new symbol; repeat M
// times. Frequent words end up as one token, rare ones as a few pieces,
// and any word made of known characters can still be written.
//
// The vocabulary (ids):
//   0 <pad>, 1 <bos>, 2 <eos>   as task.h: the model code is the same
//   3 <unk>                     a character the training text never had
//   4 .. 4+A-1                  the alphabet: the A Unicode code points of
//                               the training text, in ascending order
//   4+A+i                       merge i (i = 0 .. M-1), the pair of ids
//                               merges[2i], merges[2i+1]
// A joint vocabulary for both languages is learnt by passing both texts;
// one per language by learning two. M = 0 is the character tokenizer.
//
// Words and whitespace. A line is cut into pieces before any counting: a
// piece is one optional space (U+0020) followed by the longest run of
// characters that are not spaces. "a  dog " gives "a", " ", " dog", " ".
// The space belongs to the word after it (sentencepiece's U+2581 '▁'
// attached to the next word, here the space itself), so the pieces of a
// line concatenated are the line, byte for byte: runs of spaces, a space
// at the end and every other character (TAB, no-break space) survive
// decoding. Only U+0020 separates words; a TAB or a no-break space is a
// character of its word like any letter. Merges never cross a piece.
//
// Ties. Pairs are counted at every position (the word "a a a" holds the
// pair (a, a) twice) and a merge rewrites a word from left to right
// without overlap ("a a a" -> "aa a"). Of the pairs with the largest
// count the one with the smallest first id wins, then the smallest
// second id: the same text gives the same merges on every machine. A pair
// seen fewer than twice is never merged, so learning may stop before M.
#ifndef CH7_BPE_H
#define CH7_BPE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "task.h"

enum { BPE_UNK = TOK_FIRST, BPE_ALPHA = TOK_FIRST + 1 };

typedef struct BpeTables BpeTables;   // lookups and the encoding cache

typedef struct {
    int n_chars;        // A
    uint32_t *chars;    // (A,) code points, ascending: ids BPE_ALPHA + i
    int n_merges;       // M
    int *merges;        // (M, 2): merge i makes id BPE_ALPHA + A + i
    int vocab_size;     // V = BPE_ALPHA + A + M
    char *bytes;        // the UTF-8 of id v: bytes[off[v] .. off[v+1])
    int *off;           // (V + 1,) specials have none
    BpeTables *tab;
} Bpe;

// Learns at most n_merges merges from n_texts UTF-8 texts (text k is
// lens[k] bytes; its lines end at '\n', which belongs to no word).
// Returns 0, or -1 with a message for invalid UTF-8, a NUL byte, or a
// text with no character at all; *t is then left empty.
int bpe_learn(Bpe *t, const char *const *texts, const size_t *lens,
              int n_texts, int n_merges, Error *err);
void bpe_free(Bpe *t);

// Encodes one line of n bytes into out (room for n ids: a token is at
// least one byte); returns the number of ids, or -1 with a message for
// invalid UTF-8. A character outside the alphabet (a '\n' too) becomes
// <unk>. Remembers the words it has seen: not thread-safe.
int bpe_encode(Bpe *t, const char *text, size_t n, int *out, Error *err);

// The text of n ids, NUL-terminated, for the caller to free; *len (when
// not NULL) its length. <pad>, <bos> and <eos> give nothing and <unk>
// U+FFFD. NULL with a message for an id outside [0, V).
char *bpe_decode(const Bpe *t, const int *ids, int n, size_t *len,
                 Error *err);

// A printable form of token id in buf: "<pad>", "<unk>", "▁dog" (a space
// shown as '▁'), "<U+0009>" for a control character or a no-break space.
void bpe_token_text(const Bpe *t, int id, char *buf, size_t size);

// The tokenizer as one string (for a checkpoint's "vocab" metadata), for
// the caller to free:
//   "bpe1 A M\n" the A code points as UTF-8 "\n" then M lines "a b\n"
char *bpe_to_string(const Bpe *t, size_t *len);
// Reads such a string back, checking all of it; 0, or -1 with one line
// saying what is wrong and where, and *t is then left as it was.
int bpe_from_string(Bpe *t, const char *s, Error *err);

#endif
