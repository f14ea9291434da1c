#!/usr/bin/env python3
"""./ch8 --gpt2 against PyTorch on the same GPU: fine-tuning steps of a
GPT-2 of GPT-2 small's shape (12 layers, 12 heads, 768 wide, 50,257
tokens, a block of 1,024, the tanh GELU, biases, the tied head).

    python3 tests/bench/cuda/bench_gpt2_gpu.py --bin build/cc-noblas
    python3 tests/bench/cuda/bench_gpt2_gpu.py --bin build/cc --steps 40 \\
        --shapes 4x64 --only "ch8 --bf16"

No download: the model has random weights (speed does not depend on
them), written once by gpt2_random (make builds it beside ./ch8) in
Hugging Face's layout into build/bench-gpt2-gpu/, with the small
tokenizer of tests/reference/ch9_tok beside it; both sides load that
folder. For each batch shape (B x T: 4 x 64 is ./ch9 --finetune's
default; 8 x 1,024 fills the block), it runs

  - ./ch8 --gpt2 --steps N on Tiny Shakespeare: fp32, --bf16, and
    --bf16 --flash (the fused attention on the tensor cores); its
    median step, from the summary line, and the GPU memory in use that
    the summary reports;
  - PyTorch eager on cuda, fp32 and bf16 (autocast), with transformers'
    GPT2LMHeadModel loaded from the same folder when transformers is
    installed: the loop of tests/bench/bench_gpt2.py (random ids of the
    same shape, no dropout, AdamW as ./ch9's preset with weight decay on
    the matrices, clipping at 1.0), each step timed between two
    synchronisations with the GPU, the median after two warm-up steps,
    and the peak of torch.cuda.max_memory_allocated.

and prints tokens/s, steps/s, the ratio to PyTorch eager in the same
precision, and the GPU memory. Nothing here is run by make check; it
needs a GPU (tests/bench/cuda/lease.sh runs it).
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

SHAPE = dict(V=50257, block=1024, layers=12, heads=12, embd=768)
OURS = ["ch8", "ch8 --bf16", "ch8 --bf16 --flash"]
THEIRS = ["torch eager", "torch eager bf16"]


def run(cmd, timeout=900, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT,
                       timeout=timeout, env=env)
    if p.returncode != 0:
        print("bench_gpt2_gpu: %s failed (status %d):\n%s%s" % (
            " ".join(cmd), p.returncode, p.stdout[-2000:], p.stderr[-2000:]),
            file=sys.stderr)
        return None
    return p.stdout


def make_model(b):
    d = os.path.join(ROOT, "build", "bench-gpt2-gpu")
    if not os.path.exists(os.path.join(d, "model.safetensors")):
        exe = os.path.join(b, "gpt2_random")
        if not os.path.exists(exe):   # (make names it by its relative path)
            run(["make", "-s", os.path.relpath(exe, ROOT)]
                + (["NO_BLAS=1"] if "noblas" in exe else []))
        if not os.path.exists(exe):
            sys.exit("bench_gpt2_gpu: no %s: build it with make" % exe)
        if run([exe, d, "tests/reference/ch9_tok", str(SHAPE["V"]),
                str(SHAPE["block"]), str(SHAPE["layers"]),
                str(SHAPE["heads"]), str(SHAPE["embd"])]) is None:
            sys.exit("bench_gpt2_gpu: cannot write the model")
    return d


def ours(b, label, model, B, T, steps):
    """./ch8 --gpt2's median step: tokens/s, and the GPU memory in use."""
    cmd = [os.path.join(b, "ch8"), "--gpt2", "--model", model,
           "--batch", str(B), "--window", str(T), "--steps", str(steps),
           "--warmup", "2", "--eval-every", "0", "--eval-iters", "1",
           "--sample-tokens", "0", "--quiet"] + label.split()[1:]
    out = run(cmd)
    if out is None:
        return None, None
    flat = " ".join(out.split())
    m = re.search(r"summary: steps \d+, [0-9.]+ s training, ([0-9.]+) "
                  r"tokens/s", flat)
    mem = re.search(r"([0-9]+) MiB of GPU memory in use", flat)
    return (float(m.group(1)) if m else None,
            float(mem.group(1)) if mem else None)


TORCH_SIDE = r'''
import statistics, sys, time, torch
from transformers import GPT2LMHeadModel
model, B, T, n, bf16 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    int(sys.argv[4]), sys.argv[5] == "1"
torch.manual_seed(0)
dev = torch.device("cuda")
# no dropout on either side (./ch9 --finetune's default)
m = GPT2LMHeadModel.from_pretrained(model, torch_dtype=torch.float32,
                                    resid_pdrop=0.0, embd_pdrop=0.0,
                                    attn_pdrop=0.0).to(dev)
m.train()
decay = [p for p in m.parameters() if p.dim() >= 2]
other = [p for p in m.parameters() if p.dim() < 2]
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                         {"params": other, "weight_decay": 0.0}],
                        lr=1e-4, betas=(0.9, 0.95), eps=1e-8)
V = m.config.vocab_size
g = torch.Generator(device=dev).manual_seed(1)
times = []
for step in range(n + 2):
    x = torch.randint(0, V, (B, T), generator=g, device=dev)
    y = torch.randint(0, V, (B, T), generator=g, device=dev)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
        logits = m(x).logits
        loss = torch.nn.functional.cross_entropy(logits.float().view(-1, V),
                                                 y.view(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
    opt.step()
    torch.cuda.synchronize()
    times.append(time.perf_counter() - t0)
print("tokens/s %.3f" % (B * T / statistics.median(times[2:])))
print("peak MiB %.0f" % (torch.cuda.max_memory_allocated() / 2**20))
'''


def theirs(py, label, model, B, T, steps):
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               TOKENIZERS_PARALLELISM="false")
    out = run([py, "-c", TORCH_SIDE, model, str(B), str(T), str(steps),
               "1" if "bf16" in label else "0"], env=env)
    if out is None:
        return None, None
    tok = re.search(r"tokens/s ([0-9.]+)", out)
    mem = re.search(r"peak MiB ([0-9.]+)", out)
    return float(tok.group(1)), float(mem.group(1))


def have_transformers(py):
    return subprocess.run([py, "-c", "import torch, transformers; "
                           "assert torch.cuda.is_available()"],
                          capture_output=True).returncode == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/cc",
                    help="folder of ch8 and gpt2_random")
    ap.add_argument("--python", default=sys.executable,
                    help="the Python that has torch and transformers")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--shapes", default="4x64,8x1024",
                    help="batch shapes B x T, comma-separated")
    ap.add_argument("--only", default="",
                    help="comma-separated labels to run (default: all)")
    a = ap.parse_args()
    b = a.bin if os.path.isabs(a.bin) else os.path.join(ROOT, a.bin)
    model = make_model(b)
    labels = OURS + THEIRS
    if a.only:
        labels = [x.strip() for x in a.only.split(",")]
    if any(x.startswith("torch") for x in labels) \
            and not have_transformers(a.python):
        print("(PyTorch's side skipped: no torch with CUDA and "
              "transformers in %s)" % a.python)
        labels = [x for x in labels if not x.startswith("torch")]
    try:
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name",
                              "--format=csv,noheader"], capture_output=True,
                             text=True).stdout.strip()
    except OSError:
        gpu = ""
    print("GPU: %s; GPT-2 small's shape, random weights; %d steps, median"
          % (gpu or "?", a.steps))
    print("| B x T | run | tokens/s | steps/s | vs torch eager | GPU MiB |")
    print("|---|---|---:|---:|---:|---:|")
    for shape in a.shapes.split(","):
        B, T = (int(x) for x in shape.split("x"))
        got = {}
        for label in labels:
            side = ours if label.startswith("ch8") else theirs
            arg = b if side is ours else a.python
            got[label] = side(arg, label, model, B, T, a.steps)
        for label in labels:
            tok, mem = got[label]
            base = got.get("torch eager bf16" if "bf16" in label
                           else "torch eager", (None, None))[0]
            ratio = "%.2fx" % (tok / base) if tok and base else "-"
            print("| %d x %d | %s | %s | %s | %s | %s |" % (
                B, T, label, "%.0f" % tok if tok else "failed",
                "%.2f" % (tok / (B * T)) if tok else "-", ratio,
                "%.0f" % mem if mem else "-"))


if __name__ == "__main__":
    main()
