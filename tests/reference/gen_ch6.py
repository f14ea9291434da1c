#!/usr/bin/env python3
"""Writes the PyTorch reference of chapter 6: ten training steps.

    python3 tests/reference/gen_ch6.py        # from the repository root

needs PyTorch and safetensors (the tests do not). Starting from the
weights of tests/reference/ch5_bias.safetensors (written by gen_ch5.py),
the model of gen_ch5.py takes ten steps in float64 with PyTorch's own
torch.optim.AdamW (weight decay on the 2-D weights only, as nanoGPT),
torch.nn.utils.clip_grad_norm_ and nanoGPT's warmup + cosine schedule, on
random batches recorded in the fixture:

    tests/reference/ch6_train.txt    x, y (10, B, T), per step the loss,
                                     the gradient norm before clipping and
                                     the learning rate, and every parameter
                                     after the tenth step
"""
import math
import os

import torch
from safetensors.torch import load_file

from fixture_writer import HERE, Writer
import gen_ch5

torch.manual_seed(6)
STEPS, B = 10, 3
LR, MIN_LR, WARMUP, DECAY = 1e-2, 1e-3, 3, 8
BETAS, EPS, WD, CLIP = (0.9, 0.95), 1e-8, 0.1, 3.0   # clips steps 1-5 only


def lr_at(it):
    if it < WARMUP:
        return LR * (it + 1) / (WARMUP + 1)
    if it > DECAY:
        return MIN_LR
    ratio = (it - WARMUP) / (DECAY - WARMUP)
    return MIN_LR + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (LR - MIN_LR)


def main():
    cfg = gen_ch5.CFG
    V, T, L, NH = (cfg["vocab_size"], cfg["block_size"], cfg["n_layer"],
                   cfg["n_head"])
    w = load_file(os.path.join(HERE, "ch5_bias.safetensors"))
    names = gen_ch5.state_names(True, True, L)
    p = {n: w[n].to(torch.float64).requires_grad_() for n in names}
    decay = [p[n] for n in names if p[n].dim() == 2]
    other = [p[n] for n in names if p[n].dim() != 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": WD},
                             {"params": other, "weight_decay": 0.0}],
                            lr=LR, betas=BETAS, eps=EPS, foreach=False)
    xs = torch.randint(V, (STEPS, B, T))
    ys = torch.randint(V, (STEPS, B, T))
    losses, norms, lrs = [], [], []
    for it in range(STEPS):
        lr = lr_at(it)
        for g in opt.param_groups:
            g["lr"] = lr
        opt.zero_grad()
        _, loss = gen_ch5.gpt(p, xs[it], ys[it], True, L, NH)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(list(p.values()), CLIP)
        opt.step()
        losses.append(loss.item())
        norms.append(norm.item())
        lrs.append(lr)
    print("losses", ["%.4f" % x for x in losses])
    print("norms ", ["%.3f" % x for x in norms])
    out = Writer("ch6_train.txt", "chapter 6: %d AdamW steps from "
                 "ch5_bias.safetensors (B=%d, lr %g -> %g, warmup %d, "
                 "decay %d, betas %s, wd %g, clip %g)" % (
                     STEPS, B, LR, MIN_LR, WARMUP, DECAY, BETAS, WD, CLIP))
    out.add("x", xs)
    out.add("y", ys)
    out.add("loss", torch.tensor(losses))
    out.add("norm", torch.tensor(norms))
    out.add("lr", torch.tensor(lrs))
    for n in names:
        out.add("param." + n, p[n].detach())
    out.close()


if __name__ == "__main__":
    main()
