#!/usr/bin/env python3
"""Chapter 8's benchmark: ./ch8 against PyTorch on the same GPU.

    make bench-gpu                      # or: python3 tests/bench/cuda/bench_gpu.py
    python3 tests/bench/cuda/bench_gpu.py --steps 100 --quick

For the nanoGPT shakespeare-char model (./ch8 --preset nanogpt: 6 layers,
6 heads, 384 wide, block 256, batch 64, dropout 0.2) and a larger one (12
layers, 12 heads, 768 wide, block 1024, batch 8), it runs a fixed number
of steps of

  - ./ch8 (fp32; attention with (T, T) weights), ./ch8 --flash (the
    fused attention), ./ch8 --tf32, ./ch8 --bf16, ./ch8 --bf16
    --causal-block 0 (the whole T x T square: what the blocks save), and
    ./ch8 --bf16 --flash (the fused attention on the tensor cores)
  - tests/reference/train_torch.py --device cuda, eager and torch.compile
    (fp32, with --tf32, and with --bf16: autocast)

one after another on the same GPU, and prints tokens/s (median step),
the ratio to PyTorch eager, the model FLOP utilisation (MFU: nanoGPT's
6N + 12 L C T flops per token, against the card's dense peak for the
precision, where the card is one whose peaks are listed below), and each
one's peak GPU memory where it reports it (--only picks some of them, by label). With --full it also
trains the nanogpt preset for its 5000 steps with ./ch8 and PyTorch eager,
in fp32 and in bf16, and prints the time to val 1.50 and the final val
loss (nanoGPT's README reports about 1.47); --full-stop 1.5 ends those
runs at the first evaluation at or below 1.5. The GPU and the CPU it ran
on are printed first. Nothing here is run by make check.
"""
import argparse
import os
import platform
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.dirname(HERE))
import bench  # noqa: E402  (tests/bench/bench.py: its output parser)

TRAIN_TORCH = os.path.join(ROOT, "tests", "reference", "train_torch.py")

# name, layers, heads, embd, block, batch, dropout
MODELS = [("nanogpt", 6, 6, 384, 256, 64, 0.2),
          ("gpt2-124M-shape", 12, 12, 768, 1024, 8, 0.0)]


# Dense peaks in TFLOP/s of the cards we know, from NVIDIA's datasheets:
# fp32 (the ordinary cores), TF32 and bf16 (the tensor cores).
PEAKS = {"H100 80GB HBM3": {"fp32": 66.9, "tf32": 494.7, "bf16": 989.4},
         "A100-SXM4": {"fp32": 19.5, "tf32": 156.0, "bf16": 312.0}}


def precision(label):
    return "bf16" if "bf16" in label else "tf32" if "tf32" in label \
        else "fp32"


def flops_per_token(m):
    """nanoGPT's estimate: 6 flops per weight (forward and backward) plus
    attention's 12 L C T; the weights are the blocks' 12 L C^2 and the
    65 characters' embedding (positions and LayerNorms left out)."""
    _, L, NH, C, T, B, drop = m
    return 6 * (12 * L * C * C + 65 * C) + 12 * L * C * T


def mfu(m, tok_s, label, gpu):
    peak = next((p for name, p in PEAKS.items() if name in gpu), None)
    if not peak or not tok_s:
        return None
    return tok_s * flops_per_token(m) / (peak[precision(label)] * 1e12)


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def gpu_name():
    try:
        return subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version",
             "--format=csv,noheader"], capture_output=True, text=True,
            check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "no nvidia-smi"


def run(label, cmd, timeout):
    print("--- %s: %s" % (label, " ".join(cmd)), flush=True)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        print("    timed out after %d s" % timeout)
        return None
    out = p.stdout + p.stderr
    os.makedirs(os.path.join(ROOT, "build", "bench-gpu"), exist_ok=True)
    with open(os.path.join(ROOT, "build", "bench-gpu",
                           label.replace(" ", "_") + ".log"), "w") as f:
        f.write(out)
    if p.returncode != 0:
        print("    failed (status %d): %s" % (p.returncode,
                                              out.strip()[-400:]))
        return None
    r = bench.parse(out)
    for line in out.splitlines():
        if ("GPU:" in line or line.startswith("summary")
                or line.startswith("         val ")):   # the summary's
            print("    " + line.strip())
    return r


def model_flags(m, steps):
    _, L, NH, C, T, B, drop = m
    return ["--layers", str(L), "--heads", str(NH), "--embd", str(C),
            "--block", str(T), "--batch", str(B), "--dropout", str(drop),
            "--steps", str(steps), "--eval-every", "0", "--eval-iters", "2"]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=200,
                   help="steps per throughput run")
    p.add_argument("--quick", action="store_true",
                   help="fewer runs: no torch.compile with TF32")
    p.add_argument("--models", default="nanogpt,gpt2-124M-shape",
                   help="which models, by name, comma-separated")
    p.add_argument("--full", action="store_true",
                   help="also the full 5000-step nanogpt run, both sides")
    p.add_argument("--only", default="",
                   help="only these implementations, by label, "
                        "comma-separated (\"ch8,torch eager\")")
    p.add_argument("--full-stop", type=float, default=0,
                   help="with --full: stop at the first val <= this")
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--timeout", type=int, default=900)
    a = p.parse_args()
    gpu = gpu_name()
    print("GPU: %s\nCPU: %s" % (gpu, cpu_name()), flush=True)
    if not os.access(os.path.join(ROOT, "ch8"), os.X_OK):
        sys.exit("bench_gpu: build ./ch8 first (make ch8)")
    rows = []
    for m in [m for m in MODELS if m[0] in a.models.split(",")]:
        f = model_flags(m, a.steps)
        torch = [a.python, TRAIN_TORCH, "--device", "cuda"]
        impls = [("ch8", ["./ch8"] + f + ["--sample-chars", "0"]),
                 ("ch8 --flash", ["./ch8", "--flash"] + f
                  + ["--sample-chars", "0"]),
                 ("ch8 --tf32", ["./ch8", "--tf32"] + f
                  + ["--sample-chars", "0"]),
                 ("ch8 --bf16", ["./ch8", "--bf16"] + f
                  + ["--sample-chars", "0"]),
                 ("ch8 --bf16 --causal-block 0",
                  ["./ch8", "--bf16", "--causal-block", "0"] + f
                  + ["--sample-chars", "0"]),
                 ("ch8 --bf16 --flash", ["./ch8", "--bf16", "--flash"] + f
                  + ["--sample-chars", "0"]),
                 ("torch eager", torch + f),
                 ("torch eager tf32", torch + ["--tf32"] + f),
                 ("torch eager bf16", torch + ["--bf16"] + f),
                 ("torch.compile", torch + ["--compile"] + f),
                 ("torch.compile bf16", torch + ["--compile", "--bf16"]
                  + f)]
        if not a.quick:
            impls.append(("torch.compile tf32", torch + ["--compile",
                                                         "--tf32"] + f))
        # The block's plain kernels against the fused ones (the default),
        # and a step as one CUDA graph (--graph, which needs dropout 0:
        # compared with ./ch8 and PyTorch without dropout too). Run when
        # not --quick, or when --only names them.
        sc = ["--sample-chars", "0"]
        d0 = ["--dropout", "0"]
        extra = [("ch8 --unfused", ["./ch8", "--unfused"] + f + sc),
                 ("ch8 --bf16 --unfused",
                  ["./ch8", "--bf16", "--unfused"] + f + sc),
                 ("ch8 --dropout 0", ["./ch8"] + f + d0 + sc),
                 ("ch8 --dropout 0 --graph",
                  ["./ch8", "--graph"] + f + d0 + sc),
                 ("ch8 --bf16 --dropout 0", ["./ch8", "--bf16"] + f + d0
                  + sc),
                 ("ch8 --bf16 --dropout 0 --graph",
                  ["./ch8", "--bf16", "--graph"] + f + d0 + sc),
                 ("torch eager --dropout 0", torch + f + d0),
                 ("torch eager bf16 --dropout 0", torch + ["--bf16"] + f
                  + d0)]
        if not a.quick or a.only:
            impls += extra
        if a.only:
            impls = [i for i in impls if i[0] in a.only.split(",")]
        res = {}
        for label, cmd in impls:
            r = run("%s %s" % (m[0], label), cmd, a.timeout)
            if r:   # both print the median step's tokens/s in the summary
                r["tok_s"] = r.get("summary_tok_s")
            res[label] = r
        base = res.get("torch eager")
        for label, _ in impls:
            r = res[label]
            tok = r["tok_s"] if r and r.get("tok_s") else None
            ratio = (tok / base["tok_s"] if tok and base and base.get("tok_s")
                     else None)
            rows.append((m[0], label, tok, ratio, mfu(m, tok, label, gpu),
                         r["peak"] if r else None))
    print("\n| model | implementation | tokens/s | vs torch eager | MFU | "
          "peak MiB |\n|---|---|---:|---:|---:|---:|")
    for name, label, tok, ratio, u, peak in rows:
        print("| %s | %s | %s | %s | %s | %s |" % (
            name, label, "%.0f" % tok if tok else "-",
            "%.2fx" % ratio if ratio else "-",
            "%.1f%%" % (100 * u) if u else "-",
            "%.0f" % peak if peak else "-"))
    if a.full:
        stop = ["--stop-at-val", str(a.full_stop)]
        print("\nthe full nanogpt run (5000 steps%s)"
              % (", stopping at val <= %g" % a.full_stop if a.full_stop
                 else ""))
        torch_full = [a.python, TRAIN_TORCH, "--device", "cuda", "--layers",
                      "6", "--heads", "6", "--embd", "384", "--block", "256",
                      "--batch", "64", "--dropout", "0.2", "--steps", "5000",
                      "--eval-every", "250", "--eval-iters", "200",
                      "--quiet"]
        if a.full_stop:
            torch_full += stop
        ch8_full = ["./ch8", "--preset", "nanogpt", "--sample-chars", "200"]
        ch8_full += stop if a.full_stop else ["--stop-at-val", "0"]
        for label, cmd in [("ch8", ch8_full),
                           ("ch8 --bf16", ch8_full + ["--bf16"]),
                           ("torch eager", torch_full),
                           ("torch eager bf16", torch_full + ["--bf16"])]:
            if a.only and label not in a.only.split(","):
                continue
            r = run("full " + label, cmd, a.timeout * 4)
            if r:
                first = next((s for s, v in r["evals"] if v <= 1.50), None)
                best = min((v for s, v in r["evals"]), default=None)
                print("    %s: val %s (best %s), first val <= 1.50 at step "
                      "%s, %.0f s training" % (label, r["val"], best, first,
                                               r["train_s"] or 0))

if __name__ == "__main__":
    main()
