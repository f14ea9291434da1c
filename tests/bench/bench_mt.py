#!/usr/bin/env python3
"""Benchmarks ./ch7 --task translate against PyTorch on this machine: the
same model trained with the same recipe, and the same checkpoint
translating the test set.

    make bench-mt                                   # 60 steps, 2 threads
    make bench-mt BENCH="--checkpoint run.safetensors"
    python3 tests/bench/bench_mt.py --steps 20 --limit 100 -- --embd 64

What it does, in order:

 1. builds ./ch7 and build/cc/bpe_ids (make);
 2. trains with ./ch7 for --steps steps and saves the model: its
    tokenizer is the one both sides use;
 3. checks that PyTorch's side encodes every line of the six Multi30k
    files into the ids of the C tokenizer (tests/bench/bpe_ids.c);
 4. trains with tests/reference/translate_torch.py, the same flags;
 5. translates the test set with a checkpoint (--checkpoint, or else the
    one of step 2): ./ch7 --translate-file greedy and with a beam of 4,
    then tests/reference/decode_torch.py's four ways (greedy and beam,
    without and with a key/value cache), and counts the translations
    that are the same as ./ch7's;
 6. prints the report: the CPU and its AVX2 / AVX-512 flags, the PyTorch
    version and the threads; training tokens/s of both and their ratio;
    each decoder's sentences/s and BLEU.

Flags after "--" go to both trainers (--embd, --layers, --heads, --ffn,
--dropout, --smoothing, --batch-tokens, --lr, --warmup, --seed: see
./ch7 --task translate --help). Training tokens/s are the real source +
target ids over the steps' own time, as both programs print them. A
model of a few steps translates badly and long, so decoding speed means
more with a trained --checkpoint. decode_torch.py times its decoding
loop alone, so ./ch7's sentences/s are from the wall time of its whole
process less that of the same command on one sentence (starting,
loading the model and the tokenizer); the whole process's rate is
printed too. Every run's
output is kept in build/bench-mt/<time>/. The machine may be shared:
the load average is printed before and after.
"""
import argparse
import datetime
import os
import re
import subprocess
import sys
import time

import bench   # tests/bench/bench.py: the CPU description, torch_info

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REFERENCE = os.path.join(ROOT, "tests", "reference")
DATA = "data/multi30k"
FILES = ["train.de", "train.en", "val.de", "val.en", "test_2016_flickr.de",
         "test_2016_flickr.en"]
TEST_SRC, TEST_REF = FILES[4], FILES[5]

TRAINED_RE = re.compile(r"^trained\s+(\d+) steps in ([\d.]+) s: (\d+) "
                        r"tokens/s \(source \+ target\),\s+(\d+) target "
                        r"tokens/s", re.M)
WAY_RE = re.compile(r"^([abcd])  (.+?)\s+([\d.]+) sentences/s", re.M)


def log(msg=""):
    print(msg, flush=True)


def run(out_dir, label, cmd, timeout, stdout_to=None):
    """Runs cmd from the repository root; its output goes to
    out_dir/label.log (stdout to stdout_to instead, when given). Returns
    (the log's text, wall seconds); stops the bench on a failure."""
    path = os.path.join(out_dir, label + ".log")
    t0 = time.perf_counter()
    with open(path, "w") as logf:
        logf.write("$ %s\n" % " ".join(cmd))
        logf.flush()
        out = open(stdout_to, "w") if stdout_to else logf
        try:
            rc = subprocess.run(cmd, cwd=ROOT, stdout=out, stderr=logf,
                                timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            rc = "a timeout"
        finally:
            if stdout_to:
                out.close()
    wall = time.perf_counter() - t0
    with open(path) as f:
        text = f.read()
    if rc != 0:
        sys.exit("bench_mt: %s failed with %s; see %s:\n%s"
                 % (label, rc, os.path.relpath(path, ROOT), text[-2000:]))
    return text, wall


def check_ids(out_dir, bpe_ids, ckpt, mt):
    """Step 3: the C ids and PyTorch's of every line of the six files."""
    paths = [os.path.join(DATA, f) for f in FILES]
    c_ids = os.path.join(out_dir, "ids_c.txt")
    run(out_dir, "bpe_ids", [bpe_ids, ckpt] + paths, 600, c_ids)
    with open(c_ids) as f:
        want = [line.rstrip("\n") for line in f]
    bpe = mt.tokenizer_of(os.path.join(ROOT, ckpt))
    got = [" ".join(map(str, bpe.encode(line))) for p in paths
           for line in mt.read_lines(os.path.join(ROOT, p))]
    bad = [i for i, (x, y) in enumerate(zip(want, got)) if x != y]
    if bad or len(want) != len(got):
        sys.exit("bench_mt: the tokenizers differ: %d lines of C ids, %d of "
                 "PyTorch's, first difference at line %s"
                 % (len(want), len(got), bad[0] + 1 if bad else "?"))
    log("  the same ids on all %d lines of the six files" % len(got))


def main():
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        usage="%(prog)s [options] [-- flags of both trainers]")
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--threads", type=int, default=2,
                   help="./ch7 --threads and torch.set_num_threads")
    p.add_argument("--checkpoint", help="translate with this ./ch7 "
                   "checkpoint (default: the one trained in step 2)")
    p.add_argument("--limit", type=int, default=0,
                   help="translate only the first N test sentences")
    p.add_argument("--ways", default="abcd",
                   help="decode_torch.py's ways to time")
    p.add_argument("--python", default=sys.executable,
                   help="the Python that has PyTorch")
    p.add_argument("--bpe-ids", default="build/cc/bpe_ids",
                   help="the C ids program (make builds it)")
    p.add_argument("--no-build", action="store_true",
                   help="./ch7 and --bpe-ids are built (make bench-mt)")
    p.add_argument("--timeout", type=int, default=3600,
                   help="seconds for each run")
    a, extra = p.parse_known_args()
    extra = [x for x in extra if x != "--"]
    torch = bench.torch_info(a.python, False)
    if not torch:
        sys.exit("bench_mt: %s has no PyTorch (pip install torch)" % a.python)
    sys.path.insert(0, REFERENCE)
    import mt_torch as mt

    out_dir = os.path.join(ROOT, "build", "bench-mt",
                           datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))
    os.makedirs(out_dir, exist_ok=True)
    rel = os.path.relpath(out_dir, ROOT)
    cpu, features = bench.cpu_description()
    head = ["Machine: %s, %d cores; %s" % (cpu, os.cpu_count() or 0,
                                           features),
            "PyTorch %s (%s BLAS), %d threads; ./ch7 --threads %d"
            % (torch["version"], "MKL" if torch["mkl"] else "other",
               a.threads, a.threads),
            "load average at start %.2f; logs in %s"
            % (os.getloadavg()[0], rel)]
    log("\n".join(head) + "\n")

    if not a.no_build:
        log("== 1. make ch7 %s" % a.bpe_ids)
        run(out_dir, "make", ["make", "--no-print-directory", "ch7",
                              a.bpe_ids], a.timeout)

    flags = ["--steps", str(a.steps), "--threads", str(a.threads)] + extra
    ckpt = os.path.join(rel, "ch7.safetensors")
    log("== 2. ./ch7 --task translate %s" % " ".join(flags))
    # (--beam 1: its own test set greedy only; step 5 times decoding)
    c_out, _ = run(out_dir, "train_ch7",
                   ["./ch7", "--task", "translate", "--save", ckpt,
                    "--show", "0", "--beam", "1", "--print-every", "10"]
                   + flags, a.timeout)

    log("== 3. the tokenizers")
    check_ids(out_dir, a.bpe_ids, ckpt, mt)

    log("== 4. translate_torch.py %s" % " ".join(flags))
    t_out, _ = run(out_dir, "train_torch",
                   [a.python, os.path.join(REFERENCE, "translate_torch.py"),
                    "--tokenizer-from", ckpt, "--print-every", "10"] + flags,
                   a.timeout)
    c_tr, t_tr = TRAINED_RE.search(c_out), TRAINED_RE.search(t_out)
    if not c_tr or not t_tr:
        sys.exit("bench_mt: no 'trained ...' line from %s"
                 % ("./ch7" if not c_tr else "translate_torch.py"))

    model = os.path.abspath(a.checkpoint) if a.checkpoint else ckpt
    bpe = mt.tokenizer_of(os.path.join(ROOT, model))
    src = os.path.join(DATA, TEST_SRC)
    refs = mt.read_lines(os.path.join(ROOT, DATA, TEST_REF))
    if a.limit:   # the first lines only (decode_torch.py: --limit)
        src = os.path.join(rel, "test.de")
        with open(os.path.join(ROOT, src), "w", encoding="utf-8") as f:
            f.writelines(s + "\n" for s in mt.read_lines(
                os.path.join(ROOT, DATA, TEST_SRC))[:a.limit])
        refs = refs[:a.limit]
    refs = [bpe.decode(bpe.encode(r)) for r in refs]   # as mt.c scores
    log("== 5. translating %s with %s" % (src, model))
    # ./ch7's time is its whole process's; PyTorch's, its decoding loop
    # alone (decode_torch.py). So ./ch7's fixed cost, the best of five
    # runs on a one-line file (the process, the model, the tokenizer), is
    # taken off, and the whole process's rate is shown as well.
    one = os.path.join(rel, "one.de")
    with open(os.path.join(ROOT, one), "w", encoding="utf-8") as f:
        f.write(mt.read_lines(os.path.join(ROOT, DATA, TEST_SRC))[0] + "\n")
    c_hyps, rows, speed, whole = {}, [], {}, {}   # speed: ./ch7's by beam,
    fixed = {}                                    # PyTorch's by way
    for name, beam in (("greedy", "1"), ("beam 4", "4")):
        cmd = ["./ch7", "--task", "translate", "--checkpoint", model,
               "--beam", beam, "--threads", str(a.threads),
               "--translate-file"]
        fixed[beam] = min(run(out_dir, "decode_ch7_one_beam" + beam,
                              cmd + [one], a.timeout, os.devnull)[1]
                          for _ in range(5))
        path = os.path.join(out_dir, "c_%s.txt" % beam)
        _, wall = run(out_dir, "decode_ch7_beam" + beam, cmd + [src],
                      a.timeout, path)
        c_hyps[beam] = mt.read_lines(path)
        whole[beam] = len(refs) / wall
        speed[beam] = len(refs) / max(wall - fixed[beam], 1e-9)
        rows.append(("./ch7 %s, cache, batches of %s" % (
                         name, "64" if beam == "1" else "32"), speed[beam],
                     mt.bleu(c_hyps[beam], refs), "-"))
    py_dir = os.path.join(out_dir, "torch")
    d_out, _ = run(out_dir, "decode_torch",
                   [a.python, os.path.join(REFERENCE, "decode_torch.py"),
                    model, "--limit", str(a.limit), "--ways", a.ways,
                    "--threads", str(a.threads), "--out", py_dir],
                   a.timeout)
    for way, what, sps in WAY_RE.findall(d_out):
        hyps = mt.read_lines(os.path.join(py_dir, way + ".txt"))
        mine = c_hyps["1" if way in "ac" else "4"]
        same = sum(x == y for x, y in zip(hyps, mine))
        speed[way] = float(sps)
        rows.append(("PyTorch %s %s" % (way, what), speed[way],
                     mt.bleu(hyps, refs), "%d/%d" % (same, len(mine))))

    log("\n== report (%s)\n" % rel)
    log("\n".join(head[:2]))
    log("\ntraining, %d steps: %s" % (a.steps, " ".join(flags)))
    log("  %-26s %12s %18s" % ("", "tokens/s", "target tokens/s"))
    log("  %-26s %12s %18s" % ("./ch7", c_tr.group(3), c_tr.group(4)))
    log("  %-26s %12s %18s" % ("PyTorch", t_tr.group(3), t_tr.group(4)))
    log("  ratio ./ch7 / PyTorch: %.2f in target tokens/s, %.2f in source "
        "+ target (ids per second of the steps' time)"
        % (int(c_tr.group(4)) / int(t_tr.group(4)),
           int(c_tr.group(3)) / int(t_tr.group(3))))
    log("\ndecoding %d test sentences with %s:" % (len(refs), model))
    log("  %-50s %12s %7s %9s" % ("", "sentences/s", "BLEU",
                                  "= ./ch7"))
    for what, sps, score, same in rows:
        log("  %-50s %12.1f %7s %9s" % (what, sps, "%.2f" % score.score
                                        if score else "?", same))
    log("  (./ch7's decoding alone: its whole process, %.1f and %.1f "
        "sentences/s, less that of one sentence, %.2f and %.2f s)"
        % (whole["1"], whole["4"], fixed["1"], fixed["4"]))
    for ways, what in (("ab", "without"), ("cd", "with")):
        if ways[0] in speed and ways[1] in speed:
            log("  ratio ./ch7 / PyTorch %s a cache: greedy %.2f, beam %.2f"
                " (whole process: %.2f, %.2f)"
                % (what, speed["1"] / speed[ways[0]],
                   speed["4"] / speed[ways[1]],
                   whole["1"] / speed[ways[0]], whole["4"] / speed[ways[1]]))
    log("\nload average at the end %.2f" % os.getloadavg()[0])


if __name__ == "__main__":
    main()
