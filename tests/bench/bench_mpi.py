#!/usr/bin/env python3
"""Data-parallel training on this machine: ./ch6 on 2 MPI ranks of one
thread each against one process of two threads, on the same work, and
PyTorch the same two ways (DistributedDataParallel over gloo, and one
process); then a model of what the all-reduce would cost across machines.

    make bench-mpi                        # builds, then runs this
    python3 tests/bench/bench_mpi.py --bin build/cc [--steps N] [--quick]

The work: chapter 6's default model (4 layers, 4 heads, 128 wide, block
128), batch 16, dropout 0, a fixed number of steps with no evaluation
but the last. tokens/s is the median step's, for the whole batch; each
configuration runs --repeats times, ours and PyTorch's alternating, and
the best is kept (the machine may be shared). For the 2-rank run of
./ch6 its summary also gives the time spent in the all-reduce per step
(waiting for the other rank included).

The cost model: a ring all-reduce sends and receives 2(N-1)/N times the
gradient buffer per rank and per step. N machines, each doing this
machine's step on its own batch, keep 90% of N times one machine's
throughput when the all-reduce takes at most a ninth of a step (no
overlap) -- the bandwidth that needs is printed for the default model and
the nanogpt preset, whose step time is measured here too (3 steps).
Latency (2(N-1) messages a step) is left out: it matters for small
models on slow networks. No run across machines was possible here: the
numbers for N > 1 machines are the model's, not measurements.
"""
import argparse
import datetime
import os
import platform
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TRAIN_TORCH = os.path.join(ROOT, "tests", "reference", "train_torch.py")
DDP_TORCH = os.path.join(HERE, "ddp_torch.py")

MODEL = ["--layers", "4", "--heads", "4", "--embd", "128", "--block", "128"]
MPIRUN = ["mpirun", "-q", "--oversubscribe", "--mca", "btl", "self,vader",
          "--mca", "btl_vader_single_copy_mechanism", "none"]


def cpu_name():
    name, flags = platform.processor() or "unknown CPU", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and name == "unknown CPU":
                    name = line.split(":", 1)[1].strip()
                elif line.startswith(("flags", "Features")):
                    flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    if platform.machine() in ("aarch64", "arm64"):    # (its "Features")
        isa = "SVE" if "sve" in flags else "NEON"
    else:
        isa = ("AVX-512" if "avx512f" in flags
               else "AVX2" if "avx2" in flags else "no AVX2")
    return "%s, %s, %d cores" % (name, isa, os.cpu_count() or 0)


def run(cmd, env=None):
    """Runs cmd; returns (tokens/s, all-reduce ms a step or None, output)."""
    e = dict(os.environ)
    if os.geteuid() == 0:
        e.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    e.update(env or {})
    p = subprocess.run(cmd, env=e, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    out = p.stdout
    m = re.search(r"^summary: .*?([0-9.]+) tokens/s", out, re.M)
    if p.returncode != 0 or not m:
        sys.exit("bench_mpi: %s failed (status %d):\n%s"
                 % (" ".join(cmd), p.returncode, out[-2000:]))
    r = re.search(r"^all-reduce: ([0-9.]+) ms a step", out, re.M)
    return float(m.group(1)), float(r.group(1)) if r else None, out


def params_of(out):
    m = re.search(r"^model .*: ([0-9]+) parameters", out, re.M)
    return int(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default="build/cc",
                    help="folder with ch6 and ch6-mpi (make bench-mpi)")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--quick", action="store_true",
                    help="a smoke test: 8 steps, once, no nanogpt step")
    ap.add_argument("--no-torch", action="store_true")
    a = ap.parse_args()
    if a.quick:
        a.steps, a.repeats = 8, 1
    ch6 = os.path.join(a.bin, "ch6")
    ch6_mpi = os.path.join(a.bin, "ch6-mpi")
    for f in (ch6, ch6_mpi):
        if not os.access(f, os.X_OK):
            sys.exit("bench_mpi: no %s (make bench-mpi builds it)" % f)
    torch_ok = not a.no_torch and subprocess.run(
        [sys.executable, "-c", "import torch"],
        stderr=subprocess.DEVNULL).returncode == 0

    work = MODEL + ["--batch", "16", "--steps", str(a.steps), "--warmup",
                    "100", "--eval-every", "0", "--eval-iters", "1",
                    "--sample-chars", "0", "--quiet"]
    torch_work = MODEL + ["--batch", "16", "--steps", str(a.steps),
                          "--dropout", "0", "--warmup", "100",
                          "--eval-every", "0", "--eval-iters", "1",
                          "--quiet"]
    configs = [
        ("ours, 1 process x 2 threads", [ch6] + work + ["--threads", "2"]),
        ("ours, 2 ranks x 1 thread (MPI)",
         MPIRUN + ["-np", "2", ch6_mpi] + work + ["--threads", "1"]),
        ("ours, 1 process x 1 thread", [ch6] + work + ["--threads", "1"]),
    ]
    if torch_ok:
        configs += [
            ("PyTorch, 1 process x 2 threads",
             [sys.executable, TRAIN_TORCH] + torch_work + ["--threads", "2"]),
            ("PyTorch DDP (gloo), 2 processes x 1 thread",
             [sys.executable, DDP_TORCH, "--procs", "2", "--threads", "1",
              "--batch", "16", "--steps", str(a.steps)] + MODEL),
        ]
    best, reduce_ms, outs = {}, None, {}
    for rep in range(a.repeats):
        for name, cmd in configs:
            print("  run %d/%d: %s" % (rep + 1, a.repeats, name), flush=True)
            tok, red, out = run(cmd)
            if tok > best.get(name, 0):
                best[name] = tok
                outs[name] = out
                if red is not None:
                    reduce_ms = red

    lines = ["# Data-parallel training on one machine",
             "", "%s; %s; %s" % (datetime.date.today(), cpu_name(),
                                 "python3 tests/bench/bench_mpi.py "
                                 + " ".join(sys.argv[1:])), "",
             "Work: the default model, batch 16 x 128, %d steps, best of %d."
             % (a.steps, a.repeats), "",
             "| configuration | tokens/s | against 1 process x 2 threads |",
             "|---|---:|---:|"]
    base_ours = best[configs[0][0]]
    base_torch = best.get("PyTorch, 1 process x 2 threads")
    for name, _ in configs:
        base = base_torch if name.startswith("PyTorch") else base_ours
        lines.append("| %s | %.0f | %.2fx |" % (name, best[name],
                                                 best[name] / base))
    two = best[configs[1][0]]
    step_ms = 16 * 128 / two * 1e3
    lines += ["", "./ch6 on 2 ranks: %.1f ms a step, of which %.2f ms in the "
              "all-reduce (%.1f%%)." % (step_ms, reduce_ms,
                                        100 * reduce_ms / step_ms)]
    if torch_ok:
        ddp = best["PyTorch DDP (gloo), 2 processes x 1 thread"]
        lines.append("2 ranks, ours against PyTorch DDP: %.2fx." % (two / ddp))

    # the cost model
    models = [("default", params_of(outs[configs[0][0]]),
               16 * 128 / base_ours)]
    if not a.quick:
        print("  the nanogpt preset: 3 steps, to time one", flush=True)
        tok, _, out = run([ch6, "--preset", "nanogpt", "--steps", "3",
                           "--eval-iters", "1", "--sample-chars", "0",
                           "--quiet", "--threads", "2"])
        models.append(("nanogpt", params_of(out), 64 * 256 / tok))
    lines += ["", "## The all-reduce across machines (a model, not a "
              "measurement)", "",
              "Bandwidth each machine needs so that N machines, each doing "
              "this machine's step, keep 90% of N times its throughput (the "
              "all-reduce, ring, at most a ninth of a step, not overlapped):",
              "", "| model | parameters | MB reduced a step | step here "
              "| N = 2 | N = 4 | N = 8 | N large |", "|---|---:|---:|---:|"
              "---:|---:|---:|---:|"]
    for name, n, step_s in models:
        mb = 4 * n / 1e6
        cells = []
        for N in (2, 4, 8, None):
            factor = 2.0 if N is None else 2.0 * (N - 1) / N
            gbit = factor * 4 * n * 8 / (step_s / 9) / 1e9
            cells.append("%.2f Gbit/s" % gbit)
        lines.append("| %s | %d | %.1f | %.3f s | %s |"
                     % (name, n, mb, step_s, " | ".join(cells)))
    lines += ["", "A real run across machines was not possible here (one "
              "2-core machine, no network); the table is arithmetic on the "
              "step times measured above."]
    report = "\n".join(lines) + "\n"
    print()
    print(report)
    os.makedirs(os.path.join(ROOT, "build", "bench"), exist_ok=True)
    with open(os.path.join(ROOT, "build", "bench", "mpi_report.md"), "w") as f:
        f.write(report)


if __name__ == "__main__":
    main()
