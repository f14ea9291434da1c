// tokenizer.h - GPT-2's tokenizer: byte-level BPE, read from OpenAI's
// files, giving the ids that tiktoken and Hugging Face give.
//
// Three steps turn text (bytes) into ids:
//  1. Pre-tokenising cuts the text into pieces with GPT-2's pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//     hand-coded here as a scanner (gpt2_pretoken_end), no regex library:
//     an English contraction; an optional space and a run of letters, or
//     of numbers, or of anything else; a run of white space, which leaves
//     its last character to what follows when that is not white space (a
//     space then joins the word: "  hi" is " ", " hi"; a "\n" is a piece
//     of its own). The classes are Unicode 16.0's (unicode_classes.h).
//     The contractions are lower case only: "'S" is "'" and "S".
//  2. Each piece starts as its bytes, each byte the id of a one-byte token.
//  3. BPE merges them: of all adjacent pairs, the one whose merge came
//     first in merges.txt (the lowest rank) is merged everywhere in the
//     piece, and again, until no pair has a merge (chapter 7's loop,
//     bpe_merge_word). Merges never cross two pieces.
// Decoding writes each id's bytes: any bytes encoded come back exactly.
//
// The files. vocab.json (OpenAI's name: encoder.json) is a JSON object
// from each token to its id; merges.txt (vocab.bpe) has a "#version"
// line, then one merge a line, "a b", in rank order. In both, a token is
// written with GPT-2's byte characters (gpt2_bytes_to_unicode): each of
// the 256 bytes stands for itself if it is a printable character and for
// a character from U+0100 on otherwise, so that the space is "Ġ" (U+0120)
// and " the" is "Ġthe". Ids need not follow the merges' order: a merge's
// result is looked up by its text.
//
// <|endoftext|> (id 50256 in GPT-2) is a special token: encoded only when
// the caller allows it (allow_special, as tiktoken's allowed_special),
// and otherwise encoded as the 13 ordinary characters it is made of (as
// tiktoken's encode_ordinary and encode(..., disallowed_special=()) do).
//
// Invalid UTF-8: tiktoken and Hugging Face take a Python str, which always
// holds valid UTF-8, so they leave it open. Here each byte that is not
// part of a valid UTF-8 character (a stray continuation byte, a cut short
// or overlong sequence, a surrogate, 0xf5..0xff) counts as one character
// of the class "other" (neither letter, number nor space): it joins a run
// of punctuation like any symbol, is encoded as its byte, and decodes
// back to the same byte. tests/reference/gen_ch9_tokenizer.py writes the
// ids of this rule with tiktoken's own BPE. (tiktoken's _encode_bytes,
// its private way in for bytes, does something else: after the first bad
// byte it runs BPE over all the rest as one piece, uncut; it gives other
// ids on 5 of the 13 such cases of the tests' catalogue.)
#ifndef CH9_TOKENIZER_H
#define CH9_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define GPT2_EOT "<|endoftext|>"

typedef struct Gpt2TokTables Gpt2TokTables;   // lookups and the cache

typedef struct {
    int vocab_size;      // V: the ids are 0 .. V-1
    int n_merges;        // M
    int eot;             // the id of <|endoftext|>, or -1 when there is none
    int byte_id[256];    // the id of the one-byte token of each byte
    char *bytes;         // the bytes of id v: bytes[off[v] .. off[v+1])
    size_t *off;         // (V + 1,)
    Gpt2TokTables *tab;
} Gpt2Tokenizer;

// ---- loading ---------------------------------------------------------------

// Reads dir/vocab.json and dir/merges.txt, or, when dir has no vocab.json,
// dir/encoder.json and dir/vocab.bpe. 0, or -1 with one line saying
// what is wrong and where: a missing file, a file that is not JSON, an
// id that is not an integer in [0, V) or that two tokens share, a token
// holding a character that stands for no byte, a byte without its
// one-byte token, a merge line that is not "a b", a merge naming a token
// that vocab.json lacks or making one it lacks, a merge given twice.
int gpt2_tok_load_dir(Gpt2Tokenizer *t, const char *dir, Error *err);
// The same from two named files.
int gpt2_tok_load(Gpt2Tokenizer *t, const char *vocab_path,
                  const char *merges_path, Error *err);
// The same from the files' contents (vocab_len and merges_len bytes);
// the names are for the messages.
int gpt2_tok_from_text(Gpt2Tokenizer *t, const char *vocab_json,
                       size_t vocab_len, const char *vocab_name,
                       const char *merges, size_t merges_len,
                       const char *merges_name, Error *err);
void gpt2_tok_free(Gpt2Tokenizer *t);

// ---- encoding and decoding --------------------------------------------------

// Encodes n bytes of text into out, which has room for n ids (a token is
// at least one byte); returns the number of ids, or -1 with a message
// when n is above INT_MAX. With allow_special, each "<|endoftext|>" in
// the text is the id eot; without, it is ordinary text. Any bytes are
// accepted (see invalid UTF-8 above).
//
// Speed. The same pieces come back again and again (" the", ",", "\n"),
// so the encoder remembers the ids of up to 2^18 pieces of up to 256
// bytes each (chapter 7's IdCache): a piece seen before costs a hash
// look-up. Hence not thread-safe: one tokenizer per thread. A new piece
// of n bytes costs O(n) for each merge rank it applies, as in GPT-2's
// own encoder.py: a long run of letters or digits with no space between
// is the slow case.
long gpt2_tok_encode(Gpt2Tokenizer *t, const char *text, size_t n,
                     bool allow_special, int *out, Error *err);

// The bytes of token id (*len of them, not NUL-terminated), or NULL when
// id is outside [0, V).
const char *gpt2_tok_token(const Gpt2Tokenizer *t, int id, size_t *len);

// The bytes of n ids, with a NUL after them, for the caller to free; *len
// (when not NULL) their number. NULL with a message for an id outside
// [0, V).
char *gpt2_tok_decode(const Gpt2Tokenizer *t, const int *ids, size_t n,
                      size_t *len, Error *err);

// ---- the pieces, for the chapter and its exercises --------------------------

// GPT-2's byte characters: cp[b] is the code point that stands for byte b
// in vocab.json and merges.txt.
void gpt2_bytes_to_unicode(uint32_t cp[256]);

// The end of the pre-token that starts at text[i] (i < n): the step 1
// scanner. The pieces from i = 0 to n cover the text, in order.
size_t gpt2_pretoken_end(const char *text, size_t i, size_t n);

// The rank of the merge of ids a and b (0 for the first line of
// merges.txt), with *merged (when not NULL) the id it makes; -1 when
// merges.txt has no such merge.
int gpt2_tok_merge_rank(const Gpt2Tokenizer *t, int a, int b, int *merged);

// The ids of one piece of n bytes, BPE applied and nothing else (the
// piece is taken as it is, even if the pattern would cut it); out has
// room for n ids. Returns their number.
int gpt2_tok_encode_piece(Gpt2Tokenizer *t, const char *piece, int n,
                          int *out);

#endif
