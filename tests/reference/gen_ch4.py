#!/usr/bin/env python3
"""Writes the PyTorch reference fixtures of chapter 4 (the Transformer
block).

    python3 tests/reference/gen_ch4.py        # from the repository root

needs PyTorch (pip install torch, or Debian's python3-torch); the build and
the tests never do: they read the small text files this script writes,
tests/reference/ch4_*.txt, in the format of tests/fixture.h.

Inputs are drawn in float32 (and written exactly, with %.9g); every
reference is computed from them in float64 by the functions below, which
spell the definitions out with plain tensor operations, and is
cross-checked against PyTorch's own modules (nn.LayerNorm, nn.RMSNorm,
F.scaled_dot_product_attention, nn.GELU). Gradients come from autograd, of
L = sum(out * w) with w a fixed random tensor of out's shape.

The blocks follow nanoGPT's layout (ln_1, attn.c_attn, attn.c_proj, ln_2,
mlp.c_fc, mlp.c_proj; Linear weights (out, in)), causal attention, exact
GELU, dropout 0. Pre-LN: x + attn(ln_1(x)), then x + mlp(ln_2(x)).
Post-LN: ln_1(x + attn(x)), then ln_2(x + mlp(x)).
"""
import math

import torch
import torch.nn.functional as F

from fixture_writer import Writer

torch.manual_seed(4)
LN_EPS = 1e-5
RMS_EPS = 1e-6

NAMES = ["ln_1.weight", "ln_1.bias", "attn.c_attn.weight",
         "attn.c_attn.bias", "attn.c_proj.weight", "attn.c_proj.bias",
         "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias",
         "mlp.c_proj.weight", "mlp.c_proj.bias"]


# ---- the definitions, in float64 -------------------------------------------

def layernorm(x, w, b):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)      # biased
    y = (x - mean) / torch.sqrt(var + LN_EPS) * w
    return y if b is None else y + b


def rmsnorm(x, w):
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + RMS_EPS) * w


def linear(x, w, b):
    y = x @ w.transpose(0, 1)
    return y if b is None else y + b


def attention(x, p, NH):
    B, T, C = x.shape
    HS = C // NH
    qkv = linear(x, p["attn.c_attn.weight"], p["attn.c_attn.bias"])
    q, k, v = [t.view(B, T, NH, HS).transpose(1, 2)
               for t in qkv.split(C, dim=2)]
    att = q @ k.transpose(-2, -1) / math.sqrt(HS)
    mask = torch.ones(T, T, dtype=torch.bool).tril()
    att = att.masked_fill(~mask, float("-inf")).softmax(-1)
    y = (att @ v).transpose(1, 2).reshape(B, T, C)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert close(y, ref.transpose(1, 2).reshape(B, T, C)), "sdpa disagrees"
    return linear(y, p["attn.c_proj.weight"], p["attn.c_proj.bias"])


def mlp(x, p):
    h = linear(x, p["mlp.c_fc.weight"], p["mlp.c_fc.bias"])
    a = 0.5 * h * (1 + torch.erf(h / math.sqrt(2)))
    assert close(a, torch.nn.GELU()(h)), "gelu disagrees"
    return linear(a, p["mlp.c_proj.weight"], p["mlp.c_proj.bias"])


def ln(x, p, which):
    return layernorm(x, p[which + ".weight"], p[which + ".bias"])


def block_pre(x, p, NH):
    x = x + attention(ln(x, p, "ln_1"), p, NH)
    return x + mlp(ln(x, p, "ln_2"), p)


def block_post(x, p, NH):
    x = ln(x + attention(x, p, NH), p, "ln_1")
    return ln(x + mlp(x, p), p, "ln_2")


# ---- cross-checks against PyTorch's own code -------------------------------

def close(a, b):
    return torch.allclose(a, b, atol=1e-12, rtol=1e-12)


def check_norms(x, w, b):
    C = x.shape[-1]
    m = torch.nn.LayerNorm(C, eps=LN_EPS, bias=b is not None,
                           dtype=torch.float64)
    r = torch.nn.RMSNorm(C, eps=RMS_EPS, dtype=torch.float64)
    with torch.no_grad():
        m.weight.copy_(w)
        r.weight.copy_(w)
        if b is not None:
            m.bias.copy_(b)
    assert close(m(x), layernorm(x, w, b)), "nn.LayerNorm disagrees"
    assert close(r(x), rmsnorm(x, w)), "nn.RMSNorm disagrees"


# ---- writing ---------------------------------------------------------------

def randn(*shape, std=1.0, mean=0.0):
    """float32 draws, returned as float64 (exactly the values written)."""
    t = torch.randn(*shape) * std + mean
    return t.to(torch.float32).to(torch.float64)


def grads(out, inputs, w):
    """dL/d input for L = sum(out * w)."""
    return torch.autograd.grad((out * w).sum(), inputs)


# ---- the cases -------------------------------------------------------------

def norm_case(fx, name, B, T, C, bias, mean=0.0, std=1.0, rms=False):
    x = randn(B, T, C, std=std, mean=mean).requires_grad_()
    w = (1 + randn(C, std=0.3)).requires_grad_()
    b = randn(C, std=0.3).requires_grad_() if bias and not rms else None
    check_norms(x.detach(), w.detach(), None if b is None else b.detach())
    out = rmsnorm(x, w) if rms else layernorm(x, w, b)
    lw = randn(B, T, C)
    wrt = [x, w] + ([b] if b is not None else [])
    g = grads(out, wrt, lw)
    fx.add(name + ".x", x)
    fx.add(name + ".weight", w)
    if b is not None:
        fx.add(name + ".bias", b)
    fx.add(name + ".out", out)
    xd = x.detach()
    if rms:
        fx.add(name + ".rstd", 1 / torch.sqrt((xd * xd).mean(-1) + RMS_EPS))
    else:
        fx.add(name + ".mean", xd.mean(-1))
        fx.add(name + ".rstd", 1 / torch.sqrt(xd.var(-1, unbiased=False)
                                              + LN_EPS))
    fx.add(name + ".w", lw)
    fx.add(name + ".dx", g[0])
    fx.add(name + ".dweight", g[1])
    if b is not None:
        fx.add(name + ".dbias", g[2])


def block_params(C, Fh, bias):
    shapes = {"ln_1.weight": (C,), "ln_1.bias": (C,),
              "attn.c_attn.weight": (3 * C, C), "attn.c_attn.bias": (3 * C,),
              "attn.c_proj.weight": (C, C), "attn.c_proj.bias": (C,),
              "ln_2.weight": (C,), "ln_2.bias": (C,),
              "mlp.c_fc.weight": (Fh, C), "mlp.c_fc.bias": (Fh,),
              "mlp.c_proj.weight": (C, Fh), "mlp.c_proj.bias": (C,)}
    p = {}
    for n in NAMES:
        if n.endswith(".bias") and not bias:
            p[n] = None
        elif n.startswith("ln_") and n.endswith(".weight"):
            p[n] = (1 + randn(*shapes[n], std=0.2)).requires_grad_()
        elif n.endswith(".bias"):
            p[n] = randn(*shapes[n], std=0.1).requires_grad_()
        else:
            p[n] = randn(*shapes[n], std=1 / math.sqrt(shapes[n][1])
                         ).requires_grad_()
    return p


def block_case(fx, name, kind, B, T, C, NH, Fh, bias):
    x = randn(B, T, C).requires_grad_()
    p = block_params(C, Fh, bias)
    out = (block_pre if kind == "pre" else block_post)(x, p, NH)
    lw = randn(B, T, C)
    present = [n for n in NAMES if p[n] is not None]
    g = grads(out, [x] + [p[n] for n in present], lw)
    fx.add(name + ".x", x)
    for n in present:
        fx.add(name + "." + n, p[n])
    fx.add(name + ".out", out)
    fx.add(name + ".w", lw)
    fx.add(name + ".dx", g[0])
    for n, d in zip(present, g[1:]):
        fx.add(name + ".d." + n, d)


def main():
    fx = Writer("ch4_norm.txt", "LayerNorm and RMSNorm: NAME.x -> NAME.out "
                "(eps 1e-5 and 1e-6); gradients of L = sum(NAME.out * "
                "NAME.w)")
    norm_case(fx, "ln", 2, 3, 7, True)
    norm_case(fx, "ln_nobias", 1, 1, 5, False)
    norm_case(fx, "ln_shifted", 1, 4, 16, True, mean=10.0, std=0.1)
    norm_case(fx, "rms", 2, 3, 7, False, rms=True)
    norm_case(fx, "rms_one", 1, 1, 5, False, rms=True)
    fx.close()

    fx = Writer("ch4_block.txt", "Pre-LN and Post-LN blocks (nanoGPT "
                "layout, causal, exact GELU, dropout 0): NAME.x -> "
                "NAME.out; NAME.d.<param> = dL/dparam of L = sum(NAME.out "
                "* NAME.w)")
    block_case(fx, "pre", "pre", 2, 3, 8, 2, 20, True)
    block_case(fx, "pre_nobias", "pre", 1, 4, 6, 3, 12, False)
    block_case(fx, "post", "post", 2, 3, 8, 2, 20, True)
    block_case(fx, "post_nobias", "post", 1, 4, 6, 3, 12, False)
    fx.close()


if __name__ == "__main__":
    main()
