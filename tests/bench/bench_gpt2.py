#!/usr/bin/env python3
"""./ch9 against PyTorch at GPT-2 small's size, side by side on this
machine: generation with the KV cache, and a fine-tuning step.

    make bench-gpt2                  # builds what it needs, then runs
    python3 tests/bench/bench_gpt2.py --bin build/cc [--busy] [--tokens N]

needs PyTorch and transformers (pip install torch transformers); the
build and the tests never do. No download: the model is GPT-2 small's
shape (12 layers, 12 heads, 768 wide, 50,257 tokens, a block of 1,024,
tanh GELU) with random weights, written by build/cc/gpt2_random in
Hugging Face's layout into build/bench-gpt2/, which both sides load: the
same weights, the same file. (The tokenizer beside it is the small one
of tests/reference/ch9_tok: only the prompt's ids come from it.)

Generation: the same prompt ids, greedy, --tokens new tokens, batch 1;
ours is ./ch9 with chapter 5's KV cache, theirs is transformers'
GPT2LMHeadModel.generate(use_cache=True) in float32, eval mode, under
torch.no_grad (generate's own). Tokens per second of the new tokens,
the prompt's pass included on both sides, best of --repeats runs.

Fine-tuning: batches of 4 windows of 64 tokens of Tiny Shakespeare
(ours through GPT-2's tokenizer of the fixture; theirs random ids of the
same shape: a step's time does not depend on the ids), no dropout,
AdamW with weight decay on the matrices, gradient clipping at 1.0: ours
./ch9 --finetune's median step; theirs a plain PyTorch eager loop
(forward, cross-entropy, backward, clip, AdamW step), median of the
steps after two of warm-up. Then the products' floor: the step's Linear
matrix products alone through the same gemm() (tests/bench/products.c),
the time a step could take were everything else free. And generation's:
a token's one-row products alone (tests/bench/gemv.c), through gemv_rows,
through OpenBLAS's sgemv, and a plain read of the same 498 MB, the most
tokens a second that memory allows.

Each side runs on 1 and on 2 threads, and the best of each is compared:
the ratio is ours over PyTorch's tokens per second. --busy runs it all
again beside one busy process (`yes > /dev/null`), as a student's
laptop is never idle. The report names the CPU and the versions.
"""
import argparse
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import bench  # noqa: E402   cpu_description

SHAPE = dict(V=50257, block=1024, layers=12, heads=12, embd=768)
PROMPT = "ROMEO:\nWhat light through yonder window breaks? It is the east,"


def run(cmd, env=None, timeout=1800):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env,
                       timeout=timeout, cwd=ROOT)
    if p.returncode != 0:
        sys.exit("bench_gpt2: %s failed (status %d):\n%s%s" % (
            " ".join(cmd), p.returncode, p.stdout[-2000:], p.stderr[-2000:]))
    return p.stdout


def make_model(b):
    """The random GPT-2 small, once (about 500 MB)."""
    d = os.path.join(ROOT, "build", "bench-gpt2")
    if not os.path.exists(os.path.join(d, "model.safetensors")):
        os.makedirs(d, exist_ok=True)
        print("writing a random GPT-2 small into %s ..." % d, flush=True)
        run([os.path.join(b, "gpt2_random"), d, "tests/reference/ch9_tok",
             str(SHAPE["V"]), str(SHAPE["block"]), str(SHAPE["layers"]),
             str(SHAPE["heads"]), str(SHAPE["embd"])])
    return d


def prompt_ids(b, model):
    out = run([os.path.join(b, "ch9"), "--model", model, "--tokenize",
               PROMPT])
    m = re.search(r"^ids\s+(.*)$", out, re.M)
    ids = [int(x) for x in m.group(1).split()]
    # the line may be folded: the rest of the ids follow on indented lines
    count = int(re.search(r"^text\s+\d+ bytes, (\d+) tokens", out,
                          re.M).group(1))
    if len(ids) != count:
        rest = out[m.end():].split("\n")
        for line in rest[1:]:
            if not re.match(r"^\s+\d+(\s+\d+)*\s*$", line):
                break
            ids += [int(x) for x in line.split()]
    assert len(ids) == count, (ids, count)
    return ids


def ours_generate(b, model, tokens, threads):
    out = run([os.path.join(b, "ch9"), "--model", model, "--prompt", PROMPT,
               "--tokens", str(tokens), "--greedy", "--threads",
               str(threads)])
    m = re.search(r"speed\s+(\d+) tokens in ([0-9.]+) s", out)
    return int(m.group(1)) / float(m.group(2))


def ours_finetune(b, model, steps, threads):
    out = run([os.path.join(b, "ch9"), "--finetune", "--model", model,
               "--steps", str(steps), "--warmup", "2", "--eval-every", "0",
               "--eval-iters", "1", "--sample-tokens", "0", "--threads",
               str(threads), "--quiet"])
    m = re.search(r"summary: steps \d+, [0-9.]+ s training, ([0-9.]+) "
                  r"tokens/s", out)
    return float(m.group(1))


def products_ms(b, threads):
    exe = os.path.join(b, "products")
    if not os.path.exists(exe):
        run(["make", "-s", exe])
    out = run([exe, str(SHAPE["layers"]), str(SHAPE["embd"]), "64", "4",
               str(SHAPE["V"]), str(threads), "5"])
    return float(re.search(r"products: ([0-9.]+) ms", out).group(1))


def gemv_ms(b, threads):
    """A decoding step's one-row products alone (tests/bench/gemv.c):
    gemv_rows, OpenBLAS's sgemv and a plain read of the same weights, ms."""
    exe = os.path.join(b, "gemv")
    if not os.path.exists(exe):
        run(["make", "-s", exe])
    out = run([exe, str(SHAPE["layers"]), str(SHAPE["embd"]),
               str(SHAPE["V"]), str(threads), "5"])
    got = [re.search(r"%s +([0-9.]+) ms" % k, out)
           for k in ("gemv_rows", "OpenBLAS sgemv", "plain read")]
    return tuple(float(m.group(1)) if m else float("nan") for m in got)


TORCH_SIDE = r'''
import statistics, sys, time, torch
from transformers import GPT2LMHeadModel
what, model, threads, n, ids = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
    int(sys.argv[4]), [int(x) for x in sys.argv[5].split(",")]
torch.set_num_threads(threads)
torch.manual_seed(0)
# no dropout on either side (./ch9 --finetune's default)
m = GPT2LMHeadModel.from_pretrained(model, torch_dtype=torch.float32,
                                    resid_pdrop=0.0, embd_pdrop=0.0,
                                    attn_pdrop=0.0)
if what == "generate":
    m.eval()
    x = torch.tensor([ids])
    best = 0.0
    for _ in range(3):
        t0 = time.perf_counter()
        y = m.generate(x, max_new_tokens=n, min_new_tokens=n,
                       do_sample=False, use_cache=True, pad_token_id=0,
                       attention_mask=torch.ones_like(x))
        dt = time.perf_counter() - t0
        assert y.shape[1] == x.shape[1] + n
        best = max(best, n / dt)
    print("tokens/s %.3f" % best)
else:
    m.train()
    decay = [p for p in m.parameters() if p.dim() >= 2]
    other = [p for p in m.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": other, "weight_decay": 0.0}],
                            lr=1e-4, betas=(0.9, 0.95), eps=1e-8)
    V = m.config.vocab_size
    g = torch.Generator().manual_seed(1)
    times = []
    for step in range(n + 2):
        x = torch.randint(0, V, (4, 64), generator=g)
        y = torch.randint(0, V, (4, 64), generator=g)
        t0 = time.perf_counter()
        logits = m(x).logits
        loss = torch.nn.functional.cross_entropy(logits.view(-1, V),
                                                 y.view(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()
        times.append(time.perf_counter() - t0)
    print("tokens/s %.3f" % (256 / statistics.median(times[2:])))
'''


def torch_side(py, what, model, threads, n, ids):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads), TOKENIZERS_PARALLELISM="false",
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    p = subprocess.run([py, "-c", TORCH_SIDE, what, model, str(threads),
                        str(n), ",".join(map(str, ids))],
                       capture_output=True, text=True, env=env, timeout=3600)
    if p.returncode != 0:
        sys.exit("bench_gpt2: PyTorch's %s failed:\n%s" % (what,
                                                            p.stderr[-3000:]))
    return float(re.search(r"tokens/s ([0-9.]+)", p.stdout).group(1))


def versions(py):
    p = subprocess.run([py, "-c", "import torch, transformers; print("
                        "torch.__version__, transformers.__version__)"],
                       capture_output=True, text=True)
    return p.stdout.strip() or "unknown"


def one_pass(a, model, ids, title):
    print("\n== %s ==" % title, flush=True)
    res = {}
    for threads in (1, 2):
        g_ours = max(ours_generate(a.bin, model, a.tokens, threads)
                     for _ in range(a.repeats))
        g_torch = torch_side(a.python, "generate", model, threads, a.tokens,
                             ids)
        rows, sgemv, read = gemv_ms(a.bin, threads)
        print("%d thread%s: generation ours %.1f, PyTorch %.1f tokens/s; "
              "a token's products alone: gemv_rows %.1f ms, OpenBLAS's "
              "sgemv %.1f, a plain read of the weights %.1f" % (
                  threads, "" if threads == 1 else "s", g_ours, g_torch,
                  rows, sgemv, read), flush=True)
        f_ours = ours_finetune(a.bin, model, a.steps, threads)
        f_torch = torch_side(a.python, "finetune", model, threads, a.steps,
                             ids)
        prod = products_ms(a.bin, threads)
        res[threads] = (g_ours, g_torch, f_ours, f_torch, prod, read)
        print("%d thread%s: fine-tuning ours %.0f, PyTorch %.0f tokens/s; "
              "products %.0f ms a step" % (threads,
                                           "" if threads == 1 else "s",
                                           f_ours, f_torch, prod),
              flush=True)
    best = [max(res[t][i] for t in res) for i in range(4)]
    floor = min(res[t][4] for t in res)
    step_ms = 256e3 / best[2]
    read = min(res[t][5] for t in res)
    print("generation, KV cache, batch 1, %d new tokens: ours %.1f, "
          "PyTorch %.1f tokens/s (best of 1 and 2 threads): %.2fx; a plain "
          "read of the weights allows %.1f" % (
              a.tokens, best[0], best[1], best[0] / best[1], 1e3 / read))
    print("fine-tuning step, batch 4 x 64: ours %.0f, PyTorch eager %.0f "
          "tokens/s: %.2fx; our step %.0f ms, its products alone %.0f ms "
          "(%.0f%% of the step)" % (best[2], best[3], best[2] / best[3],
                                    step_ms, floor, 100 * floor / step_ms))
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/cc",
                    help="folder of ch9, gpt2_random, products and gemv")
    ap.add_argument("--python", default=sys.executable,
                    help="the Python that has torch and transformers")
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--busy", action="store_true",
                    help="also beside one busy process")
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    cpu, feats = bench.cpu_description()
    print("CPU: %s (%s), %d cores online; PyTorch, transformers: %s" % (
        cpu, feats, os.cpu_count(), versions(a.python)))
    model = make_model(a.bin)
    ids = prompt_ids(a.bin, model)
    print("model: random GPT-2 small (124,439,808 parameters) in %s; "
          "prompt of %d ids" % (model, len(ids)))
    one_pass(a, model, ids, "idle")
    if a.busy:
        yes = subprocess.Popen(["yes"], stdout=subprocess.DEVNULL)
        try:
            time.sleep(1)
            one_pass(a, model, ids, "beside one busy process")
        finally:
            yes.kill()


if __name__ == "__main__":
    main()
