#!/usr/bin/env python3
"""Benchmarks ./ch6 against PyTorch on this machine, same model, same recipe.

    bash tests/bench/bench.sh            # the whole bench (about 15 minutes
                                         # on 2 cores, more if it must wait)
    bash tests/bench/bench.sh --quick    # a smoke test: a few steps of each
    bash tests/bench/bench.sh --help

What it does, in order:

 1. builds ./ch6 (make ch6);
 2. measures this machine's SGEMM peak: a small C program, compiled here
    against OpenBLAS (pkg-config openblas), times a large square
    cblas_sgemm on all cores and prints GFLOP/s and OpenBLAS's core type;
 3. throughput: configs A, B and C (below) for a fixed number of steps,
    dropout 0, with ./ch6 and with tests/reference/train_torch.py (PyTorch,
    torch.set_num_threads 1 and 2, eager, and torch.compile where it is
    asked for), alternating ours and theirs, and Debian's python3-torch 1.13
    as a second PyTorch point when it is installed (/usr/bin/python3);
 4. steps 2 and 3 again with OPENBLAS_CORETYPE flipped: unset when the
    environment sets it, Haswell when it does not (on x86-64 only: an
    x86 core type; elsewhere this pass is left out unless the variable is
    set) (pip's PyTorch uses MKL, not OpenBLAS, so it is not run again:
    its numbers carry over);
 5. the B recipe (config B trained as in nanoGPT's README for CPUs) with
    --stop-at-val 1.886 for both, timing how long each takes to get there;
 6. prints a markdown report (also saved as build/bench/report.md, with the
    raw output of every run beside it).

tokens/s is the median over the steps after the first few (warm-up and,
with torch.compile, compilation); FLOPs utilisation is
tokens/s * (6N + 12*L*C*T) / SGEMM peak, with N the parameters less the
position table (nanoGPT's estimate). "target needs" is our
target ratio (2x PyTorch on A and B, 1.5x on C) turned into the FLOPs
utilisation it would take: above about 90% no implementation built on
this SGEMM can reach it. The machine may be shared: the
CPU time that other processes used during each run (in cores) and the
spread of its step times (p90/p10) are printed beside it, and each
measurement runs --repeats times (the best is kept).
"""
import argparse
import datetime
import os
import platform
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TRAIN_TORCH = os.path.join(ROOT, "tests", "reference", "train_torch.py")
PRODUCTS = os.path.join(ROOT, "build", "products")     # make products
DEBIAN_PY = "/usr/bin/python3"

# name, layers, heads, embd, block, batch; D is ./ch6's default shape, the
# one a student runs
CONFIGS = [("D", 4, 4, 128, 128, 16), ("A", 4, 4, 128, 128, 64),
           ("B", 4, 4, 128, 64, 12), ("C", 6, 6, 384, 256, 64)]
# C runs 8 steps: of 4, the two after the warm-up are the whole sample, and
# one of them can be ./ch6's try of another thread count (--threads 0)
STEPS = {"D": 40, "A": 12, "B": 40, "C": 8}  # 3-15 s of PyTorch; C ~100 s
QUICK_STEPS = {"D": 6, "A": 3, "B": 5, "C": 2}
REPEATS = {"D": 3, "A": 2, "B": 2, "C": 1}
# PyTorch runs left out of a config unless --torch-threads all: on config C
# one thread measured half as fast as two here (about 500 against 950
# tokens/s), and each of its steps takes 15-30 s
SKIP_AUTO = {"C": ("pt1",)}

# nanoGPT's README recipe for a CPU ("baby GPT" on shakespeare_char):
# n_layer 4, n_head 4, n_embd 128, block 64, batch 12, lr 1e-3 -> 1e-4
# cosine over 2000 iters, warmup 100, beta2 0.99, weight decay 0.1, clip
# 1.0, dropout 0.0, no biases; evaluated every 100 steps on 20 batches.
RECIPE = ["--layers", "4", "--heads", "4", "--embd", "128", "--block", "64",
          "--batch", "12", "--dropout", "0", "--bias", "0", "--lr", "1e-3",
          "--min-lr", "1e-4", "--warmup", "100", "--decay-steps", "2000",
          "--steps", "2000", "--beta1", "0.9", "--beta2", "0.99",
          "--weight-decay", "0.1", "--grad-clip", "1.0", "--eval-every",
          "100", "--eval-iters", "20", "--seed", "1337"]
RECIPE_TARGET = 1.886

SGEMM_C = r"""
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 2048;
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    size_t bytes = sizeof(float) * (size_t)n * n;
    float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
    if (!a || !b || !c) return 1;
    for (long i = 0; i < (long)n * n; i++) {
        a[i] = (float)(i % 7) * 0.1f;
        b[i] = (float)(i % 5) * 0.1f;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n,
                b, n, 0.0f, c, n);                                /* warm-up */
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t = now();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f,
                    a, n, b, n, 0.0f, c, n);
        t = now() - t;
        if (t < best) best = t;
    }
    printf("sgemm n %d: %.1f GFLOP/s, %d threads, core %s\n", n,
           2.0 * n * n * (double)n / best / 1e9, openblas_get_num_threads(),
           openblas_get_corename());
    return c[1] == 12345.0f;
}
"""

# a step's line: PyTorch's scripts give its time ("| 41.2 ms | 18634
# tok/s"), ./ch6 its speed ("step 5/5  loss 3.7192  lr 4.5e-04  norm
# 1.655  17781 tok/s  ETA 0.0s"), from which the time comes with the
# tokens a step (TOKENS_RE, ./ch6's "training" line)
STEP_RE = re.compile(r"^step (\d+)/(\d+) +(?:\| )?loss (\S+) +(?:\| )?lr \S+"
                     r" +(?:\| )?norm \S+ +(?:\| ([\d.]+) ms \| )?(\d+) tok/s")
TOKENS_RE = re.compile(r"= (\d+) tokens/step")
SUMMARY_RE = re.compile(r"^summary: steps (\d+), ([\d.]+) s training, (\d+) "
                        r"tokens/s \(median of steps \d+\.\.\)\n +val (\S+), "
                        r"peak memory ([\d.]+) MiB", re.M)
REACHED_RE = re.compile(r"^reached val ([\d.]+) <= ([\d.]+) at step (\d+) "
                        r"after ([\d.]+) s")
EVAL_RE = re.compile(r"^eval step (\d+): train (\S+), val (\S+)")


def die(msg):
    sys.exit("bench: error: " + msg)


def log(msg=""):
    print(msg, flush=True)


class Bench:
    def __init__(self, a):
        self.a = a
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        self.dir = os.path.join(ROOT, "build", "bench", stamp)
        os.makedirs(self.dir, exist_ok=True)
        self.n_runs = 0
        self.notes = []
        self.failed = []     # labels of runs that failed or were unreadable

    # ---- running one program and reading its output ---------------------

    def run(self, label, cmd, env, timeout):
        self.n_runs += 1
        path = os.path.join(self.dir, "%02d-%s.log" % (
            self.n_runs, re.sub(r"[^A-Za-z0-9_.-]+", "_", label)))
        self.wait_quiet()
        load = os.getloadavg()[0]
        busy0, kids0 = cpu_busy(), children_cpu()
        t0 = time.perf_counter()
        try:
            p = subprocess.run(cmd, env=env, cwd=ROOT, timeout=timeout,
                               stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            out, rc = p.stdout, p.returncode
        except subprocess.TimeoutExpired as e:
            out = e.stdout or ""
            if isinstance(out, bytes):
                out = out.decode(errors="replace")
            rc = "timeout"
        wall = time.perf_counter() - t0
        # cores kept busy by other processes while this one ran: all busy
        # time of the machine less this run's own
        others = max(0.0, (cpu_busy() - busy0) - (children_cpu() - kids0))
        with open(path, "w") as f:
            f.write("$ %s\n" % " ".join(shlex.quote(c) for c in cmd))
            f.write(out)
        r = parse(out)
        r.update(label=label, rc=rc, wall=wall, load=load, log=path,
                 others=others / wall if wall > 0 else 0.0)
        if rc != 0 or not r["steps"]:
            tail = " | ".join(out.strip().splitlines()[-3:])
            r["error"] = "exit %s: %s" % (rc, tail[-300:])
            self.failed.append(label)
        return r

    def wait_quiet(self):
        """Waits (at most --wait-quiet seconds) until other processes use
        less than a third of a core, sampled over one second."""
        if self.a.wait_quiet <= 0:
            return
        t_end = time.perf_counter() + self.a.wait_quiet
        waited = False
        while True:
            b0 = cpu_busy()
            time.sleep(1.0)
            busy = cpu_busy() - b0
            if busy < 0.33 or time.perf_counter() >= t_end:
                break
            if not waited:
                log("  (waiting for the machine to be quiet: other "
                    "processes use %.1f cores)" % busy)
                waited = True

    def show(self, r):
        if r.get("error") and r["tok_s"] is None:
            log("  %-34s FAILED (%s; %s)" % (r["label"], r["error"],
                                            os.path.relpath(r["log"], ROOT)))
            return
        log("  %-34s %8.0f tok/s  peak %7.1f MiB  spread %.2f  others %.2f"
            "  %.0f s" % (r["label"], r["tok_s"], r["peak"] or 0,
                          r["spread"], r["others"], r["wall"]))


def cpu_busy():
    """Seconds of CPU time the whole machine has spent busy (/proc/stat)."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return 0.0
    idle = v[3] + (v[4] if len(v) > 4 else 0)        # idle + iowait
    return (sum(v[:8]) - idle) / os.sysconf("SC_CLK_TCK")


# x86-64 (or 32-bit x86): where AVX2, AVX-512 and OpenBLAS's Haswell
# core type mean something
X86 = platform.machine() in ("x86_64", "AMD64", "i386", "i486", "i586",
                             "i686")


def cpu_description():
    """(the CPU's model name, "avx2 yes, fma yes, avx512f no") from
    /proc/cpuinfo; on arm64 the vector units' ("asimd yes, sve no"), and
    the machine's name when /proc/cpuinfo names no model;
    (platform's name, "unknown") without it."""
    cpu = platform.processor() or platform.machine()
    features = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            info = f.read()
        if X86:
            cpu = re.search(r"model name\s*:\s*(.*)", info).group(1)
            have = set(re.search(r"^flags\s*:\s*(.*)$", info, re.M)
                       .group(1).split())
            names = ("avx2", "fma", "avx512f")
        else:
            m = re.search(r"model name\s*:\s*(.*)", info)
            cpu = m.group(1) if m else cpu
            have = set(re.search(r"^Features\s*:\s*(.*)$", info, re.M)
                       .group(1).split())
            names = ("asimd", "sve")
        features = ", ".join("%s %s" % (x, "yes" if x in have else "no")
                             for x in names)
    except (OSError, AttributeError):
        pass
    return cpu, features


def children_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def parse(out):
    steps, reached, evals = [], None, []
    # what a terminal would show: each redrawn line as it was left
    lines = [line.rsplit("\r", 1)[-1].replace("\033[K", "")
             for line in out.splitlines()]
    summary = SUMMARY_RE.search("\n".join(lines))   # two lines
    tokens = TOKENS_RE.search(out)
    for line in lines:
        m = STEP_RE.match(line)
        if m and (m.group(4) or tokens):
            steps.append(float(m.group(4)) if m.group(4) else
                         1000.0 * int(tokens.group(1)) / int(m.group(5)))
            continue
        m = REACHED_RE.match(line)
        if m:
            reached = m
            continue
        m = EVAL_RE.match(line)
        if m:
            evals.append((int(m.group(1)), float(m.group(3))))
    r = dict(steps=len(steps), tok_s=None, spread=0.0, peak=None,
             val=None, reached=None, summary_tok_s=None, evals=evals,
             train_s=None)
    if summary:
        r["peak"] = float(summary.group(5))
        r["val"] = float(summary.group(4))
        r["summary_tok_s"] = float(summary.group(3))
        r["train_s"] = float(summary.group(2))
    if reached:
        r["reached"] = (float(reached.group(1)), int(reached.group(3)),
                        float(reached.group(4)))
    if steps:
        # leave out warm-up: the first step of 2-3, the first two of more
        skip = 0 if len(steps) == 1 else 1 if len(steps) <= 3 else 2
        ms = sorted(steps[skip:])
        r["median_ms"] = statistics.median(ms)
        r["spread"] = (ms[round(0.9 * (len(ms) - 1))]
                       / max(ms[round(0.1 * (len(ms) - 1))], 1e-9))
        r["tok_s"] = None    # filled in by the caller, who knows B*T
    return r


# ---- pieces of the bench ----------------------------------------------------

def build_ch6(a):
    if a.no_build:
        return
    log("== make ch6 products")
    p = subprocess.run(["make", "ch6", "products"], cwd=ROOT,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if p.returncode != 0:
        sys.stdout.write(p.stdout[-3000:])
        die("make ch6 products failed (output above)")


def build_sgemm(b):
    exe = os.path.join(b.dir, "sgemm")
    src = exe + ".c"
    with open(src, "w") as f:
        f.write(SGEMM_C)
    try:
        flags = subprocess.run(["pkg-config", "--cflags", "--libs",
                                "openblas"], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True,
                               check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        flags = ["-lopenblas"]
    cc = os.environ.get("CC", "cc")
    p = subprocess.run([cc, "-O2", src, "-o", exe] + flags,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if p.returncode != 0:
        die("cannot build the SGEMM probe against OpenBLAS:\n" + p.stdout)
    return exe


def sgemm_peak(b, exe, env):
    ncpu = os.cpu_count() or 1
    e = dict(env, OPENBLAS_NUM_THREADS=str(ncpu))
    n, reps = (1024, 2) if b.a.quick else (2048, 8)
    best, line = 0.0, ""
    for _ in range(1 if b.a.quick else 3):
        p = subprocess.run([exe, str(n), str(reps)], env=e,
                           stdout=subprocess.PIPE, text=True)
        m = re.search(r"([\d.]+) GFLOP/s", p.stdout)
        if p.returncode == 0 and m and float(m.group(1)) > best:
            best, line = float(m.group(1)), p.stdout.strip()
    if not best:
        die("the SGEMM probe failed")
    log("  " + line)
    core = re.search(r"core (\S+)", line)
    return best, core.group(1) if core else "?"


def model_flags(cfg):
    _, L, NH, C, T, B = cfg
    return ["--layers", str(L), "--heads", str(NH), "--embd", str(C),
            "--block", str(T), "--batch", str(B), "--dropout", "0",
            "--bias", "0"]


def throughput_flags(cfg, steps):
    return model_flags(cfg) + [
        "--steps", str(steps), "--lr", "1e-3", "--min-lr", "1e-4",
        "--warmup", "10", "--decay-steps", str(steps), "--eval-every", "0",
        "--eval-iters", "1", "--seed", "1337"]


def flops_per_token(cfg, V):
    _, L, NH, C, T, B = cfg
    N = V * C + L * (12 * C * C + 2 * C) + C     # no wpe, no biases
    return 6 * N + 12 * L * C * T


class Impl:
    """One way to train: ./ch6, or a PyTorch with a thread setting."""

    def __init__(self, key, label, cmd, env_extra=None, openblas=True):
        self.key, self.label, self.cmd = key, label, cmd
        self.env_extra = env_extra or {}
        self.openblas = openblas     # affected by OPENBLAS_CORETYPE


def torch_info(py, isolated):
    code = ("import torch,sys; c=torch.__config__.show(); "
            "print(torch.__version__); print(torch.__file__); "
            "print('mkl' if 'BLAS_INFO=mkl' in c else 'other'); "
            "print(hasattr(torch, 'compile'))")
    cmd = [py] + (["-I"] if isolated else []) + ["-c", code]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if p.returncode != 0:
        return None
    v, f, blas, comp = p.stdout.split("\n")[:4]
    return dict(version=v, file=f, mkl=blas == "mkl", compile=comp == "True")


def make_impls(b, torch_pip, torch_deb):
    a = b.a
    ch6 = os.path.join(ROOT, "ch6")
    # (every step's line: the median comes from all of them)
    impls = {"ours": Impl("ours", "ours (./ch6)",
                          [ch6, "--sample-chars", "0", "--print-every", "1"])}
    if torch_pip:
        py = [a.python, TRAIN_TORCH]
        v = torch_pip["version"].split("+")[0]
        for t in (1, 2):
            impls["pt%d" % t] = Impl(
                "pt%d" % t, "PyTorch %s, %d thread%s" % (v, t, "s" * (t > 1)),
                py + ["--threads", str(t)], openblas=not torch_pip["mkl"])
        if torch_pip["compile"]:
            impls["ptc"] = Impl("ptc", "PyTorch %s, compiled" % v,
                                py + ["--compile"],
                                openblas=not torch_pip["mkl"])
    if torch_deb:
        py = [DEBIAN_PY, "-I", TRAIN_TORCH]
        v = torch_deb["version"].split("+")[0]
        impls["deb1"] = Impl("deb1", "Debian PyTorch %s, 1 thread + 2 "
                             "OpenBLAS" % v, py + ["--threads", "1"],
                             {"OPENBLAS_NUM_THREADS": "2"})
        impls["deb2"] = Impl("deb2", "Debian PyTorch %s, 2 threads" % v,
                             py + ["--threads", "2"])
    return impls


def measure(b, impl, cfg, steps, env, extra=()):
    B, T = cfg[5], cfg[4]
    e = dict(env, **impl.env_extra)
    cmd = impl.cmd + list(extra) + throughput_flags(cfg, steps)
    r = b.run("%s %s" % (cfg[0], impl.label), cmd, e, b.a.timeout)
    if "median_ms" in r and not r.get("error"):
        r["tok_s"] = B * T / (r["median_ms"] / 1e3)
    b.show(r)
    return r


def best_of(runs):
    ok = [r for r in runs if r and r.get("tok_s")]
    return max(ok, key=lambda r: r["tok_s"]) if ok else None


def throughput_pass(b, impls, env, title, torch_prev=None):
    """Returns {config: {impl key: best run}}."""
    a = b.a
    res = {}
    for cfg in CONFIGS:
        name = cfg[0]
        if a.configs and name not in a.configs:
            continue
        steps = (QUICK_STEPS if a.quick else STEPS)[name]
        if a.steps_scale != 1:
            steps = max(2, int(round(steps * a.steps_scale)))
        reps = a.repeats or (1 if a.quick else REPEATS[name])
        runs = {k: [] for k in impls}
        keys = [k for k in impls if k != "ptc" and not (
            a.torch_threads == "auto" and k in SKIP_AUTO.get(name, ()))]
        if torch_prev is not None:        # only what OpenBLAS can change
            keys = [k for k in keys if impls[k].openblas]
            if torch_prev.get(name, {}).get("_deb_best"):
                keys = [k for k in keys if not k.startswith("deb")
                        or k == torch_prev[name]["_deb_best"]]
        log("-- config %s: %d layers, %d heads, %d wide, block %d, batch %d;"
            " %d steps x %d" % (cfg + (steps, reps)))
        for _ in range(reps):
            for k in keys:          # ours first, then each PyTorch: they
                runs[k].append(     # alternate over the repeats
                    measure(b, impls[k], cfg, steps, env))
        if "ptc" in impls and torch_prev is None and \
                (a.compile == "all" or (a.compile == "auto"
                                        and name in a.compile_configs)):
            pt = best_of(runs.get("pt1", []) + runs.get("pt2", []))
            t = "1" if pt and pt is best_of(runs.get("pt1", [])) else "2"
            extra = ["--threads", t]
            # the first steps compile: give it a few more to time
            runs["ptc"].append(measure(b, impls["ptc"], cfg,
                                       steps + (4 if not a.quick else 0),
                                       env, extra))
            runs["ptc"][-1]["threads"] = t
        res[name] = {k: best_of(v) for k, v in runs.items() if v}
        res[name]["_all"] = runs
        res[name]["_floor"] = products_floor(b, cfg, env)
    return res


def products_floor(b, cfg, env):
    """tokens/s of the config's Linear products alone (tests/bench/
    products.c), on one thread per core as ./ch6 by default: the speed a
    step could have if nothing else took time. None without the program."""
    if not os.access(PRODUCTS, os.X_OK):
        return None
    _, L, NH, C, T, B = cfg
    threads = os.cpu_count() or 1
    p = subprocess.run([PRODUCTS, str(L), str(C), str(T), str(B), str(b.V),
                        str(threads), "3" if b.a.quick else "10"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    m = re.search(r"products: ([\d.]+) ms", p.stdout)
    if p.returncode != 0 or not m:
        log("  products floor: FAILED (%s)" % p.stdout.strip()[-200:])
        b.failed.append("%s products floor" % cfg[0])
        return None
    log("  floor, " + p.stdout.strip())
    return B * T / (float(m.group(1)) / 1e3)


def pick_torch(cell, prefix):
    cands = [(k, r) for k, r in cell.items()
             if k.startswith(prefix) and not k.startswith("_") and r]
    if not cands:
        return None, None
    return max(cands, key=lambda kr: kr[1]["tok_s"])


def fmt(x, f="%.0f"):
    return "-" if x is None else f % x


# Our targets, ours / PyTorch best. The table shows what each would
# take: that ratio times PyTorch's tokens/s, as a share of the SGEMM peak.
TARGETS = {"D": 1.3, "A": 1.6, "B": 1.6, "C": 1.6}


def table(b, res, impls, peak, V, torch_carry=None):
    rows = ["| config | ours tok/s | PyTorch tok/s (best) | ours / PyTorch "
            "| target | products floor tok/s | ours / floor "
            "| ours FLOPs util. | target needs | ours peak MiB "
            "| PyTorch peak MiB |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    deb_rows = []
    for cfg in CONFIGS:
        name = cfg[0]
        if name not in res:
            continue
        cell = res[name]
        src = torch_carry[name] if torch_carry else cell
        ours = cell.get("ours")
        k, pt = pick_torch(src, "pt")
        ot = ours["tok_s"] if ours else None
        util = (ot * flops_per_token(cfg, V) / (peak * 1e9)
                if ot else None)
        ptlabel = "-"
        if pt:
            ptlabel = "%.0f (%s)" % (pt["tok_s"], impls[k].label.split(", ", 1)
                                     [1] + (", %s thr" % pt["threads"]
                                            if k == "ptc" else ""))
        need = "-"
        if pt and name in TARGETS:
            need = "%.1fx: %.0f%% of peak" % (
                TARGETS[name], 100 * TARGETS[name] * pt["tok_s"]
                * flops_per_token(cfg, V) / (peak * 1e9))
        floor = cell.get("_floor")
        rows.append("| %s %d/%d/%d T%d B%d | %s | %s | %s | %s | %s | %s | %s "
                    "| %s | %s | %s |"
                    % (name, cfg[1], cfg[2], cfg[3], cfg[4], cfg[5], fmt(ot),
                       ptlabel,
                       fmt(ot / pt["tok_s"] if ot and pt else None, "%.2f"),
                       fmt(TARGETS.get(name), "%.1fx"), fmt(floor),
                       fmt(100 * ot / floor if ot and floor else None,
                           "%.0f%%"),
                       fmt(100 * util if util else None, "%.1f%%"), need,
            fmt(ours["peak"] if ours else None, "%.0f"),
            fmt(pt["peak"] if pt else None, "%.0f")))
        kd, deb = pick_torch(cell, "deb")
        if deb:
            deb_rows.append("| %s | %.0f (%s) | %s | %s |" % (
                name, deb["tok_s"], impls[kd].label.split(", ", 1)[1],
                fmt(ot / deb["tok_s"] if ot else None, "%.2f"),
                fmt(deb["peak"], "%.0f")))
            cell["_deb_best"] = kd
    out = "\n".join(rows)
    if deb_rows:
        out += ("\n\nDebian's python3-torch (OpenBLAS):\n\n| config | Debian "
                "PyTorch tok/s (best) | ours / it | its peak MiB |\n"
                "|---|---:|---:|---:|\n" + "\n".join(deb_rows))
    return out


def details(res, impls):
    lines = ["| config | run | tok/s | spread p90/p10 | other CPU load | "
             "peak MiB |", "|---|---|---:|---:|---:|---:|"]
    for name, cell in res.items():
        for k, runs in cell.get("_all", {}).items():
            for r in runs:
                lines.append("| %s | %s | %s | %.2f | %.1f | %s |" % (
                    name, impls[k].label + (", %s thr" % r["threads"]
                                            if r.get("threads") else ""),
                    fmt(r.get("tok_s")) if not r.get("error") else "failed",
                    r["spread"], r["others"], fmt(r["peak"], "%.0f")))
    return "\n".join(lines)


def recipe(b, impls, env, torch_key, torch_extra):
    a = b.a
    flags = list(RECIPE) + ["--stop-at-val", str(a.target)]
    if a.quick:
        flags = [f if f not in ("2000",) else "60" for f in flags]
        flags[flags.index("--eval-every") + 1] = "30"
        flags[flags.index("--eval-iters") + 1] = "2"
    out = {}
    order = [("ours", [])]
    if torch_key:
        order.append((torch_key, torch_extra))
    for k, extra in order:
        impl = impls[k]
        r = b.run("recipe " + impl.label, impl.cmd + extra + flags,
                  dict(env, **impl.env_extra), a.recipe_timeout)
        if r["reached"]:
            log("  %-34s reached val %.4f at step %d after %.1f s"
                % (impl.label, r["reached"][0], r["reached"][1],
                   r["reached"][2]))
        else:
            log("  %-34s did not reach %.3f (final val %s, %.0f s%s)"
                % (impl.label, a.target, fmt(r["val"], "%.4f"), r["wall"],
                   "; " + r["error"] if r.get("error") else ""))
        out[k] = r
    return out


def recipe_table(rec, impls, target):
    rows = ["| run | val <= %g at step | after (s, wall) | best val (step) "
            "| final val | steps run | training (s) | ms/step | peak MiB |"
            % target, "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for k, r in rec.items():
        ev = r["evals"]
        best = min(ev, key=lambda sv: sv[1]) if ev else None
        n = ev[-1][0] if ev else r["steps"]
        rows.append("| %s | %s | %s | %s | %s | %d | %s | %s | %s |" % (
            impls[k].label,
            "%d" % r["reached"][1] if r["reached"] else "not reached",
            "%.1f" % r["reached"][2] if r["reached"] else "-",
            "%.4f (%d)" % (best[1], best[0]) if best else "-",
            fmt(r["val"], "%.4f"), n, fmt(r["train_s"], "%.1f"),
            fmt(r["train_s"] / n * 1e3 if r["train_s"] and n else None,
                "%.1f"), fmt(r["peak"], "%.0f")))
    return "\n".join(rows)


def main():
    p = argparse.ArgumentParser(
        description="./ch6 against PyTorch: throughput of configs A, B, C "
                    "and time to val 1.886 with the B recipe.")
    p.add_argument("--quick", action="store_true",
                   help="a smoke test: a few steps of everything")
    p.add_argument("--no-build", action="store_true",
                   help="use ./ch6 as it is (no make ch6)")
    p.add_argument("--no-torch", action="store_true",
                   help="run ./ch6 only (no PyTorch)")
    p.add_argument("--python", default=sys.executable,
                   help="the Python with PyTorch (pip's)")
    p.add_argument("--debian-torch", choices=["auto", "off", "install"],
                   default="auto",
                   help="Debian's python3-torch in " + DEBIAN_PY + ": used "
                        "when installed (auto), never (off), or installed "
                        "with apt-get first (install)")
    p.add_argument("--compile", choices=["auto", "all", "off"],
                   default="auto",
                   help="torch.compile runs: auto = configs of "
                        "--compile-configs, all = every config")
    p.add_argument("--compile-configs", default="AB")
    p.add_argument("--torch-threads", choices=["auto", "all"],
                   default="auto",
                   help="all: PyTorch with 1 and 2 threads on every config;"
                        " auto: 2 only on config C")
    p.add_argument("--configs", default="",
                   help="only these configs, e.g. AB (default: all)")
    p.add_argument("--repeats", type=int, default=0,
                   help="runs of each measurement (0: 2 for A and B, 1 for "
                        "C)")
    p.add_argument("--steps-scale", type=float, default=1.0,
                   help="multiply the throughput runs' step counts")
    p.add_argument("--no-env2", action="store_true",
                   help="skip the pass with OPENBLAS_CORETYPE flipped")
    p.add_argument("--no-recipe", action="store_true")
    p.add_argument("--target", type=float, default=RECIPE_TARGET)
    p.add_argument("--wait-quiet", type=float, default=300,
                   help="before each run, wait up to this many seconds "
                        "for other processes to go (0: never wait)")
    p.add_argument("--timeout", type=int, default=900,
                   help="seconds for one throughput run")
    p.add_argument("--recipe-timeout", type=int, default=1800)
    a = p.parse_args()
    b = Bench(a)
    t_begin = time.perf_counter()

    torch_pip = torch_deb = None
    if not a.no_torch:
        torch_pip = torch_info(a.python, False)
        if not torch_pip:
            die("PyTorch is not importable from %s: install it (pip install "
                "torch), pass --python PATH to a Python that has it, or run "
                "--no-torch for ./ch6 alone" % a.python)
        if a.debian_torch == "install" and not torch_info(DEBIAN_PY, True):
            log("== apt-get install python3-torch")
            subprocess.run(["apt-get", "install", "-y",
                            "--no-install-recommends", "python3-torch"])
        if a.debian_torch != "off" and os.path.exists(DEBIAN_PY):
            torch_deb = torch_info(DEBIAN_PY, True)
            if torch_deb and os.path.realpath(torch_deb["file"]) == \
                    os.path.realpath(torch_pip["file"]):
                torch_deb = None           # the same PyTorch: no second point
    build_ch6(a)
    if not os.access(os.path.join(ROOT, "ch6"), os.X_OK):
        die("./ch6 is missing (make ch6)")
    data = os.path.join(ROOT, "data", "tinyshakespeare.txt")
    if not os.path.exists(data):
        die("data/tinyshakespeare.txt is missing (make data)")
    with open(data, encoding="utf-8") as f:
        V = len(set(f.read()))                 # the vocabulary, as ch1
    b.V = V
    a.compile_configs = set(a.compile_configs)
    a.configs = set(a.configs)
    sgemm = build_sgemm(b)
    impls = make_impls(b, torch_pip, torch_deb)

    env1 = dict(os.environ)
    env1.pop("OMP_NUM_THREADS", None)
    ct = env1.get("OPENBLAS_CORETYPE")
    env2 = dict(env1)
    if ct:
        env2.pop("OPENBLAS_CORETYPE")
        names = ("OPENBLAS_CORETYPE=%s (as set)" % ct,
                 "OPENBLAS_CORETYPE unset")
    else:
        env2["OPENBLAS_CORETYPE"] = "Haswell"
        names = ("OPENBLAS_CORETYPE unset (as set)",
                 "OPENBLAS_CORETYPE=Haswell")
        if not X86:            # (Haswell is an x86 core: no second pass)
            a.no_env2 = True

    report = []
    cpu, features = cpu_description()
    head = ("Machine: %s, %d cores, %s; load average at start %.2f.  \n"
            "CPU features: %s; OPENBLAS_CORETYPE %s.  \n"
            % (cpu, os.cpu_count() or 0, platform.platform(),
               os.getloadavg()[0], features,
               os.environ.get("OPENBLAS_CORETYPE", "unset")))
    if torch_pip:
        head += "PyTorch (pip): %s (%s BLAS).  \n" % (
            torch_pip["version"], "MKL" if torch_pip["mkl"] else "other")
    if torch_deb:
        head += "Debian PyTorch: %s (%s).  \n" % (torch_deb["version"],
                                                  torch_deb["file"])
    elif not a.no_torch and a.debian_torch != "off":
        head += ("Debian PyTorch: not installed (apt-get install "
                 "python3-torch, or --debian-torch install).  \n")
    report.append(head)
    log(head.replace("  \n", "\n").strip())

    passes = [(names[0], env1)] + ([] if a.no_env2 else [(names[1], env2)])
    first = None
    for i, (title, env) in enumerate(passes):
        log("== %s" % title)
        peak, core = sgemm_peak(b, sgemm, env)
        res = throughput_pass(b, impls, env, title,
                              torch_prev=first if i else None)
        carry = None
        if i:
            # PyTorch that does not use OpenBLAS is not run again
            carry = {}
            for name in res:
                carry[name] = dict(first[name])
                carry[name].update({k: v for k, v in res[name].items()
                                    if k.startswith("pt")})
        tbl = table(b, res, impls, peak, V, carry)
        if i == 0:
            first = res
        note = ""
        if i and torch_pip and torch_pip["mkl"]:
            note = ("\n\nPyTorch (pip) uses MKL, which OPENBLAS_CORETYPE does "
                    "not touch: its column repeats the first pass.")
        report.append("### Throughput, %s\n\nSGEMM peak: %.1f GFLOP/s "
                      "(OpenBLAS core %s, %d threads).\n\n%s%s\n\n"
                      "<details><summary>every run</summary>\n\n%s\n\n"
                      "</details>\n"
                      % (title, peak, core, os.cpu_count() or 1, tbl, note,
                         details(res, impls)))

    if not a.no_recipe:
        log("== the B recipe, --stop-at-val %g" % a.target)
        tk, textra = None, []
        if torch_pip and first and "B" in first:
            tk, best = pick_torch(first["B"], "pt")
            if tk == "ptc":
                # compiling costs time to the target: only when it pays
                ke, eager = pick_torch({k: v for k, v in first["B"].items()
                                        if k != "ptc"}, "pt")
                if eager and best["tok_s"] < 1.05 * eager["tok_s"]:
                    tk = ke
                else:
                    textra = ["--threads", best["threads"]]
        elif torch_pip:
            tk = "pt2"
        rec = recipe(b, impls, env1, tk, textra)
        report.append(
            "### Time to val %g, the B recipe (%s)\n\nConfig B (4 layers, 4 "
            "heads, 128 wide, block 64, batch 12, no biases, dropout 0), "
            "lr 1e-3 with 100 warmup steps and a cosine to 1e-4 at step "
            "2000, AdamW betas (0.9, 0.99), weight decay 0.1, clip 1.0, "
            "seed 1337; evaluated every 100 steps on 20 batches of train and"
            " of val. PyTorch with its best setting for B above (compiled "
            "only when that is 5%% faster than eager), ./ch6 with "
            "--sample-chars 0. Wall time since training started, "
            "evaluations included.%s\n\n%s\n"
            % (a.target, names[0], " (--quick: 60 steps, evaluated every 30 "
               "on 2 batches.)" if a.quick else "",
               recipe_table(rec, impls, a.target)))

    report.append("Bench run%s in %.0f s; raw output in %s.\n" % (
        " (--quick)" if a.quick else "", time.perf_counter() - t_begin,
        os.path.relpath(b.dir, ROOT)))
    text = "\n".join(report)
    with open(os.path.join(b.dir, "report.md"), "w") as f:
        f.write(text)
    shutil.copy(os.path.join(b.dir, "report.md"),
                os.path.join(ROOT, "build", "bench", "report.md"))
    log("\n" + "=" * 72 + "\n")
    log(text)
    if b.failed:
        # (CI runs --quick: a program whose output the bench can no longer
        # read fails it here)
        die("%d run%s failed or could not be read: %s" % (
            len(b.failed), "s" * (len(b.failed) > 1), ", ".join(b.failed)))


if __name__ == "__main__":
    main()
