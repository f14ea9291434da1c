#!/usr/bin/env python3
"""Writes the PyTorch reference fixtures of chapter 3 (the feed-forward
network).

    python3 tests/reference/gen_ch3.py        # from the repository root

needs PyTorch (pip install torch, or Debian's python3-torch); the build and
the tests never do: they read the small text files this script writes,
tests/reference/ch3_*.txt, in the format of tests/fixture.h.

Inputs are drawn in float32 (and written exactly, with %.9g); every
reference is computed from them in float64 by the functions below, which
spell the chapter's definitions out with plain tensor operations, and each
is cross-checked against PyTorch's own modules (F.gelu, F.silu, nn.Linear,
nn.GELU). Gradients come from autograd, of L = sum(out * w) with w a fixed
random tensor of out's shape, so dL/dout = w.

Dropout: the chapter's rule (chapters/ch3_ffn/dropout.h) drops element i
when the i-th float32 uniform of a generator seeded with `seed` is below p,
and the project's generator draws what torch.rand draws. So the mask here
is torch.rand(n, generator=seeded) >= p, written out as NAME.mask (1 =
kept), with the seed and p, and the C test seeds its generator the same way.
"""
import math

import torch
import torch.nn.functional as F

from fixture_writer import Writer, randn

torch.manual_seed(3)


# ---- the definitions, in float64 -------------------------------------------

def gelu(x, kind):
    if kind == "exact":                  # x Phi(x)
        return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))
    u = math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)
    return 0.5 * x * (1 + torch.tanh(u))


def silu(x):
    return x / (1 + torch.exp(-x))


def linear(x, w, b):
    y = x @ w.transpose(0, 1)
    return y if b is None else y + b


def dropout(y, keep, p):
    """keep: 1 where kept; the survivors are scaled by 1 / (1 - p)."""
    return y if p == 0 else y * keep / (1 - p)


def ffn(x, w_fc, b_fc, w_proj, b_proj, kind, keep, p):
    return dropout(linear(gelu(linear(x, w_fc, b_fc), kind), w_proj, b_proj),
                   keep, p)


def swiglu(x, w_gate, b_gate, w_up, b_up, w_down, b_down, keep, p):
    s = silu(linear(x, w_gate, b_gate)) * linear(x, w_up, b_up)
    return dropout(linear(s, w_down, b_down), keep, p)


# ---- cross-checks against PyTorch's own code -------------------------------

def close(a, b):
    return torch.allclose(a, b, atol=1e-12, rtol=1e-12)


def check_gelu(x):
    for kind, approx in (("exact", "none"), ("tanh", "tanh")):
        ours = x.clone().requires_grad_()
        theirs = x.clone().requires_grad_()
        y = gelu(ours, kind)
        ref = F.gelu(theirs, approximate=approx)
        assert close(y, ref), "gelu %s disagrees with F.gelu" % kind
        g1, = torch.autograd.grad(y.sum(), ours)
        g2, = torch.autograd.grad(ref.sum(), theirs)
        assert close(g1, g2), "gelu %s derivative disagrees" % kind


def check_ffn(x, w_fc, b_fc, w_proj, b_proj, kind, out_no_dropout):
    C, Fh = x.shape[-1], w_fc.shape[0]
    m = torch.nn.Sequential(
        torch.nn.Linear(C, Fh, bias=b_fc is not None, dtype=torch.float64),
        torch.nn.GELU(approximate="none" if kind == "exact" else "tanh"),
        torch.nn.Linear(Fh, C, bias=b_proj is not None, dtype=torch.float64))
    with torch.no_grad():
        m[0].weight.copy_(w_fc)
        m[2].weight.copy_(w_proj)
        if b_fc is not None:
            m[0].bias.copy_(b_fc)
            m[2].bias.copy_(b_proj)
    assert close(m(x), out_no_dropout), "nn.Sequential FFN disagrees"


def check_swiglu(x, w_gate, b_gate, w_up, b_up, w_down, b_down, out):
    s = F.silu(F.linear(x, w_gate, b_gate)) * F.linear(x, w_up, b_up)
    assert close(F.linear(s, w_down, b_down), out), "SwiGLU disagrees"


# ---- writing ---------------------------------------------------------------

def keep_mask(shape, p, seed):
    """1 = kept: the chapter's rule, one float32 uniform per element."""
    g = torch.Generator().manual_seed(seed)
    n = math.prod(shape)
    u = torch.rand(n, generator=g, dtype=torch.float32)
    return (u >= torch.tensor(p, dtype=torch.float32)).to(
        torch.float64).view(*shape)


def grads(out, inputs, w):
    """dL/d input for L = sum(out * w)."""
    return torch.autograd.grad((out * w).sum(), inputs)


# ---- the cases -------------------------------------------------------------

def gelu_case(fx):
    x = torch.cat([torch.linspace(-6, 6, 49), torch.tensor(
        [-10, -8, -1e-3, 1e-3, 8, 10]), torch.randn(20) * 2])
    x = x.to(torch.float32).to(torch.float64)
    check_gelu(x)
    fx.add("x", x)
    for kind in ("exact", "tanh"):
        xg = x.clone().requires_grad_()
        y = gelu(xg, kind)
        dy, = torch.autograd.grad(y.sum(), xg)
        fx.add(kind + ".y", y)
        fx.add(kind + ".dy", dy)


def ffn_case(fx, name, B, T, C, Fh, bias, kind, p=0.0, seed=0):
    p = float(torch.tensor(p, dtype=torch.float32))     # the float32 p
    x = randn(B, T, C).requires_grad_()
    params = [randn(Fh, C, std=1 / math.sqrt(C)),
              randn(Fh, std=0.1) if bias else None,
              randn(C, Fh, std=1 / math.sqrt(Fh)),
              randn(C, std=0.1) if bias else None]
    params = [q.requires_grad_() if q is not None else None for q in params]
    keep = keep_mask((B, T, C), p, seed)
    out = ffn(x, *params, kind, keep, p)
    check_ffn(x.detach(), *[q.detach() if q is not None else None
                            for q in params], kind,
              ffn(x, *params, kind, keep, 0.0).detach())
    w = randn(B, T, C)
    wrt = [x] + [q for q in params if q is not None]
    g = grads(out, wrt, w)
    fx.add(name + ".x", x)
    names = ["c_fc.weight", "c_fc.bias", "c_proj.weight", "c_proj.bias"]
    for n, q in zip(names, params):
        if q is not None:
            fx.add(name + "." + n, q)
    if p > 0:
        fx.add(name + ".p", p)
        fx.add(name + ".seed", seed)
        fx.add(name + ".mask", keep)
    fx.add(name + ".out", out)
    fx.add(name + ".w", w)
    fx.add(name + ".dx", g[0])
    present = [n for n, q in zip(names, params) if q is not None]
    for n, d in zip(present, g[1:]):
        fx.add(name + ".d" + n, d)


def swiglu_case(fx, name, B, T, C, H, bias, p=0.0, seed=0):
    p = float(torch.tensor(p, dtype=torch.float32))
    x = randn(B, T, C).requires_grad_()
    s_in, s_out = 1 / math.sqrt(C), 1 / math.sqrt(H)
    params = [randn(H, C, std=s_in), randn(H, std=0.1) if bias else None,
              randn(H, C, std=s_in), randn(H, std=0.1) if bias else None,
              randn(C, H, std=s_out), randn(C, std=0.1) if bias else None]
    params = [q.requires_grad_() if q is not None else None for q in params]
    keep = keep_mask((B, T, C), p, seed)
    out = swiglu(x, *params, keep, p)
    check_swiglu(x.detach(), *[q.detach() if q is not None else None
                               for q in params],
                 swiglu(x, *params, keep, 0.0).detach())
    w = randn(B, T, C)
    wrt = [x] + [q for q in params if q is not None]
    g = grads(out, wrt, w)
    fx.add(name + ".x", x)
    names = ["w_gate", "b_gate", "w_up", "b_up", "w_down", "b_down"]
    for n, q in zip(names, params):
        if q is not None:
            fx.add(name + "." + n, q)
    if p > 0:
        fx.add(name + ".p", p)
        fx.add(name + ".seed", seed)
        fx.add(name + ".mask", keep)
    fx.add(name + ".out", out)
    fx.add(name + ".w", w)
    fx.add(name + ".dx", g[0])
    present = [n for n, q in zip(names, params) if q is not None]
    for n, d in zip(present, g[1:]):
        fx.add(name + ".d" + n, d)


def main():
    fx = Writer("ch3_gelu.txt", "GELU, exact (erf) and tanh forms: x -> "
                "KIND.y and its derivative KIND.dy")
    gelu_case(fx)
    fx.close()

    fx = Writer("ch3_ffn.txt", "position-wise FFN (nanoGPT's MLP): NAME.x "
                "-> NAME.out; gradients of L = sum(NAME.out * NAME.w)")
    ffn_case(fx, "small", 2, 3, 8, 32, True, "exact")
    ffn_case(fx, "tanh", 1, 4, 6, 10, False, "tanh")      # F is not 4C
    ffn_case(fx, "one", 1, 1, 5, 7, True, "exact")        # a single token
    ffn_case(fx, "dropout", 2, 4, 6, 24, True, "exact", p=0.25, seed=7)
    fx.close()

    fx = Writer("ch3_swiglu.txt", "SwiGLU FFN: NAME.x -> NAME.out; "
                "gradients of L = sum(NAME.out * NAME.w)")
    swiglu_case(fx, "small", 2, 3, 8, 21, False)          # H = 2/3 of 32
    swiglu_case(fx, "bias", 1, 3, 6, 4, True, p=0.2, seed=11)
    swiglu_case(fx, "one", 1, 1, 3, 2, False)
    fx.close()


if __name__ == "__main__":
    main()
