#!/usr/bin/env python3
"""Writes the PyTorch reference of chapter 5 (the whole GPT).

    python3 tests/reference/gen_ch5.py        # from the repository root

needs PyTorch and the safetensors package (pip install torch safetensors,
or Debian's python3-torch); the build and the tests never do. For each
case below it builds the model in PyTorch, written here from nanoGPT's
description (wte, wpe or the sinusoidal table, Pre-LN blocks with causal
attention and exact GELU, ln_f, the LM head tied to wte, cross-entropy with
ignore_index=-1), draws random weights and saves them with
safetensors.torch.save_file, as any PyTorch program would:

    tests/reference/ch5_<case>.safetensors   the weights, nanoGPT's names,
                                             "config" and "vocab" metadata
    tests/reference/ch5_gpt.txt              per case: idx, targets (-1 =
                                             ignored), logits, loss and the
                                             gradient of every parameter

The C tests load the .safetensors files with chapter 5's checkpoint loader
(so they also prove that another program's file loads) and compare the
forward and backward passes. Weights are float32; the references are
computed in float64 from them. The weights are not GPT-2's initialisation:
biases and LayerNorm weights are random too, so that a gradient which
ignored one of them would show.
"""
import json
import math
import os

import torch
import torch.nn.functional as F
from safetensors.torch import save_file

from fixture_writer import HERE, Writer

torch.manual_seed(5)
LN_EPS = 1e-5
VOCAB = "\n !,.:?aehost"       # 13 characters, sorted by code point

# scored by each model as ./ch5 --score does: non-overlapping windows of
# block_size characters, each predicting the next
SCORE_TEXT = "hate the east. toast: a hoe, a hat!\nshoe? oh, the seat.\n"

CASES = [
    # name,    bias,  positional,  B, T (block_size is 8)
    ("bias", True, "learned", 2, 8),
    ("nobias", False, "learned", 2, 8),
    ("sin", False, "sinusoidal", 3, 5),
]
CFG = dict(vocab_size=len(VOCAB), block_size=8, n_layer=2, n_head=2,
           n_embd=12, dropout=0.0)


def state_names(bias, learned, L):
    names = ["transformer.wte.weight"]
    if learned:
        names.append("transformer.wpe.weight")
    for i in range(L):
        for n in ["ln_1.weight", "ln_1.bias", "attn.c_attn.weight",
                  "attn.c_attn.bias", "attn.c_proj.weight",
                  "attn.c_proj.bias", "ln_2.weight", "ln_2.bias",
                  "mlp.c_fc.weight", "mlp.c_fc.bias", "mlp.c_proj.weight",
                  "mlp.c_proj.bias"]:
            if bias or not n.endswith(".bias"):
                names.append("transformer.h.%d.%s" % (i, n))
    names.append("transformer.ln_f.weight")
    if bias:
        names.append("transformer.ln_f.bias")
    return names


def shape_of(name, V, T, C):
    last = name.split(".")[-2:]
    if name == "transformer.wte.weight":
        return (V, C)
    if name == "transformer.wpe.weight":
        return (T, C)
    kind = ".".join(last)
    return {"c_attn.weight": (3 * C, C), "c_attn.bias": (3 * C,),
            "c_proj.weight": (C, 4 * C) if "mlp" in name else (C, C),
            "c_proj.bias": (C,), "c_fc.weight": (4 * C, C),
            "c_fc.bias": (4 * C,)}.get(kind, (C,))


def random_weights(names, V, T, C):
    w = {}
    for n in names:
        shape = shape_of(n, V, T, C)
        if "ln_" in n and n.endswith(".weight"):
            t = 1 + 0.2 * torch.randn(shape)
        elif n.endswith(".bias"):
            t = 0.1 * torch.randn(shape)
        elif n.startswith("transformer.w"):
            t = 0.5 * torch.randn(shape)
        else:
            t = torch.randn(shape) / math.sqrt(shape[1])
        w[n] = t.to(torch.float32).contiguous()
    return w


def sinusoidal(T, C):
    pe = torch.zeros(T, C, dtype=torch.float64)
    pos = torch.arange(T, dtype=torch.float64).unsqueeze(1)
    freq = torch.exp(torch.arange(0, C, 2, dtype=torch.float64)
                     * -(math.log(10000.0) / C))
    pe[:, 0::2] = torch.sin(pos * freq)
    pe[:, 1::2] = torch.cos(pos * freq)
    return pe


# ---- the model, in float64 ---------------------------------------------------

def layernorm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b, LN_EPS)


def linear(x, w, b):
    return F.linear(x, w, b)


def block(x, p, pre, NH):
    B, T, C = x.shape
    h = layernorm(x, p[pre + "ln_1.weight"], p.get(pre + "ln_1.bias"))
    qkv = linear(h, p[pre + "attn.c_attn.weight"],
                 p.get(pre + "attn.c_attn.bias"))
    q, k, v = qkv.split(C, dim=2)
    q, k, v = (t.view(B, T, NH, C // NH).transpose(1, 2) for t in (q, k, v))
    att = (q @ k.transpose(-2, -1)) / math.sqrt(C // NH)
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
    att = att.masked_fill(~mask, float("-inf")).softmax(-1)
    y = (att @ v).transpose(1, 2).reshape(B, T, C)
    x = x + linear(y, p[pre + "attn.c_proj.weight"],
                   p.get(pre + "attn.c_proj.bias"))
    h = layernorm(x, p[pre + "ln_2.weight"], p.get(pre + "ln_2.bias"))
    h = F.gelu(linear(h, p[pre + "mlp.c_fc.weight"],
                      p.get(pre + "mlp.c_fc.bias")))
    return x + linear(h, p[pre + "mlp.c_proj.weight"],
                      p.get(pre + "mlp.c_proj.bias"))


def gpt(p, idx, targets, learned, L, NH):
    B, T = idx.shape
    wte = p["transformer.wte.weight"]
    C = wte.shape[1]
    pos = p["transformer.wpe.weight"][:T] if learned else sinusoidal(T, C)
    x = wte[idx] + pos
    for i in range(L):
        x = block(x, p, "transformer.h.%d." % i, NH)
    x = layernorm(x, p["transformer.ln_f.weight"],
                  p.get("transformer.ln_f.bias"))
    logits = x @ wte.transpose(0, 1)          # the tied head
    loss = F.cross_entropy(logits.view(-1, logits.shape[-1]),
                           targets.view(-1), ignore_index=-1)
    return logits, loss


def main():
    out = Writer("ch5_gpt.txt", "chapter 5: the whole GPT, forward and "
                 "backward (weights in ch5_<case>.safetensors); <case>.score "
                 "is the --score loss of %r" % SCORE_TEXT)
    V, Tb, L, NH, C = (CFG["vocab_size"], CFG["block_size"],
                       CFG["n_layer"], CFG["n_head"], CFG["n_embd"])
    for name, bias, positional, B, T in CASES:
        learned = positional == "learned"
        names = state_names(bias, learned, L)
        w32 = random_weights(names, V, Tb, C)
        # nanoGPT's state_dict also holds lm_head.weight, the same tensor
        # as wte; safetensors refuses shared storage, so it gets a copy.
        tensors = dict(w32)
        tensors["lm_head.weight"] = w32["transformer.wte.weight"].clone()
        config = dict(CFG, bias=bias, positional=positional)
        path = os.path.join(HERE, "ch5_%s.safetensors" % name)
        save_file(tensors, path, metadata={
            "config": json.dumps(config), "vocab": VOCAB,
            "written_by": "tests/reference/gen_ch5.py"})
        print("wrote %s (%d bytes)" % (os.path.relpath(path),
                                       os.path.getsize(path)))

        idx = torch.randint(V, (B, T))
        targets = torch.randint(V, (B, T))
        targets[0, 1] = -1            # ignored positions
        targets[-1, -1] = -1
        p = {n: t.to(torch.float64).requires_grad_() for n, t in w32.items()}
        logits, loss = gpt(p, idx, targets, learned, L, NH)
        loss.backward()
        out.add(name + ".idx", idx)
        out.add(name + ".targets", targets)
        out.add(name + ".logits", logits)
        out.add(name + ".loss", loss)
        for n in names:
            out.add(name + ".grad." + n, p[n].grad)

        ids = torch.tensor([VOCAB.index(ch) for ch in SCORE_TEXT])
        wins = [(i, i + Tb) for i in range(0, len(ids) - Tb, Tb)]
        x = torch.stack([ids[a:b] for a, b in wins])
        y = torch.stack([ids[a + 1:b + 1] for a, b in wins])
        with torch.no_grad():
            _, score = gpt({n: t.to(torch.float64) for n, t in w32.items()},
                           x, y, learned, L, NH)
        out.add(name + ".score", score)
    out.close()


if __name__ == "__main__":
    main()
