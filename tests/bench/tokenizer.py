#!/usr/bin/env python3
"""Times chapter 9's GPT-2 tokenizer against tiktoken on this machine,
side by side: the same files, the same text, one thread each.

    make bench-tok                        # Tiny Shakespeare and Multi30k
    python3 tests/bench/tokenizer.py --bin build/cc/tok_bench \\
        [--tokenizer DIR] [--repeats N] [FILE...]

needs tiktoken (pip install tiktoken). The tokenizer is DIR's vocab.json
and merges.txt (or encoder.json and vocab.bpe): by default the one that
tests/reference/gen_ch9_tokenizer.py trained on Tiny Shakespeare, or
GPT-2's own with --tokenizer data/gpt2 after `make gpt2`. tiktoken's
Encoding is built from the same two files with GPT-2's pattern.

For each file, the whole file is one text, encoded without special
tokens (tiktoken's encode_ordinary; ours with allow_special false), the
best of --repeats runs:
  ours, cold   a freshly loaded tokenizer each run, its cache of pieces
               empty: what encoding a new text costs;
  ours, warm   the same text again: every piece in the cache;
  tiktoken     encode_ordinary, which keeps no state between calls.
Both sides' ids are compared (count and an FNV-1a 64 hash): a speed for
other ids would mean nothing. The report names the CPU, the versions and
the load average before and after (the machine may be shared).
"""
import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import bench  # noqa: E402   tests/bench/bench.py: cpu_description

GPT2_PAT = (r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+"
            r"|\s+(?!\S)|\s+")
FILES = ["data/tinyshakespeare.txt", "data/multi30k/train.de",
         "data/multi30k/train.en"]


def tiktoken_encoding(folder):
    os.environ["TIKTOKEN_CACHE_DIR"] = ""   # never a cached older file
    import tiktoken
    import tiktoken.load
    names = [("merges.txt", "vocab.json"), ("vocab.bpe", "encoder.json")]
    for merges, vocab in names:
        if os.path.exists(os.path.join(folder, vocab)):
            break
    ranks = tiktoken.load.data_gym_to_mergeable_bpe_ranks(
        os.path.join(folder, merges), os.path.join(folder, vocab))
    enc = tiktoken.Encoding(name="bench", pat_str=GPT2_PAT,
                            mergeable_ranks=ranks, special_tokens={})
    return tiktoken.__version__, enc


def fnv1a64(ids):
    h = 0xcbf29ce484222325
    for i in ids:
        for k in range(4):
            h = ((h ^ ((i >> (8 * k)) & 0xff)) * 0x100000001b3) & (2**64 - 1)
    return "%016x" % h


def ours(binary, folder, path, repeats):
    out = subprocess.run([binary, "--tokenizer", folder, "--repeats",
                          str(repeats), path], check=True, cwd=ROOT,
                         capture_output=True, text=True).stdout.split()
    # ids N fnv1a64 H cold S warm S load S
    return dict(ids=int(out[1]), hash=out[3], cold=float(out[5]),
                warm=float(out[7]), load=float(out[9]))


def theirs(enc, path, repeats):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        text = f.read()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        ids = enc.encode_ordinary(text)
        best = min(best, time.perf_counter() - t0)
    return dict(ids=len(ids), hash=fnv1a64(ids), time=best)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "cc",
                                                  "tok_bench"),
                    help="the C bench program (make builds it)")
    ap.add_argument("--tokenizer", default="tests/reference/ch9_tok",
                    help="folder of the two files (default %(default)s)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("files", nargs="*", default=FILES)
    args = ap.parse_args()
    if not os.path.exists(args.bin):
        sys.exit("tokenizer.py: %s is missing: make bench-tok builds it "
                 "(or name it with --bin)" % args.bin)
    os.environ["RAYON_NUM_THREADS"] = "1"   # (encode_ordinary is serial)
    version, enc = tiktoken_encoding(os.path.join(ROOT, args.tokenizer))
    cpu, features = bench.cpu_description()
    print("CPU: %s (%s), %d cores" % (cpu, features, os.cpu_count()))
    print("tiktoken %s, Python %s; tokenizer %s (%d tokens, no special)"
          % (version, sys.version.split()[0], args.tokenizer, enc.n_vocab))
    print("load average before: %.2f %.2f %.2f" % os.getloadavg())
    print("%-26s %9s %9s %9s %9s %9s %8s" % (
        "file", "MB", "ids", "ours cold", "ours warm", "tiktoken",
        "tk/cold"))
    same = True
    for path in args.files:
        o = ours(args.bin, args.tokenizer, path, args.repeats)
        t = theirs(enc, path, args.repeats)
        mb = os.path.getsize(os.path.join(ROOT, path)) / 1e6
        print("%-26s %9.2f %9d %8.1fms %8.1fms %8.1fms %7.2fx" % (
            path, mb, o["ids"], 1e3 * o["cold"], 1e3 * o["warm"],
            1e3 * t["time"], t["time"] / o["cold"]))
        if (o["ids"], o["hash"]) != (t["ids"], t["hash"]):
            print("  DIFFERENT IDS: ours %d (%s), tiktoken %d (%s)" % (
                o["ids"], o["hash"], t["ids"], t["hash"]))
            same = False
    print("(times: best of %d; tk/cold = tiktoken's time / ours with an "
          "empty cache; both on one thread)" % args.repeats)
    print("load average after: %.2f %.2f %.2f" % os.getloadavg())
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
