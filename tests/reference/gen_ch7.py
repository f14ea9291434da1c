#!/usr/bin/env python3
"""Writes the PyTorch reference fixtures of chapter 7 (the encoder-decoder
Transformer): for now one Pre-LN decoder layer with cross-attention.

    python3 tests/reference/gen_ch7.py        # from the repository root

needs PyTorch (pip install torch, or Debian's python3-torch); the build and
the tests never do: they read the small text file this script writes,
tests/reference/ch7_decoder.txt, in the format of tests/fixture.h.

Inputs are drawn in float32 (and written exactly, with %.9g); the reference
is computed from them in float64 by the module below, which spells the
layer out with plain tensor operations (no nn.MultiheadAttention), so that
its parameter names and layouts are the C code's (chapters/ch7_encdec/
decoder.h): Linear weights (out, in), self-attention's fused c_attn (3C, C),
cross-attention's q_proj (C, C) and fused kv_proj (2C, C), keys in rows
0..C-1 and values in C..2C-1. Its pieces are cross-checked against
PyTorch's own (nn.LayerNorm, F.scaled_dot_product_attention, F.relu,
F.gelu). Gradients come from autograd, of L = sum(out * w) with w a fixed
random tensor of out's shape.

The layer, Pre-LN, dropout 0:
    x = x + self_attn(ln_1(x))            causal, target key padding mask
    x = x + cross_attn(ln_2(x), memory)   source key padding mask
    x = x + mlp(ln_3(x))                  ReLU (the 2017 paper) or GELU
A query whose keys are all padding gets zero attention weights and a zero
output (the C code's rule, where PyTorch's softmax would give NaN).
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

from fixture_writer import Writer

torch.manual_seed(7)
LN_EPS = 1e-5
# attention(), Mlp and layernorm() check themselves against PyTorch's own
# ops on every call, in float64. Code that trains or decodes with these
# modules in float32 (mt_torch.py) sets CHECK = False: each then returns
# the PyTorch op it was checked against.
CHECK = True


def close(a, b):
    return torch.allclose(a, b, atol=1e-12, rtol=1e-12)


def sdpa(q, k, v, mask=None):
    """F.scaled_dot_product_attention (PyTorch 2.0 on), written out for
    older versions such as Debian's 1.13; mask: which keys each query may
    see (True: allowed), or None for all."""
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    att = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    if mask is not None:
        att = att.masked_fill(~mask, float("-inf"))
    return att.softmax(-1) @ v


def attention(q, k, v, allowed):
    """Scaled dot-product attention of (B, NH, Tq, HS) queries over
    (B, NH, Tk, HS) keys and values; allowed (B, 1 or NH, Tq, Tk) says
    which keys each query may see. A row with none allowed gets zeros."""
    HS = q.shape[-1]
    any_key = allowed.any(-1, keepdim=True)
    # a row with no key: softmax over every key (finite), then times 0
    mask = allowed | ~any_key
    if not CHECK:
        return sdpa(q, k, v, mask) * any_key
    att = (q @ k.transpose(-2, -1)) / math.sqrt(HS)
    att = att.masked_fill(~mask, float("-inf")).softmax(-1) * any_key
    out = att @ v
    if bool(any_key.all()):
        ref = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
        assert close(out, ref), "sdpa disagrees"
    return out


def heads(t, NH):
    B, T, C = t.shape
    return t.view(B, T, NH, C // NH).transpose(1, 2)


def merge(t):
    B, NH, T, HS = t.shape
    return t.transpose(1, 2).reshape(B, T, NH * HS)


class SelfAttention(nn.Module):
    """Fused-qkv self-attention over (B, T, C), keys limited by key_mask
    (B, T) and, when causal (the decoder's), to positions <= the query's;
    not causal it is the encoder's (tests/reference/gen_ch7_model.py)."""

    def __init__(self, C, NH, bias, causal=True):
        super().__init__()
        self.NH = NH
        self.causal = causal
        self.c_attn = nn.Linear(C, 3 * C, bias=bias, dtype=torch.float64)
        self.c_proj = nn.Linear(C, C, bias=bias, dtype=torch.float64)

    def forward(self, x, key_mask):
        B, T, C = x.shape
        q, k, v = [heads(t, self.NH) for t in self.c_attn(x).split(C, 2)]
        allowed = key_mask[:, None, None, :].expand(-1, 1, T, -1)
        if self.causal:
            allowed = allowed & torch.ones(T, T, dtype=torch.bool).tril()
        return self.c_proj(merge(attention(q, k, v, allowed)))


class CrossAttention(nn.Module):
    def __init__(self, C, NH, bias):
        super().__init__()
        self.NH = NH
        self.q_proj = nn.Linear(C, C, bias=bias, dtype=torch.float64)
        self.kv_proj = nn.Linear(C, 2 * C, bias=bias, dtype=torch.float64)
        self.out_proj = nn.Linear(C, C, bias=bias, dtype=torch.float64)

    def forward(self, x, memory, src_mask):
        C = x.shape[-1]
        q = heads(self.q_proj(x), self.NH)
        k, v = [heads(t, self.NH) for t in self.kv_proj(memory).split(C, 2)]
        allowed = src_mask[:, None, None, :].expand(-1, 1, x.shape[1], -1)
        return self.out_proj(merge(attention(q, k, v, allowed)))


class Mlp(nn.Module):
    def __init__(self, C, Fh, bias, act):
        super().__init__()
        self.act = act
        self.c_fc = nn.Linear(C, Fh, bias=bias, dtype=torch.float64)
        self.c_proj = nn.Linear(Fh, C, bias=bias, dtype=torch.float64)

    def forward(self, x):
        h = self.c_fc(x)
        if not CHECK:
            return self.c_proj(F.relu(h) if self.act == "relu"
                               else F.gelu(h))
        if self.act == "relu":
            a = torch.where(h > 0, h, torch.zeros_like(h))
            assert close(a, F.relu(h)), "relu disagrees"
        else:
            a = 0.5 * h * (1 + torch.erf(h / math.sqrt(2)))
            assert close(a, F.gelu(h)), "gelu disagrees"
        return self.c_proj(a)


def layernorm(x, ln):
    if not CHECK:
        return ln(x)
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)      # biased
    y = (x - mean) / torch.sqrt(var + LN_EPS) * ln.weight
    y = y if ln.bias is None else y + ln.bias
    assert close(y, ln(x)), "nn.LayerNorm disagrees"
    return y


def layer_norm(C, bias):
    """nn.LayerNorm, without its bias when bias is False. (LayerNorm's own
    bias= argument is PyTorch 2.1's; this also runs on Debian's 1.13.)"""
    ln = nn.LayerNorm(C, eps=LN_EPS, dtype=torch.float64)
    if not bias:
        ln.register_parameter("bias", None)
    return ln


class DecoderLayer(nn.Module):
    def __init__(self, C, NH, Fh, bias, act):
        super().__init__()
        self.ln_1, self.ln_2, self.ln_3 = (layer_norm(C, bias)
                                           for _ in range(3))
        self.self_attn = SelfAttention(C, NH, bias)
        self.cross_attn = CrossAttention(C, NH, bias)
        self.mlp = Mlp(C, Fh, bias, act)

    def forward(self, x, memory, tgt_mask, src_mask):
        x = x + self.self_attn(layernorm(x, self.ln_1), tgt_mask)
        x = x + self.cross_attn(layernorm(x, self.ln_2), memory, src_mask)
        return x + self.mlp(layernorm(x, self.ln_3))


def randn(*shape, std=1.0, mean=0.0):
    """float32 draws, returned as float64 (exactly the values written)."""
    t = torch.randn(*shape) * std + mean
    return t.to(torch.float32).to(torch.float64)


def init(layer):
    """LayerNorm weights 1 + N(0, 0.2^2), biases N(0, 0.1^2), matrices
    N(0, 1/fan_in), all float32 values."""
    with torch.no_grad():
        for name, p in layer.named_parameters():
            if p.dim() == 2:
                p.copy_(randn(*p.shape, std=1 / math.sqrt(p.shape[1])))
            elif name.startswith("ln_") and name.endswith(".weight"):
                p.copy_(randn(*p.shape, std=0.2, mean=1.0))
            else:
                p.copy_(randn(*p.shape, std=0.1))


def decoder_case(fx, name, B, T, Tk, C, NH, Fh, bias, act, tgt, src):
    layer = DecoderLayer(C, NH, Fh, bias, act)
    init(layer)
    x = randn(B, T, C).requires_grad_()
    memory = randn(B, Tk, C).requires_grad_()
    tgt_mask = torch.tensor(tgt, dtype=torch.bool).view(B, T)
    src_mask = torch.tensor(src, dtype=torch.bool).view(B, Tk)
    out = layer(x, memory, tgt_mask, src_mask)
    lw = randn(B, T, C)
    params = list(layer.named_parameters())
    g = torch.autograd.grad((out * lw).sum(),
                            [x, memory] + [p for _, p in params])
    fx.add(name + ".x", x)
    fx.add(name + ".memory", memory)
    fx.add(name + ".tgt_mask", tgt_mask)
    fx.add(name + ".src_mask", src_mask)
    for n, p in params:
        fx.add(name + "." + n, p)
    fx.add(name + ".out", out)
    fx.add(name + ".w", lw)
    fx.add(name + ".dx", g[0])
    fx.add(name + ".dmemory", g[1])
    for (n, _), d in zip(params, g[2:]):
        fx.add(name + ".d." + n, d)


def main():
    fx = Writer("ch7_decoder.txt", "Pre-LN decoder layers (self-attention "
                "causal with target padding, cross-attention with source "
                "padding, FFN; dropout 0): NAME.x, NAME.memory -> NAME.out; "
                "NAME.dx, NAME.dmemory, NAME.d.<param> = gradients of L = "
                "sum(NAME.out * NAME.w)")
    # ReLU, biases; sequence 1 has target and source padding
    decoder_case(fx, "relu", 2, 4, 5, 8, 2, 20, True, "relu",
                 [1, 1, 1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1, 1, 0, 0, 0])
    # GELU, no biases, three heads, Tk > T; sequence 1's source is all
    # padding (its cross-attention adds exactly 0)
    decoder_case(fx, "gelu_nobias", 2, 3, 6, 6, 3, 12, False, "gelu",
                 [1, 1, 0, 1, 1, 1], [1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0])
    fx.close()


if __name__ == "__main__":
    main()
