#!/usr/bin/env python3
"""Writes the PyTorch reference fixtures of chapter 2 (attention).

    python3 tests/reference/gen_ch2.py        # from the repository root

needs PyTorch (pip install torch, or Debian's python3-torch); the build and
the tests never do: they read the small text files this script writes,
tests/reference/ch2_*.txt, in the format of tests/fixture.h.

Inputs are drawn in float32 (and written exactly, with %.9g); every
reference is computed from them in float64, by the functions below, which
spell the chapter's definitions out with plain tensor operations. Each one
is cross-checked against PyTorch's own implementation where PyTorch has
one (F.scaled_dot_product_attention, nn.MultiheadAttention), and the
gradients come from autograd, of the loss L = sum(out * w) with w a fixed
random tensor of out's shape, so dL/dout = w.
"""
import math

import torch
import torch.nn.functional as F

from fixture_writer import Writer, randn

torch.manual_seed(2024)


# ---- the definitions, in float64 -------------------------------------------

def visible(B, Tq, Tk, causal, key_mask):
    """Bool (B, 1, Tq, Tk): may query t look at key s? Causal masking is
    aligned bottom-right: query t sits at key position t + Tk - Tq."""
    ok = torch.ones(B, 1, Tq, Tk, dtype=torch.bool)
    if causal:
        t = torch.arange(Tq).view(Tq, 1)
        s = torch.arange(Tk).view(1, Tk)
        ok = ok & (s <= t + (Tk - Tq))
    if key_mask is not None:
        ok = ok & (key_mask.view(B, 1, 1, Tk) != 0)
    return ok


def attention(q, k, v, key_mask, causal):
    """q (B,NH,Tq,HS), k and v (B,NH,Tk,HS) -> out, att. Hidden keys get
    weight 0; a row with no visible key gets zero weights."""
    B, _, Tq, HS = q.shape
    Tk = k.shape[2]
    ok = visible(B, Tq, Tk, causal, key_mask)
    scores = (q @ k.transpose(-1, -2)) / math.sqrt(HS)
    scores = scores.masked_fill(~ok, -math.inf)
    row_max = scores.amax(dim=-1, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max,
                          torch.zeros_like(row_max))
    e = torch.exp(scores - row_max)            # exp(-inf) = 0 when hidden
    total = e.sum(dim=-1, keepdim=True)
    att = e / torch.where(total > 0, total, torch.ones_like(total))
    return att @ v, att


def linear(x, w, b):
    y = x @ w.transpose(0, 1)
    return y if b is None else y + b


def split_heads(x, NH):
    B, T, C = x.shape
    return x.reshape(B, T, NH, C // NH).permute(0, 2, 1, 3)


def merge_heads(x):
    B, NH, T, HS = x.shape
    return x.permute(0, 2, 1, 3).reshape(B, T, NH * HS)


def mha(x, w_attn, b_attn, w_proj, b_proj, NH, key_mask, causal):
    C = x.shape[-1]
    qkv = linear(x, w_attn, b_attn)
    q, k, v = (split_heads(qkv[..., i * C:(i + 1) * C], NH) for i in range(3))
    yh, att = attention(q, k, v, key_mask, causal)
    return linear(merge_heads(yh), w_proj, b_proj), att


# ---- cross-checks against PyTorch's own code -------------------------------

def check_sdpa(q, k, v, key_mask, causal, out):
    B, _, Tq, _ = q.shape
    ok = visible(B, Tq, k.shape[2], causal, key_mask)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=ok)
    # PyTorch (>= 2.5) also gives a row with no visible key a zero output
    assert torch.allclose(ref, out, atol=1e-12), "SDPA disagrees"


def check_mha(x, w_attn, b_attn, w_proj, b_proj, NH, key_mask, causal, out):
    B, T, C = x.shape
    m = torch.nn.MultiheadAttention(C, NH, bias=b_attn is not None,
                                    batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        m.in_proj_weight.copy_(w_attn)       # the same (3C, C) layout
        m.out_proj.weight.copy_(w_proj)
        if b_attn is not None:
            m.in_proj_bias.copy_(b_attn)
            m.out_proj.bias.copy_(b_proj)
    hidden = torch.ones(T, T).triu(1).bool() if causal else None
    pad = None if key_mask is None else key_mask == 0
    ref, _ = m(x, x, x, attn_mask=hidden, key_padding_mask=pad,
               need_weights=False)
    assert torch.allclose(ref, out, atol=1e-12), "MultiheadAttention differs"


# ---- writing ---------------------------------------------------------------

def grads(out, inputs, w):
    """dL/d input for L = sum(out * w)."""
    return torch.autograd.grad((out * w).sum(), inputs)


# ---- the cases -------------------------------------------------------------

def attention_case(fx, name, B, NH, Tq, Tk, HS, causal, key_mask):
    q = randn(B, NH, Tq, HS).requires_grad_()
    k = randn(B, NH, Tk, HS).requires_grad_()
    v = randn(B, NH, Tk, HS).requires_grad_()
    out, att = attention(q, k, v, key_mask, causal)
    check_sdpa(q, k, v, key_mask, causal, out)
    w = randn(*out.shape)
    dq, dk, dv = grads(out, (q, k, v), w)
    fx.add(name + ".q", q)
    fx.add(name + ".k", k)
    fx.add(name + ".v", v)
    if key_mask is not None:
        fx.add(name + ".key_mask", key_mask)
    fx.add(name + ".out", out)
    fx.add(name + ".att", att)
    fx.add(name + ".w", w)
    fx.add(name + ".dq", dq)
    fx.add(name + ".dk", dk)
    fx.add(name + ".dv", dv)


def mha_case(fx, name, B, T, C, NH, bias, causal, key_mask):
    s = 1 / math.sqrt(C)
    x = randn(B, T, C).requires_grad_()
    params = [randn(3 * C, C, std=s), randn(3 * C, std=0.1) if bias else None,
              randn(C, C, std=s), randn(C, std=0.1) if bias else None]
    params = [p.requires_grad_() if p is not None else None for p in params]
    out, att = mha(x, *params, NH, key_mask, causal)
    check_mha(x, *params, NH, key_mask, causal, out)
    w = randn(B, T, C)
    wrt = [x] + [p for p in params if p is not None]
    g = grads(out, wrt, w)
    fx.add(name + ".x", x)
    names = ["c_attn.weight", "c_attn.bias", "c_proj.weight", "c_proj.bias"]
    for n, p in zip(names, params):
        if p is not None:
            fx.add(name + "." + n, p)
    if key_mask is not None:
        fx.add(name + ".key_mask", key_mask)
    fx.add(name + ".out", out)
    fx.add(name + ".att", att)
    fx.add(name + ".w", w)
    fx.add(name + ".dx", g[0])
    grad_names = [n for n, p in zip(names, params) if p is not None]
    for n, d in zip(grad_names, g[1:]):
        fx.add(name + ".d" + n, d)


def linear_case(fx, name, N, C_in, C_out, bias):
    x = randn(N, C_in).requires_grad_()
    wt = randn(C_out, C_in).requires_grad_()
    b = randn(C_out).requires_grad_() if bias else None
    out = linear(x, wt, b)
    assert torch.allclose(out, F.linear(x, wt, b), atol=1e-12)
    w = randn(N, C_out)
    g = grads(out, [x, wt] + ([b] if bias else []), w)
    fx.add(name + ".x", x)
    fx.add(name + ".weight", wt)
    if bias:
        fx.add(name + ".bias", b)
    fx.add(name + ".out", out)
    fx.add(name + ".w", w)
    fx.add(name + ".dx", g[0])
    fx.add(name + ".dweight", g[1])
    if bias:
        fx.add(name + ".dbias", g[2])


def self_attention_case(fx, name, T, C):
    """Exercise 2.6: one head, no bias, qkv = x @ w^T, with and without the
    causal mask."""
    x = randn(T, C)
    w = randn(3 * C, C, std=1 / math.sqrt(C))
    qkv = linear(x, w, None).view(1, T, 3 * C)
    q, k, v = (split_heads(qkv[..., i * C:(i + 1) * C], 1) for i in range(3))
    fx.add(name + ".x", x)
    fx.add(name + ".w_qkv", w)
    for causal, tag in ((True, "causal"), (False, "bidirectional")):
        out, _ = attention(q, k, v, None, causal)
        fx.add(name + ".out_" + tag, out.view(T, C))


def main():
    fx = Writer("ch2_attention.txt", "scaled dot-product attention: "
                "NAME.q/k/v -> NAME.out, NAME.att; gradients of "
                "L = sum(NAME.out * NAME.w)")
    attention_case(fx, "causal", 2, 2, 5, 5, 3, True, None)
    # left padding: in row 1 query 0 sees only key 0, which is padding
    pad = torch.tensor([[1, 1, 1, 0], [0, 1, 1, 1]], dtype=torch.float64)
    attention_case(fx, "padded", 2, 2, 4, 4, 4, True, pad)
    # an encoder over one real and one all-padding sequence
    pad = torch.tensor([[1, 1, 0], [0, 0, 0]], dtype=torch.float64)
    attention_case(fx, "encoder", 2, 1, 3, 3, 2, False, pad)
    # cross-attention: 3 queries, 5 keys, the last key padding
    pad = torch.tensor([[1, 1, 1, 1, 0]], dtype=torch.float64)
    attention_case(fx, "cross", 1, 2, 3, 5, 2, False, pad)
    # the last 2 queries of 6 positions (as with a KV cache)
    attention_case(fx, "tail", 1, 1, 2, 6, 4, True, None)
    fx.close()

    fx = Writer("ch2_linear.txt", "linear layer: NAME.x -> NAME.out; "
                "gradients of L = sum(NAME.out * NAME.w)")
    linear_case(fx, "bias", 5, 7, 3, True)
    linear_case(fx, "nobias", 4, 3, 6, False)
    fx.close()

    fx = Writer("ch2_mha.txt", "multi-head self-attention (nanoGPT "
                "layout): NAME.x -> NAME.out; gradients of "
                "L = sum(NAME.out * NAME.w)")
    mha_case(fx, "small", 2, 5, 6, 3, True, True, None)
    pad = torch.ones(2, 8, dtype=torch.float64)
    pad[1, 5:] = 0
    mha_case(fx, "padded", 2, 8, 16, 4, False, True, pad)
    mha_case(fx, "one", 1, 1, 4, 1, True, True, None)
    pad = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]], dtype=torch.float64)
    mha_case(fx, "encoder", 2, 4, 8, 2, True, False, pad)
    fx.close()

    fx = Writer("ch2_selfatt.txt", "exercise 2.6: single-head "
                "self-attention with and without the causal mask")
    self_attention_case(fx, "selfatt", 6, 4)
    fx.close()


if __name__ == "__main__":
    main()
