#!/usr/bin/env python3
"""Writes the PyTorch reference fixture of the chapter 7 exercises,
tests/reference/ch7_ex.txt (format of tests/fixture.h).

    python3 tests/reference/gen_ch7_ex.py     # from the repository root

needs PyTorch; the build and the tests never do. The cross-attention is
gen_ch7.py's module (plain tensor operations in float64 on float32
inputs, its pieces checked there against F.scaled_dot_product_attention),
weights drawn as gen_ch7.py draws them: matrices N(0, 1/fan_in), biases
N(0, 0.1^2).

  xa.*        B 2, Tq 3, Tk 5, C 8, 2 heads, biases; sentence 0's source
              has 2 pads at its end, sentence 1's none.
  xa_empty.*  B 2, Tq 4, Tk 3, C 6, 3 heads, no bias; sentence 0's source
              has one real token, sentence 1's is all padding (its output
              is exactly 0).
Each case: NAME.x (B, Tq, C), NAME.memory (B, Tk, C), NAME.src_mask
(B, Tk), NAME.q_proj.weight ... NAME.out_proj.bias, NAME.out (B, Tq, C).
"""
import torch

from fixture_writer import Writer
from gen_ch7 import CrossAttention, init, randn


def xattn_case(fx, name, B, Tq, Tk, C, NH, bias, src):
    layer = CrossAttention(C, NH, bias)
    init(layer)
    x = randn(B, Tq, C)
    memory = randn(B, Tk, C)
    src_mask = torch.tensor(src, dtype=torch.bool).view(B, Tk)
    with torch.no_grad():
        out = layer(x, memory, src_mask)
    assert torch.isfinite(out).all()
    fx.add(name + ".x", x)
    fx.add(name + ".memory", memory)
    fx.add(name + ".src_mask", src_mask)
    for n, p in layer.named_parameters():
        fx.add(name + "." + n, p)
    fx.add(name + ".out", out)


def main():
    torch.manual_seed(77)
    fx = Writer("ch7_ex.txt", "cross-attention (queries x, keys and values "
                "from memory, source key padding mask): NAME.x, NAME.memory "
                "-> NAME.out")
    xattn_case(fx, "xa", 2, 3, 5, 8, 2, True,
               [1, 1, 1, 0, 0, 1, 1, 1, 1, 1])
    xattn_case(fx, "xa_empty", 2, 4, 3, 6, 3, False, [1, 0, 0, 0, 0, 0])
    fx.close()


if __name__ == "__main__":
    main()
