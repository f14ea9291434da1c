#!/usr/bin/env python3
"""Trains chapter 5's GPT with PyTorch, with chapter 6's recipe: the
PyTorch side of tests/bench/bench.sh.

    python3 tests/reference/train_torch.py --steps 200 --threads 1
    python3 tests/reference/train_torch.py --help

Needs PyTorch (pip install torch, or Debian's python3-torch); the build and
the tests never do. The model is the one tests/reference/gen_ch5.py checks
the C code against, written here as an nn.Module with nanoGPT's layout and
parameter names:

  x = drop(wte[idx] + pos)          pos: learned wpe, or the sinusoidal table
  x = x + drop(c_proj(attn(ln_1(x))))   causal, F.scaled_dot_product_attention
  x = x + drop(c_proj(gelu(c_fc(ln_2(x)))))       exact GELU
  logits = ln_f(x) @ wte^T          the head is tied to wte

Like the C model (chapter 4), dropout is applied after the embeddings and
after each sub-layer, not to the attention weights (nanoGPT also drops
attention weights; with --dropout 0, the benchmarks' setting, the two are
the same). The recipe is nanoGPT's: GPT-2 initialisation (normal 0.02, the
residual projections 0.02/sqrt(2L), biases 0, LayerNorm weights 1), AdamW
(fused=False, weight decay on 2-D parameters only), linear warmup then a
cosine to min_lr, clip_grad_norm_, and batches of random windows of the
train split drawn with torch.randint after torch.manual_seed(seed) (the
global generator, as nanoGPT: initialisation, batches and dropout share it).
An evaluation is the mean loss of eval_iters random batches of train and of
val, in eval mode.

Its evaluation, "reached" and summary lines are ./ch6's, so that one
parser (tests/bench/bench.py) reads both; its step lines are its own, with
each step's time in ms:

  step %d/%d | loss %.4f | lr %.2e | norm %.4f | %.1f ms | %.0f tok/s | ETA ...
  eval step %d: train %.4f, val %.4f
  reached val %.4f <= %.4f at step %d after %.2f s
  summary: steps %d, %.2f s training, %.0f tokens/s (median of steps 5..)
           val %.4f, peak memory %.1f MiB

"s training" is the sum of the steps' times (evaluations excluded); the time
in "reached" is wall time since training started, evaluations included; peak
memory is the process's maximum resident set (getrusage ru_maxrss), which
includes PyTorch's own libraries.
"""
import argparse
import contextlib
import math
import os
import resource
import statistics
import sys
import time

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:
    sys.exit("train_torch.py: PyTorch is not installed "
             "(pip install torch, or apt-get install python3-torch)")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


# ---- the model --------------------------------------------------------------

class LayerNorm(nn.Module):
    """LayerNorm with an optional bias (nn.LayerNorm's bias is all or none
    with the weight in older PyTorch)."""

    def __init__(self, C, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(C))
        self.bias = nn.Parameter(torch.zeros(C)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias,
                            1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        C = cfg.embd
        self.n_head = cfg.heads
        self.c_attn = nn.Linear(C, 3 * C, bias=cfg.bias)
        self.c_proj = nn.Linear(C, C, bias=cfg.bias)
        self.resid_dropout = nn.Dropout(cfg.dropout)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
                   for t in (q, k, v))
        if hasattr(F, "scaled_dot_product_attention"):
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:   # PyTorch 1.x: the same, written out
            att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
            mask = torch.ones(T, T, dtype=torch.bool).tril()
            y = att.masked_fill(~mask, float("-inf")).softmax(-1) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        C = cfg.embd
        self.c_fc = nn.Linear(C, 4 * C, bias=cfg.bias)
        self.c_proj = nn.Linear(4 * C, C, bias=cfg.bias)
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(F.gelu(self.c_fc(x))))   # exact GELU


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln_1 = LayerNorm(cfg.embd, cfg.bias)
        self.attn = CausalSelfAttention(cfg)
        self.ln_2 = LayerNorm(cfg.embd, cfg.bias)
        self.mlp = MLP(cfg)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


def sinusoidal(T, C):
    pe = torch.zeros(T, C)
    pos = torch.arange(T, dtype=torch.float64).unsqueeze(1)
    freq = torch.exp(torch.arange(0, C, 2, dtype=torch.float64)
                     * -(math.log(10000.0) / C))
    pe[:, 0::2] = torch.sin(pos * freq).float()
    pe[:, 1::2] = torch.cos(pos * freq).float()
    return pe


class GPT(nn.Module):
    def __init__(self, cfg, vocab_size):
        super().__init__()
        self.cfg = cfg
        t = dict(wte=nn.Embedding(vocab_size, cfg.embd))
        if cfg.positional == "learned":
            t["wpe"] = nn.Embedding(cfg.block, cfg.embd)
        t["drop"] = nn.Dropout(cfg.dropout)
        t["h"] = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        t["ln_f"] = LayerNorm(cfg.embd, cfg.bias)
        self.transformer = nn.ModuleDict(t)
        self.lm_head = nn.Linear(cfg.embd, vocab_size, bias=False)
        self.lm_head.weight = self.transformer.wte.weight     # tied
        if cfg.positional == "sinusoidal":
            self.register_buffer("pos_table", sinusoidal(cfg.block, cfg.embd),
                                 persistent=False)
        self.init_weights()

    def init_weights(self):
        # GPT-2's initialisation, drawn in state_dict order (the tied head
        # is wte, drawn once).
        std_res = 0.02 / math.sqrt(2 * self.cfg.layers)
        with torch.no_grad():
            for name, p in self.named_parameters():
                if name.endswith("bias"):
                    p.zero_()
                elif ".ln_" in name or name.startswith("transformer.ln_f"):
                    p.fill_(1.0)
                elif name.endswith("c_proj.weight"):
                    p.normal_(0.0, std_res)
                else:
                    p.normal_(0.0, 0.02)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        tr = self.transformer
        if self.cfg.positional == "learned":
            pos = tr.wpe(torch.arange(T, device=idx.device))
        else:
            pos = self.pos_table[:T]
        x = tr.drop(tr.wte(idx) + pos)
        for block in tr.h:
            x = block(x)
        logits = self.lm_head(tr.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)),
                                   targets.view(-1), ignore_index=-1)
        return logits, loss


# ---- data, schedule, evaluation ---------------------------------------------

def load_data(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        sys.exit("train_torch.py: %s: %s (make data fetches Tiny "
                 "Shakespeare)" % (path, e.strerror))
    chars = sorted(set(text))                 # by code point, like ch1
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    n = int(0.9 * len(data))
    return data[:n], data[n:], len(chars)


DEVICE = "cpu"   # --device


def get_batch(data, B, T):
    # as nanoGPT: window starts in [0, len - T), from the global generator
    ix = torch.randint(len(data) - T, (B,))
    x = torch.stack([data[i:i + T] for i in ix])
    y = torch.stack([data[i + 1:i + 1 + T] for i in ix])
    if DEVICE != "cpu":
        x = x.pin_memory().to(DEVICE, non_blocking=True)
        y = y.pin_memory().to(DEVICE, non_blocking=True)
    return x, y


def lr_at(it, a):
    # nanoGPT's get_lr, it 0-based
    if it < a.warmup:
        return a.lr * (it + 1) / (a.warmup + 1)
    if it > a.decay_steps:
        return a.min_lr
    ratio = ((it - a.warmup) / (a.decay_steps - a.warmup)
             if a.decay_steps > a.warmup else 1.0)
    coeff = 0.5 * (1.0 + math.cos(math.pi * ratio))
    return a.min_lr + coeff * (a.lr - a.min_lr)


@torch.no_grad()
@torch.no_grad()
def evaluate(model, splits, a):
    model.eval()
    out = []
    for data in splits:
        losses = torch.zeros(a.eval_iters)
        for k in range(a.eval_iters):
            x, y = get_batch(data, a.batch, a.block)
            with autocast(a):
                _, loss = model(x, y)
            losses[k] = loss.item()
        out.append(losses.mean().item())
    model.train()
    return out


def autocast(a):
    """bf16 autocast on the GPU with --bf16; otherwise nothing."""
    if a.bf16 and DEVICE != "cpu":
        return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def peak_mib():
    if DEVICE != "cpu":   # the GPU's memory is what limits a GPU run
        return torch.cuda.max_memory_allocated() / 1048576.0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def fmt_eta(s):
    s = int(round(s))
    return "%dh%02dm" % (s // 3600, s // 60 % 60) if s >= 3600 else \
        "%dm%02ds" % (s // 60, s % 60)


# ---- the run ----------------------------------------------------------------

def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Train chapter 5's GPT with PyTorch (chapter 6's recipe); "
                    "flags mirror ./ch6.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--embd", type=int, default=128)
    p.add_argument("--block", type=int, default=128)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--bias", type=int, default=0, choices=[0, 1],
                   help="biases in every Linear and LayerNorm")
    p.add_argument("--positional", default="learned",
                   choices=["learned", "sinusoidal"])
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--min-lr", type=float, default=1e-4)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--decay-steps", type=int, default=0,
                   help="the cosine reaches min_lr here; 0 = --steps")
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--beta1", type=float, default=0.9)
    p.add_argument("--beta2", type=float, default=0.99)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--grad-clip", type=float, default=1.0,
                   help="global norm limit; 0 = off")
    p.add_argument("--eval-every", type=int, default=100,
                   help="0 = only at the end")
    p.add_argument("--eval-iters", type=int, default=20)
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--threads", type=int, default=0,
                   help="torch.set_num_threads; 0 = PyTorch's default")
    p.add_argument("--compile", action="store_true",
                   help="torch.compile the model")
    p.add_argument("--stop-at-val", type=float, default=None, metavar="X",
                   help="stop at the first evaluation with val <= X")
    p.add_argument("--data", default=os.path.join(ROOT, "data",
                                                  "tinyshakespeare.txt"))
    p.add_argument("--device", default="cpu",
                   help="cpu, or cuda (chapter 8's benchmark); on cuda the "
                        "peak memory is the GPU's")
    p.add_argument("--tf32", action="store_true",
                   help="on cuda: TF32 matrix products (as ./ch8 --tf32)")
    p.add_argument("--bf16", action="store_true",
                   help="on cuda: bf16 autocast (as ./ch8 --bf16, though "
                        "autocast also runs attention in bf16)")
    p.add_argument("--quiet", action="store_true",
                   help="no per-step lines (evaluations and summary only)")
    a = p.parse_args(argv)
    if a.decay_steps <= 0:
        a.decay_steps = a.steps
    for k in ("layers", "heads", "embd", "block", "batch", "steps",
              "eval_iters"):
        if getattr(a, k) < 1:
            p.error("--%s must be >= 1" % k.replace("_", "-"))
    if a.embd % a.heads:
        p.error("--embd must be a multiple of --heads")
    if not 0 <= a.dropout < 1:
        p.error("--dropout must be in [0, 1)")
    a.bias = bool(a.bias)
    return a


def make_optimizer(model, a):
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in params if p.dim() >= 2]
    no_decay = [p for p in params if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": a.weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    kw = dict(lr=a.lr, betas=(a.beta1, a.beta2), eps=1e-8)
    try:
        return torch.optim.AdamW(groups, fused=False, **kw)
    except TypeError:           # PyTorch 1.x has no fused AdamW at all
        return torch.optim.AdamW(groups, **kw)


def main(argv=None):
    a = parse_args(argv if argv is not None else sys.argv[1:])
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    global DEVICE
    DEVICE = a.device
    if DEVICE != "cpu":
        torch.backends.cuda.matmul.allow_tf32 = a.tf32
        torch.backends.cudnn.allow_tf32 = a.tf32
    train, val, V = load_data(a.data)
    if len(train) < a.block + 1 or len(val) < a.block + 1:
        sys.exit("train_torch.py: %s is too short for block %d"
                 % (a.data, a.block))
    model = GPT(a, V).to(DEVICE)
    n_params = sum(p.numel() for p in model.parameters())
    opt = make_optimizer(model, a)
    fwd = model
    if a.compile:
        if not hasattr(torch, "compile"):
            print("torch.compile: not in PyTorch %s; running eager"
                  % torch.__version__, file=sys.stderr)
            a.compile = False
        else:
            fwd = torch.compile(model)
    print("pytorch %s | %s | threads %d | %s | params %d | L %d NH %d C %d T %d "
          "B %d | dropout %g | bias %d | seed %d"
          % (torch.__version__, DEVICE, torch.get_num_threads(),
             ("compiled" if a.compile else "eager")
             + (", bf16 autocast" if a.bf16 and DEVICE != "cpu" else ""),
             n_params, a.layers,
             a.heads, a.embd, a.block, a.batch, a.dropout, int(a.bias),
             a.seed), flush=True)

    tokens = a.batch * a.block
    step_ms = []
    val_loss = float("nan")
    last_eval = -1
    t_start = time.perf_counter()
    model.train()
    x, y = get_batch(train, a.batch, a.block)

    def do_eval(step):
        nonlocal val_loss, last_eval
        tr, val_loss = evaluate(fwd, (train, val), a)
        last_eval = step
        print("eval step %d: train %.4f, val %.4f" % (step, tr, val_loss),
              flush=True)
        if a.stop_at_val is not None and val_loss <= a.stop_at_val:
            print("reached val %.4f <= %.4f at step %d after %.2f s"
                  % (val_loss, a.stop_at_val, step,
                     time.perf_counter() - t_start), flush=True)
            return True
        return False

    step = 0
    try:
        for it in range(a.steps):
            t0 = time.perf_counter()
            lr = lr_at(it, a)
            for g in opt.param_groups:
                g["lr"] = lr
            with autocast(a):
                _, loss = fwd(x, y)
            x, y = get_batch(train, a.batch, a.block)   # nanoGPT's order
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if a.grad_clip > 0:
                norm = torch.nn.utils.clip_grad_norm_(model.parameters(),
                                                      a.grad_clip)
            else:
                norm = torch.linalg.vector_norm(torch.stack(
                    [torch.linalg.vector_norm(p.grad)
                     for p in model.parameters()]))
            opt.step()
            lossf, normf = loss.item(), float(norm)
            dt = time.perf_counter() - t0
            step = it + 1
            step_ms.append(dt * 1e3)
            if not math.isfinite(lossf):
                sys.exit("train_torch.py: loss is %s at step %d"
                         % (lossf, step))
            if not a.quiet:
                recent = step_ms[-20:]
                eta = (a.steps - step) * statistics.median(recent) / 1e3
                print("step %d/%d | loss %.4f | lr %.2e | norm %.4f | %.1f ms"
                      " | %.0f tok/s | ETA %s"
                      % (step, a.steps, lossf, lr, normf, dt * 1e3,
                         tokens / dt, fmt_eta(eta)), flush=True)
            if a.eval_every > 0 and step % a.eval_every == 0:
                if do_eval(step):
                    break
        else:
            if last_eval != step:
                do_eval(step)
    except KeyboardInterrupt:
        print("interrupted at step %d" % step, file=sys.stderr)
    train_s = sum(step_ms) / 1e3
    # as ./ch6: the median step time, leaving out the first 4 (warm-up,
    # and with --compile the compilation) when there are more than 8
    skip = 4 if len(step_ms) > 8 else 0
    timed = sorted(step_ms[skip:])
    tok_s = tokens / (timed[len(timed) // 2] / 1e3) if timed else 0.0
    print("summary: steps %d, %.2f s training, %.0f tokens/s (median of "
          "steps %d..)\n         val %.4f, peak memory %.1f MiB"
          % (step, train_s, tok_s, skip + 1, val_loss, peak_mib()),
          flush=True)


if __name__ == "__main__":
    main()
