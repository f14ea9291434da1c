#!/usr/bin/env python3
"""Times PyTorch translating the test set with a ./ch7 checkpoint, four
ways: the PyTorch side of tests/bench/bench_mt.py's decoding.

    python3 tests/reference/decode_torch.py CHECKPOINT
    python3 tests/reference/decode_torch.py CHECKPOINT --limit 50 --ways ac

Needs PyTorch (and sacrebleu==2.6.0 for BLEU); the build and the tests
never do. The checkpoint (safetensors, ./ch7 --task translate --save)
is loaded into the module of gen_ch7_model.py in float32 (mt_torch.load),
and the source sentences go through its tokenizer as bpe.c's. The ways:

  a  greedy, no cache, batches of 100: each step runs the decoder over
     the whole prefix again (the loop most first implementations write)
  b  beam 4, no cache, one sentence at a time
  c  greedy with a key/value cache, batches of 128
  d  beam 4 with a key/value cache, batches of 64 (./ch7
     --translate-file decodes 32 a batch with a beam)

Greedy and beam search are decode.c's (mt_torch.greedy, mt_torch.beam):
sentences sorted by length, each stopped at <eos> or at its length + 50
tokens; beam search ranks finished hypotheses by log P / length^alpha
and stops a sentence when no live beam can beat its best one. Each way
prints its sentences/s (wall time, tokenizing excluded) and its BLEU
against the references (through the tokenizer and back, as mt.c scores
them); with --out DIR it writes each way's translations to DIR/WAY.txt
for comparing with ./ch7 --checkpoint CKPT --translate-file.
"""
import argparse
import os
import time

import torch

import mt_torch as mt

# way: (what, state, batch, beam: greedy or --beam)
WAYS = {"a": ("greedy, no cache, batches of 100", mt.Plain, 100, False),
        "b": ("beam %d, no cache, one sentence at a time", mt.Plain, 1,
              True),
        "c": ("greedy, cache, batches of 128", mt.Cached, 128, False),
        "d": ("beam %d, cache, batches of 64", mt.Cached, 64, True)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("checkpoint")
    p.add_argument("--src", default="data/multi30k/test_2016_flickr.de")
    p.add_argument("--ref", default="data/multi30k/test_2016_flickr.en")
    p.add_argument("--ways", default="abcd", help="which of a b c d")
    p.add_argument("--beam", type=int, default=4)
    p.add_argument("--alpha", type=float, default=1.0)
    p.add_argument("--limit", type=int, default=0,
                   help="only the first N sentences (0: all)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", metavar="DIR",
                   help="write each way's translations to DIR/WAY.txt")
    a = p.parse_args()
    if not a.ways or set(a.ways) - set(WAYS):
        p.error("--ways: letters of abcd, got %r" % a.ways)
    torch.set_num_threads(a.threads)

    model, bpe = mt.load(a.checkpoint)
    lines = mt.read_lines(a.src)
    refs = mt.read_lines(a.ref)
    if a.limit:
        lines, refs = lines[:a.limit], refs[:a.limit]
    if len(lines) != len(refs):
        p.error("%s has %d lines, %s %d" % (a.src, len(lines), a.ref,
                                            len(refs)))
    sources = [bpe.encode(s) for s in lines]
    refs = [bpe.decode(bpe.encode(r)) for r in refs]
    print("PyTorch %s, %d threads: %s, %d sentences, beam %d, alpha %g"
          % (torch.__version__, torch.get_num_threads(), a.checkpoint,
             len(sources), a.beam, a.alpha))
    if a.out:
        os.makedirs(a.out, exist_ok=True)
    for way in a.ways:
        what, state, batch, beam = WAYS[way]
        k = a.beam if beam else 1
        t0 = time.perf_counter()
        ids = mt.translate(model, sources, batch, state, k, a.alpha)
        secs = time.perf_counter() - t0
        hyps = [bpe.decode(h) for h in ids]
        score = mt.bleu(hyps, refs)
        print("%s  %-40s %8.1f sentences/s  BLEU %s" % (
            way, what % k if beam else what, len(hyps) / secs,
            "%.2f" % score.score if score else "? (pip install "
            "sacrebleu==2.6.0)"), flush=True)
        if a.out:
            with open(os.path.join(a.out, way + ".txt"), "w",
                      encoding="utf-8") as f:
                f.writelines(h + "\n" for h in hyps)


if __name__ == "__main__":
    main()
