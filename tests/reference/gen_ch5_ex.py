#!/usr/bin/env python3
"""Writes the PyTorch reference fixture of the chapter 5 exercises,
tests/reference/ch5_ex.txt (format of tests/fixture.h).

    python3 tests/reference/gen_ch5_ex.py     # from the repository root

needs PyTorch; the build and the tests never do. Three cases:

  sin.*    the SinusoidalPositionalEncoding construction of the course
           notes ("Implementing a Transformer from scratch"; T 16, C 8),
           run in float64; asserted to agree with its own float32 run to
           1e-6.
  emb.*    a small model whose LM head is tied to its token embedding:
           x = wte[idx] + wpe[:T], h = layer_norm(x), logits = h @ wte^T,
           loss = cross-entropy. Autograd computes d loss / d wte through
           both uses; the file also holds what reaches the embedding (dx =
           d loss / d x), the head's input h and dlogits.
  rope.*   the course notes' apply_rope (interleaved pairs through
           torch.view_as_complex), in float64, on a (1, 2, 5, 8) tensor at
           positions 3 .. 7; asserted to differ from the half-split layout.
"""
import math

import torch
import torch.nn.functional as F

from fixture_writer import Writer, randn

torch.manual_seed(5)


def sinusoidal_seed(T, C, dtype):
    """The course notes' table, line for line, in the given dtype."""
    pe = torch.zeros(T, C, dtype=dtype)
    position = torch.arange(0, T, dtype=dtype).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, C, 2, dtype=dtype)
                         * -(math.log(10000.0) / C))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


def sin_case(fx, T, C):
    pe = sinusoidal_seed(T, C, torch.float64)
    pe32 = sinusoidal_seed(T, C, torch.float32).to(torch.float64)
    assert torch.allclose(pe, pe32, atol=1e-6, rtol=0), "float32 disagrees"
    fx.add("sin.pe", pe)


def emb_case(fx, B, T, C, V, block):
    idx = torch.tensor([[1, 4, 1], [0, 1, 5]])        # 1 repeats 3 times
    assert idx.shape == (B, T)
    targets = torch.tensor([[2, 0, 3], [1, 1, 4]])
    wte = randn(V, C).requires_grad_()
    wpe = randn(block, C, std=0.5).requires_grad_()
    x = wte[idx] + wpe[:T]                            # (B, T, C)
    x.retain_grad()
    h = F.layer_norm(x, (C,))                         # no affine: enough
    logits = h @ wte.t()                              # (B, T, V), tied
    logits.retain_grad()
    loss = F.cross_entropy(logits.view(-1, V), targets.view(-1))
    loss.backward()
    # the tied gradient is the head's part plus the lookup's part
    head = logits.grad.view(-1, V).t() @ h.detach().view(-1, C)
    lookup = torch.zeros(V, C, dtype=torch.float64)
    lookup.index_add_(0, idx.view(-1), x.grad.view(-1, C))
    assert torch.allclose(wte.grad, head + lookup, atol=1e-12)
    assert wpe.grad[T:].abs().max() == 0
    fx.add("emb.idx", idx)
    fx.add("emb.dx", x.grad)
    fx.add("emb.dlogits", logits.grad.view(B * T, V))
    fx.add("emb.h", h.view(B * T, C))
    fx.add("emb.dwte", wte.grad)
    fx.add("emb.dwpe", wpe.grad)


def apply_rope_seed(x, freqs):
    """The course notes' apply_rope, in float64 (complex128)."""
    x_complex = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
    x_rotated = x_complex * freqs.unsqueeze(0).unsqueeze(0)
    return torch.view_as_real(x_rotated).flatten(-2)


def rope_half_split(x, angles):
    """The other layout (GPT-NeoX): pairs (i, i + HS/2)."""
    a = torch.cat([angles, angles], dim=-1)
    h = x.shape[-1] // 2
    rotated = torch.cat([-x[..., h:], x[..., :h]], dim=-1)
    return x * torch.cos(a) + rotated * torch.sin(a)


def rope_case(fx, B, NH, T, HS, pos0):
    x = randn(B, NH, T, HS)
    inv_freq = 10000.0 ** (-torch.arange(0, HS, 2, dtype=torch.float64) / HS)
    pos = torch.arange(pos0, pos0 + T, dtype=torch.float64)
    angles = torch.outer(pos, inv_freq)                 # (T, HS/2)
    freqs = torch.polar(torch.ones_like(angles), angles)
    out = apply_rope_seed(x, freqs)
    assert not torch.allclose(out, rope_half_split(x, angles), atol=1e-3)
    fx.add("rope.x", x)
    fx.add("rope.out", out)


def main():
    fx = Writer("ch5_ex.txt", "chapter 5 exercises: sin.pe (16, 8) seed "
                "001's sinusoidal table; emb.* the tied embedding's "
                "gradients by autograd (B 2, T 3, C 4, V 6, block 5); "
                "rope.x -> rope.out (1, 2, 5, 8), positions 3..7")
    sin_case(fx, 16, 8)
    emb_case(fx, 2, 3, 4, 6, 5)
    rope_case(fx, 1, 2, 5, 8, 3)
    fx.close()


if __name__ == "__main__":
    main()
