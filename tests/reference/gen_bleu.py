#!/usr/bin/env python3
"""Writes the sacreBLEU reference of chapter 7's scores (bleu.c),
tests/reference/ch7_bleu.json.

    pip install sacrebleu==2.6.0
    python3 tests/reference/gen_bleu.py       # from the repository root

needs sacreBLEU 2.6.0 (it refuses another version: the scores and the
signatures must be that version's); the build and the tests never do.
The file is JSON: "about" says where it came from, "cases" maps a name to
one corpus with what sacreBLEU's defaults make of it:

  hyps, refs        the sentences (one reference each), lowercase
  hyp_13a, ref_13a  the 13a tokenization of each (lowercased when asked)
  retok_13a         the 13a tokenization of hyp_13a (case kept)
  score, precisions, bp, counts, totals, sys_len, ref_len, text, signature
                    BLEU(lowercase=...).corpus_score: its statistics, its
                    format() line (width 2) and its signature
  chrf_stats        chrF's summed statistics, per order n = 1..6
                    [hypothesis n-grams, reference n-grams, matches]
  chrf_text, chrf_signature
                    CHRF(lowercase=...).corpus_score's line and signature

The cases are those the shared vectors (sacrebleu_2.6.0_vectors.json)
leave out: chrF on ASCII, German (umlauts, sharp s), an empty hypothesis,
references shorter than 6 characters, a corpus of several sentences; and
13a on numbers, hyphens, quotes, apostrophes, entities, <skipped>, a
line break and Unicode spaces.
"""
import json
import os

import sacrebleu
from sacrebleu.metrics import BLEU, CHRF

HERE = os.path.dirname(os.path.abspath(__file__))
assert sacrebleu.__version__ == "2.6.0", sacrebleu.__version__

CASES = [
    # chrF (and BLEU) on ordinary text
    ("ascii", ["A man is riding a bike."], ["A man rides a bicycle."]),
    ("german", ["Ein Mädchen läuft über die Straße."],
     ["Ein Mädchen geht über die Strasse."]),
    ("german_caps", ["ÄRGER über GROSSE Füße"], ["Ärger über große Füße"]),
    ("empty_hyp", [""], ["Zwei Hunde spielen im Schnee."]),
    ("empty_both", [""], [""]),
    ("short_ref", ["abcdefgh ij"], ["abc"]),
    ("short_hyp", ["ab"], ["abcdefgh"]),
    ("corpus", ["Two dogs play in the snow.", "A woman in red.",
                "", "Ein Hund rennt.", "the the the the"],
     ["Two dogs are playing in the snow.", "A woman wearing a red dress.",
      "A boy.", "Ein Hund läuft.", "the cat is on the mat"]),
    # BLEU: clipping, and hypotheses longer than their references
    ("clipping", ["the the the the the the the"], ["the cat is on the mat"]),
    ("long_hyp", ["a man is riding a red bike down the long street"],
     ["a man is riding a bike"]),
    ("three_words", ["a dog runs", "a cat"], ["a dog runs", "a cat sits"]),
    # 13a
    ("numbers", ["It cost 1,000.50 dollars, or 3.14 and 2,5. Then 10.",
                 "In 1990-2000, 5-6 of 7.5% (approx.) were -5."],
     ["It cost 1,000.50 dollars , or 3.14 and 2,5 . Then 10 .",
      "In 1990 - 2000 , 5 - 6 of 7.5 % ( approx . ) were -5 ."]),
    ("hyphens", ["well-known x-ray -- a - b 3-d e-mail-"],
     ["well - known x-ray -- a - b 3 - d e-mail -"]),
    ("quotes", ["'single' \"double\" ``tex'' „low“ «guillemets»"],
     ["' single ' \" double \" `` tex '' „ low “ « guillemets »"]),
    ("apostrophes", ["don't it's rock 'n' roll O'Neil's dogs' toys"],
     ["do n't it 's rock ' n ' roll O'Neil 's dogs ' toys"]),
    ("entities", ["AT&amp;T &amp;amp; &lt;b&gt; &quot;hi&quot; &#39; &"],
     ["AT&T &amp; <b> \"hi\" &#39; &"]),
    ("skipped", ["a <skipped> b <SKIPPED> c", "con-\ntinued\non two lines"],
     ["a b c", "continued on two lines"]),
    ("dots", ["U.S.A. e.g., etc... ... .5 5. ,a a, 3,a a,3"],
     ["U.S.A. e.g. , etc . . . ... .5 5 . , a a , 3 , a a , 3"]),
    ("spaces", ["a\u00a0b\u2009c\tTabs  and\u3000ideographic space.  "],
     ["a b c Tabs and ideographic space ."]),
]


def case(hyps, refs, lowercase):
    bleu = BLEU(lowercase=lowercase)
    b = bleu.corpus_score(hyps, [refs])
    chrf = CHRF(lowercase=lowercase)
    c = chrf.corpus_score(hyps, [refs])
    stats = [0] * 18
    for s in chrf._extract_corpus_statistics(hyps, [refs]):
        stats = [x + y for x, y in zip(stats, s)]
    assert chrf._compute_f_score(stats) == c.score
    return {
        "hyps": hyps, "refs": refs, "lowercase": lowercase,
        "hyp_13a": [bleu._preprocess_segment(h) for h in hyps],
        "ref_13a": [bleu._preprocess_segment(r) for r in refs],
        "retok_13a": [BLEU()._preprocess_segment(t) for t in
                      [bleu._preprocess_segment(h) for h in hyps]],
        "score": b.score, "precisions": b.precisions, "bp": b.bp,
        "counts": b.counts, "totals": b.totals,
        "sys_len": b.sys_len, "ref_len": b.ref_len,
        "text": b.format(), "signature": str(bleu.get_signature()),
        "chrf_stats": [stats[3 * i:3 * i + 3] for i in range(6)],
        "chrf_text": c.format(), "chrf_signature": str(chrf.get_signature()),
    }


def main():
    cases = {}
    for name, hyps, refs in CASES:
        cases[name] = case(hyps, refs, False)
        if name in ("ascii", "german_caps", "corpus", "numbers"):
            cases[name + "_lc"] = case(hyps, refs, True)
    out = {"about": "sacreBLEU %s's corpus BLEU and chrF with their "
           "defaults; written by tests/reference/gen_bleu.py"
           % sacrebleu.__version__, "cases": cases}
    path = os.path.join(HERE, "ch7_bleu.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote %s (%d cases, %d bytes)" % (os.path.relpath(path),
                                             len(cases),
                                             os.path.getsize(path)))


if __name__ == "__main__":
    main()
