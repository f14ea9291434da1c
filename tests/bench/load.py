#!/usr/bin/env python3
"""load.py - the speed of a run on a busy machine (`bash tests/bench/load.sh`).

Starts 0, 1, then 2 busy processes of its own (`yes > /dev/null`, each with
a time limit, and ended by this script whatever happens), and under each
runs:
  - ./ch6 at its default shape (4 layers, 128 wide, block 128, batch 16)
    with --threads 0 (the default), 1 and 2;
  - ./ch7 --task translate at its default shape, the same three ways;
  - PyTorch on ./ch6's shape (tests/reference/train_torch.py) with 1 and 2
    threads, when a Python with torch is found (--python, or PYTHON).
A run's speed is its tokens over its whole training time: the steps that
--threads 0 spends trying another count, or on the wrong one before it
moves, are counted against it. Prints one table, the CPU named, each speed
with its ratio to the idle machine's default run.
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from bench import cpu_description   # noqa: E402

CH6_SUMMARY = re.compile(r"summary: steps (\d+), ([\d.]+) s training")
CH7_TRAINED = re.compile(r"trained\s+(\d+) steps in ([\d.]+) s: (\d+) "
                         r"tokens/s")
THREADS = re.compile(r"^threads\s+(.*)$", re.M)

busy = []


def stop_busy():
    # SIGTERM, which timeout passes on to yes (a SIGKILL would leave yes
    # running without its time limit)
    for p in busy:
        if p.poll() is None:
            p.terminate()
            p.wait()
    busy.clear()


def start_busy(n, seconds):
    for _ in range(n):
        busy.append(subprocess.Popen(
            ["timeout", str(seconds), "yes"], stdout=subprocess.DEVNULL))


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timed out"
    return p.stdout, None if p.returncode == 0 else "exit %d" % p.returncode


def ch6(threads, steps, timeout):
    out, err = run(["./ch6", "--steps", str(steps), "--eval-every", "0",
                    "--eval-iters", "1", "--sample-chars", "0",
                    "--print-every", "1000000", "--threads", str(threads)],
                   timeout)
    m = out and CH6_SUMMARY.search(out)
    if not m:
        return None, err or "no summary line"
    settled = THREADS.findall(out)
    return 16 * 128 * int(m.group(1)) / float(m.group(2)), settled


def ch7(threads, steps, timeout):
    out, err = run(["./ch7", "--task", "translate", "--steps", "100000",
                    "--stop-at-step", str(steps), "--show", "0", "--beam",
                    "1", "--threads", str(threads), "--print-every",
                    "1000000"], timeout)
    m = out and CH7_TRAINED.search(out)
    if not m:
        return None, err or "no 'trained' line"
    return float(m.group(3)), THREADS.findall(out)


def torch(py, threads, steps, timeout):
    out, err = run([py, os.path.join(ROOT, "tests/reference/train_torch.py"),
                    "--layers", "4", "--heads", "4", "--embd", "128",
                    "--block", "128", "--batch", "16", "--dropout", "0",
                    "--steps", str(steps), "--eval-every", "0",
                    "--eval-iters", "1", "--threads", str(threads),
                    "--quiet"], timeout)
    m = out and CH6_SUMMARY.search(out)
    if not m:
        return None, err or "no summary line"
    return 16 * 128 * int(m.group(1)) / float(m.group(2)), []


def has_torch(py):
    try:
        return subprocess.run([py, "-c", "import torch"], timeout=120,
                              stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--loads", default="0,1,2",
                   help="busy processes to run beside, comma-separated")
    p.add_argument("--steps", type=int, default=150,
                   help="training steps of each ./ch6 and PyTorch run")
    p.add_argument("--mt-steps", type=int, default=80,
                   help="training steps of each ./ch7 run")
    p.add_argument("--python", default=os.environ.get("PYTHON", ""),
                   help="a Python with torch (default: none)")
    p.add_argument("--no-ch7", action="store_true")
    p.add_argument("--quick", action="store_true",
                   help="a smoke test: few steps, loads 0 and 1")
    p.add_argument("--timeout", type=int, default=600)
    a = p.parse_args()
    if a.quick:
        a.steps, a.mt_steps, a.loads = 8, 6, "0,1"
    loads = [int(x) for x in a.loads.split(",")]
    ways = [("ch6", "./ch6", t) for t in (0, 1, 2)]
    if not a.no_ch7:
        ways += [("ch7", "./ch7 --task translate", t) for t in (0, 1, 2)]
    if a.python and has_torch(a.python):
        ways += [("torch", "PyTorch (./ch6's shape)", t) for t in (1, 2)]
    elif a.python:
        print("load: %s has no torch: the PyTorch rows are left out"
              % a.python)
    for prog in ("ch6", "ch7"):
        if not os.access(os.path.join(ROOT, prog), os.X_OK):
            sys.exit("load: error: no ./%s (make %s)" % (prog, prog))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    cpu, features = cpu_description()
    res = {}
    try:
        for n in loads:
            stop_busy()
            start_busy(n, a.timeout * len(ways) + 60)
            time.sleep(1)
            for key, label, t in ways:
                t0 = time.time()
                if key == "ch6":
                    r = ch6(t, a.steps, a.timeout)
                elif key == "ch7":
                    r = ch7(t, a.mt_steps, a.timeout)
                else:
                    r = torch(a.python, t, a.steps, a.timeout)
                res[(key, t, n)] = r
                speed, what = r
                print("busy %d  %-26s --threads %d: %s  (%.0f s)%s" % (
                    n, label, t, "%.0f tokens/s" % speed if speed else
                    "FAILED (%s)" % what, time.time() - t0,
                    "".join("\n    threads " + s for s in what)
                    if speed else ""), flush=True)
    finally:
        stop_busy()
    print()
    print("CPU: %s, %d cores (%s)" % (cpu, os.cpu_count() or 0, features))
    print("tokens/s over each run's whole training time; in brackets the "
          "ratio to the\nidle machine's --threads 0 run of the same "
          "program")
    head = "%-48s" % "" + "".join("%18s" % ("busy %d" % n) for n in loads)
    print(head)
    for key, label, t in ways:
        base = res.get((key if key != "torch" else "ch6", 0, 0), (None,))[0]
        row = "%-48s" % ("%s, %s" % (label, "--threads 0 (default)"
                                     if t == 0 else "%d thread%s"
                                     % (t, "s" * (t > 1))))
        for n in loads:
            speed = res[(key, t, n)][0]
            row += "%18s" % ("FAILED" if not speed else "%.0f (%.2f)" % (
                speed, speed / base) if base else "%.0f" % speed)
        print(row)
    print("\nthe default against the best of 1 and 2 threads at each load:")
    for key in ("ch6", "ch7"):
        if (key, 0, loads[0]) not in res:
            continue
        cells = []
        for n in loads:
            d = res[(key, 0, n)][0]
            best = max(res[(key, t, n)][0] or 0 for t in (1, 2))
            cells.append("busy %d: %s" % (n, "%.2f" % (d / best)
                                          if d and best else "-"))
        print("  ./%s  %s" % (key, "   ".join(cells)))


if __name__ == "__main__":
    main()
