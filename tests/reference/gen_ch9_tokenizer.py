#!/usr/bin/env python3
"""Writes chapter 9's tokenizer fixtures into tests/reference/ch9_tok/:
a GPT-2-format byte-level BPE tokenizer trained on Tiny Shakespeare, and
the ids that tiktoken gives with it.

    make data                                     # the corpora, first
    python3 tests/reference/gen_ch9_tokenizer.py  # from the repo root

needs tiktoken and tokenizers (pip install tiktoken tokenizers; written
with tiktoken 0.14.0 and tokenizers 0.23.3, both offline); transformers'
bytes_to_unicode() is used when transformers is installed. The build and
the tests never need Python.

What it writes:

  vocab.json, merges.txt   the tokenizer, in GPT-2's own formats (the
      files GPT-2 calls encoder.json and vocab.bpe). Hugging Face's
      tokenizers trains it (byte-level BPE with GPT-2's pattern, VOCAB
      tokens, from Tiny Shakespeare and, 20 times each, the valid texts of
      the catalogue below and a few indented lines, so that it also has
      merges of runs of white space, CJK, emoji and digits as GPT-2's
      vocabulary does); the ids are then laid out as GPT-2's are: ids
      0..255 the 256 bytes in the order of GPT-2's bytes_to_unicode() (its printable
      bytes '!'..'~', '¡'..'¬', '®'..'ÿ' first, then the other 68 in byte
      order, so that id 188 + 32 = 220 is the space, as in GPT-2), merge i
      makes id 256 + i, and <|endoftext|> is the last id. merges.txt
      starts with GPT-2's "#version: 0.2" line.
  expected.json   what the C tests compare with:
      "bytes_to_unicode": the 256 code points of GPT-2's table;
      "corpora": for each whole file (Tiny Shakespeare, Multi30k's
          train.de and train.en, read as bytes), tiktoken's number of ids
          and an FNV-1a 64 hash (offset 0xcbf29ce484222325, prime
          0x100000001b3) of each chunk of CHUNK ids, each id taken as 4
          little-endian bytes: the C test finds the first chunk that
          differs;
      "cases": the catalogue of hard text below, each with its bytes in
          hex, whether <|endoftext|> is allowed, and its ids;
      "pieces": single pre-tokens (Tiny Shakespeare's most frequent ones
          of 3 bytes or more, its longest, and some of the catalogue's),
          each with the ids of tiktoken's BPE alone (_encode_single_piece),
          for exercise 9.2.

tiktoken's Encoding is built from the two files written (its own GPT-2
loader, data_gym_to_mergeable_bpe_ranks, which checks that the ids and
the merges agree) with GPT-2's pattern; TIKTOKEN_CACHE_DIR is set empty,
or tiktoken would read a copy of an older file from its cache.

Invalid UTF-8. Neither tiktoken's encode nor Hugging Face's takes bytes:
both take a Python str, which always holds valid UTF-8. The C tokenizer
takes bytes, and treats each byte that is not part of a valid UTF-8
character as a character of its own in the class "other" (not a letter,
number or space), so it is still encoded byte for byte and decoded back.
The ids for such cases here follow that rule: the bytes are decoded with
Python's "surrogateescape" (each such byte becomes a lone surrogate, which
GPT-2's pattern also counts as other), split with the `regex` module and
GPT-2's pattern, and each piece is given to tiktoken's BPE
(_encode_single_piece). tiktoken's _encode_bytes does something else: it
encodes the valid text up to the first bad byte, then runs BPE over the
last piece and everything after it as one piece, with no splitting; this
script prints where the two differ (only the cases whose bad bytes end
the text can agree).

Hugging Face's tokenizer, built from the same files, is checked to give
tiktoken's ids on the corpora and on the catalogue (it does: the script
prints any difference).
"""
import json
import os
import sys

os.environ["TIKTOKEN_CACHE_DIR"] = ""   # before tiktoken is imported

import regex                     # noqa: E402
import tiktoken                  # noqa: E402
import tiktoken.load             # noqa: E402
from tokenizers import (Tokenizer, decoders, models, pre_tokenizers,  # noqa
                        trainers)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(HERE, "ch9_tok")
VOCAB = 2048          # tokens, <|endoftext|> included
CHUNK = 10000         # ids per hash
EOT = "<|endoftext|>"
GPT2_PAT = (r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+"
            r"|\s+(?!\S)|\s+")
CORPORA = ["data/tinyshakespeare.txt", "data/multi30k/train.de",
           "data/multi30k/train.en"]


def bytes_to_unicode():
    """GPT-2's table: byte -> a printable character standing for it."""
    try:
        from transformers.convert_slow_tokenizer import bytes_to_unicode
        return bytes_to_unicode()
    except ImportError:
        pass
    bs = (list(range(ord("!"), ord("~") + 1))
          + list(range(ord("¡"), ord("¬") + 1))
          + list(range(ord("®"), ord("ÿ") + 1)))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


# ---- training and laying out the tokenizer -----------------------------------

def train():
    """(merges as pairs of token strings), trained by tokenizers."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False,
                                                 use_regex=True)
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB, min_frequency=2, special_tokens=[EOT],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False)
    with open(os.path.join(ROOT, CORPORA[0]), encoding="utf-8") as f:
        texts = [f.read()]
    # and the catalogue's valid texts, 20 times each, with some indented
    # lines: merges of white space runs, CJK, emoji bytes and digits that
    # Shakespeare alone never makes (GPT-2's own vocabulary has them)
    for name, data, allow in catalogue():
        try:
            texts += [data.decode("utf-8")] * (0 if allow else 20)
        except UnicodeDecodeError:
            pass
    texts += ["def f(x):\n    if x:\n        return 1\n\n\n\t\tx = 2\n"] * 50
    tok.train_from_iterator(texts, trainer)
    model = json.loads(tok.to_str())["model"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m)
              for m in model["merges"]]
    assert len(model["vocab"]) == 1 + 256 + len(merges), len(model["vocab"])
    return merges


def write_tokenizer(merges):
    b2u = bytes_to_unicode()
    vocab = {b2u[b]: i for i, b in enumerate(b2u)}   # the table's order
    for a, b in merges:
        assert a + b not in vocab, a + b
        vocab[a + b] = len(vocab)
    vocab[EOT] = len(vocab)
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False, separators=(",", ":"))
    with open(os.path.join(OUT, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n")
        for a, b in merges:
            f.write("%s %s\n" % (a, b))
    return b2u, vocab


def tiktoken_encoding(n_vocab):
    ranks = tiktoken.load.data_gym_to_mergeable_bpe_ranks(
        os.path.join(OUT, "merges.txt"), os.path.join(OUT, "vocab.json"))
    return tiktoken.Encoding(name="ch9_tok", pat_str=GPT2_PAT,
                             mergeable_ranks=ranks,
                             special_tokens={EOT: n_vocab - 1})


def hf_tokenizer():
    tok = Tokenizer(models.BPE.from_file(os.path.join(OUT, "vocab.json"),
                                         os.path.join(OUT, "merges.txt")))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False,
                                                 use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([EOT])
    return tok


# ---- the catalogue ----------------------------------------------------------

def catalogue():
    """(name, bytes, allow <|endoftext|>)."""
    s = [
        ("empty", ""),
        ("ascii", "Hello, world! How are you today?"),
        ("shakespeare", "First Citizen:\nBefore we proceed any further, "
         "hear me speak.\n\nAll:\nSpeak, speak.\n"),
        ("contractions", "I'm sure you're right: we've seen it, they'll "
         "know, he'd go, it's 'tis don't"),
        ("contractions_caps", "I'M SURE YOU'RE RIGHT: WE'VE, THEY'LL, HE'D, "
         "IT'S 'S 'T 'RE 'VE 'M 'LL 'D"),
        ("apostrophes", "'s's ''ll '' 'x 'sup 'lls ' s ''"),
        ("space_runs", "a  b   c    d     e"),
        ("spaces_before_word", "   hello      world   "),
        ("spaces_only", "     "),
        ("crlf", "line one\r\nline two\r\n\r\nend\r\n"),
        ("tabs", "\tindented\n\t\tdouble\t \t x\t"),
        ("newlines", "\n\n\nword\n\n  \n next\n"),
        ("digits", "12345678901234567890 3.14159 1,000,000 x2y3 2024-05-01"),
        ("long_digits", "0123456789" * 60 + " " + "7" * 300),
        ("emoji", "I \u2764\ufe0f \U0001F355! \U0001F469\u200d\U0001F469"
         "\u200d\U0001F467\u200d\U0001F466 family \U0001F1E9\U0001F1EA "
         "\U0001F44D\U0001F3FD ok\U0001F600\U0001F600"),
        ("four_byte", "\U0001D518\U0001D52B\U0001D526\U0001D520\U0001D52C "
         "\U0001D7D8\U0001D7D9\U0001D7DA \U00010348\U00010349 "
         "\U00020000\U0002A6D6 \U0001F701"),
        ("cjk", "日本語のテキスト、中文文本。한국어 텍스트 漢字かな交じり文"),
        ("combining", "cafe\u0301 nin\u0303o a\u0308b Z\u0351\u0352\u0353"
         "algo \u0915\u094d\u0937"),
        ("rtl", "שָׁלוֹם עולם مرحبا بالعالم ١٢٣ \u200fabc\u200e"),
        ("numbers_other", "Ⅻ ½ ² ③ ¼¾ 四 ٣ ꧑"),
        ("unicode_spaces", "a\u00a0b\u2003c\u3000d\u2028e\u0085f\u1680g "
         "\u202f h\u205f\u00a0 \u3000\u3000x"),
        ("controls", "\x00a\x01\x1f \x7f\x1c\x1d\x1e b\x0b\x0cc"),
        ("punctuation", "!!! ??? ... --- ((( ))) \"quoted\" ¿qué? «ok»"),
        ("mixed", "x='s' y=\"'ll\" z='d' naïve Ünïcödé ß straße 42nd"),
        ("special", "Hello" + EOT + "World " + EOT + " again"),
        ("special_pair", EOT + EOT + "x" + EOT),
        ("special_partial", "<|endoftext| <|endoftext" + EOT[:-1] + EOT),
        ("special_spaces", "a  " + EOT + "b\n\n" + EOT + "  c \t" + EOT),
    ]
    out = []
    for name, text in s:
        out.append((name, text.encode(), False))
        if EOT in text:
            out.append((name + "_allowed", text.encode(), True))
    bad = [
        ("bad_byte", b"abc\xff\xfedef ghi"),
        ("bad_lone_continuation", b"\x80\x80 word \xbf"),
        ("bad_truncated_end", b"caf\xc3"),
        ("bad_truncated_mid", b"caf\xc3 ok \xe2\x82 \xf0\x9f\x98"),
        ("bad_overlong", b"\xc0\xaf \xe0\x80\xaf x"),
        ("bad_surrogate", b"a\xed\xa0\x80b \xed\xbf\xbf"),
        ("bad_above_max", b"\xf4\x90\x80\x80 \xf5\x80\x80\x80 \xff"),
        ("bad_with_spaces", b" \xff word  \xfe\n  \xc3\xa9\xc3"),
        ("bad_in_word", b"wor\xffd and num12\x8034"),
        ("bad_then_spaces", b"\xff  the  king\n\n  x"),
        ("bad_before_contraction", b"\xff'd and rail\x80'st"),
    ]
    out += [(name, b, False) for name, b in bad]
    special = b"\xff<|endoftext|>\xfe  " + EOT.encode() + b"\xc3"
    out += [("bad_special", special, False),
            ("bad_special_allowed", special, True)]
    out += random_cases()
    return out


def random_cases():
    """Random strings over a pool where every rule of the pattern meets
    every other: letters of several scripts, digits, marks, spaces of
    several kinds, apostrophes and contractions, newlines."""
    import random
    rng = random.Random(9)
    pool = (list("aAzZeé'sStTlLdDmrRvV ") + [" ", " ", "  ", "\n", "\t",
            "\r\n", "\u00a0", "\u3000", "1", "9", "٣", "½", "!", ".", ",",
            "-", "\u0301", "日", "本", "\U0001F600", "\u200d", "ß", "Ω",
            "'s", "'ll", "'re", "'ve", "'m", "'d", "'t", "'S", "\x00"])
    out = []
    for k in range(40):
        n = rng.randint(1, 60)
        text = "".join(rng.choice(pool) for _ in range(n))
        out.append(("random_%02d" % k, text.encode(), False))
    return out


def reference_ids(enc, data, allow):
    """The ids of the C tokenizer's definition (tiktoken's for valid
    text); see the module's docstring for invalid UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None:
        if allow:
            return enc.encode(text, allowed_special={EOT})
        return enc.encode(text, disallowed_special=())
    ids = []
    escaped = data.decode("utf-8", errors="surrogateescape")
    # with <|endoftext|> allowed, the text between two is cut on its own
    segments = escaped.split(EOT) if allow else [escaped]
    for k, segment in enumerate(segments):
        if k > 0:
            ids.append(enc.eot_token)
        for piece in regex.findall(GPT2_PAT, segment):
            raw = piece.encode("utf-8", errors="surrogateescape")
            ids += enc._encode_single_piece(raw)
    return ids


# tiktoken_ext.openai_public's spelling of the same pattern
TIKTOKEN_GPT2_PAT = (r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+"""
                     r"""| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")


def check_split_rule(enc):
    """The regex module's split with tiktoken's BPE gives tiktoken's ids
    on valid text: the rule for invalid bytes adds nothing else."""
    for name, data, allow in catalogue():
        if allow:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        ids = []
        for piece in regex.findall(GPT2_PAT, text):
            ids += enc._encode_single_piece(piece.encode())
        assert ids == enc.encode(text, disallowed_special=()), name
    other = tiktoken.Encoding(name="ch9_tok_pat", pat_str=TIKTOKEN_GPT2_PAT,
                              mergeable_ranks=enc._mergeable_ranks,
                              special_tokens={})
    for name, data, allow in catalogue():
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        assert other.encode_ordinary(text) == enc.encode_ordinary(text), name


# ---- corpora ----------------------------------------------------------------

def fnv1a64(ids):
    h = 0xcbf29ce484222325
    for i in ids:
        for k in range(4):
            h ^= (i >> (8 * k)) & 0xff
            h = (h * 0x100000001b3) & 0xffffffffffffffff
    return "%016x" % h


def corpus_entry(enc, hf, path):
    with open(os.path.join(ROOT, path), "rb") as f:
        data = f.read()
    text = data.decode("utf-8")
    ids = enc.encode_ordinary(text)
    hf_ids = hf.encode(text, add_special_tokens=False).ids
    if hf_ids != ids:
        first = next(i for i, (a, b) in enumerate(zip(ids, hf_ids)) if a != b)
        print("  %s: Hugging Face differs from tiktoken at id %d" % (path,
                                                                     first))
    assert enc.decode_bytes(ids) == data
    hashes = [fnv1a64(ids[i:i + CHUNK]) for i in range(0, len(ids), CHUNK)]
    print("  %s: %d bytes, %d ids, %d chunks" % (path, len(data), len(ids),
                                                 len(hashes)))
    return {"path": path, "bytes": len(data), "ids": len(ids),
            "chunk": CHUNK, "fnv1a64": hashes}


def case_entries(enc, hf):
    out = []
    for name, data, allow in catalogue():
        ids = reference_ids(enc, data, allow)
        assert enc.decode_bytes(ids) == data, name
        try:
            text = data.decode("utf-8")
            hf_ids = hf.encode(text, add_special_tokens=False).ids
            if EOT in text and not allow:
                hf_ids = None   # tokenizers always splits off specials
            if hf_ids is not None and hf_ids != ids:
                print("  case %s: Hugging Face differs from tiktoken" % name)
        except UnicodeDecodeError:
            tk = enc._encode_bytes(data)
            print("  case %s: tiktoken's _encode_bytes %s" % (
                name, "agrees" if tk == ids else "differs (%d ids, not %d)"
                % (len(tk), len(ids))))
        out.append({"name": name, "hex": data.hex(), "allow_special": allow,
                    "ids": ids})
    return out


def pieces(enc):
    """Pre-tokens with the ids BPE alone gives them."""
    from collections import Counter
    with open(os.path.join(ROOT, CORPORA[0]), encoding="utf-8") as f:
        counts = Counter(regex.findall(GPT2_PAT, f.read()))
    frequent = [p for p, _ in counts.most_common() if len(p.encode()) >= 3]
    longest = sorted(counts, key=lambda p: (-len(p.encode()), p))
    chosen = frequent[:100] + longest[:40]
    for name, data, allow in catalogue():
        if name in ("cjk", "emoji", "rtl", "mixed", "long_digits"):
            chosen += regex.findall(GPT2_PAT, data.decode())[:6]
    out, seen = [], set()
    for p in chosen:
        if p in seen:
            continue
        seen.add(p)
        out.append({"hex": p.encode().hex(),
                    "ids": enc._encode_single_piece(p.encode())})
    return out


def main():
    for path in CORPORA:
        if not os.path.exists(os.path.join(ROOT, path)):
            sys.exit("gen_ch9_tokenizer.py: %s is missing: run make data"
                     % path)
    merges = train()
    b2u, vocab = write_tokenizer(merges)
    enc = tiktoken_encoding(len(vocab))
    hf = hf_tokenizer()
    check_split_rule(enc)
    expected = {
        "comment": "written by tests/reference/gen_ch9_tokenizer.py "
                   "(tiktoken %s, tokenizers %s)" % (
                       tiktoken.__version__, __import__("tokenizers")
                       .__version__),
        "vocab_size": len(vocab), "eot": len(vocab) - 1,
        "bytes_to_unicode": [ord(b2u[b]) for b in range(256)],
        "corpora": [corpus_entry(enc, hf, p) for p in CORPORA],
        "cases": case_entries(enc, hf),
        "pieces": pieces(enc),
    }
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected, f, separators=(",", ":"))
        f.write("\n")
    for name in ("vocab.json", "merges.txt", "expected.json"):
        p = os.path.join(OUT, name)
        print("wrote %s (%d bytes)" % (os.path.relpath(p, ROOT),
                                       os.path.getsize(p)))


if __name__ == "__main__":
    main()
