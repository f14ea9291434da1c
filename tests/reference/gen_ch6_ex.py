#!/usr/bin/env python3
"""Writes the PyTorch reference fixture of the chapter 6 exercises,
tests/reference/ch6_ex.txt (format of tests/fixture.h).

    python3 tests/reference/gen_ch6_ex.py     # from the repository root

needs PyTorch; the build and the tests never do. Everything runs in
float64 on float32 inputs (the values the C tests read back exactly).

  xent.*     F.cross_entropy(logits, targets, ignore_index=-1), the mean
             loss and its gradient by autograd: a (8, 11) case with two
             ignored rows, and a (4, 5) case with logits up to ~1000.
  adamw.*    torch.optim.AdamW(lr 1e-3, betas (0.9, 0.95), eps 1e-8) on
             one tensor of 12 parameters for 10 steps with given
             gradients (some as small as 1e-7, where eps matters):
             weight decay 0.1 (adamw.wd.*) and 0 (adamw.nowd.*). Written:
             the start, the gradients, the parameters after every step and
             the final moments exp_avg and exp_avg_sq.
  clip.*     torch.nn.utils.clip_grad_norm_ over three gradient tensors
             (shapes (4, 5), (7,), (3, 3)), flattened and concatenated in
             that order: the total norm and the clipped gradients, for
             max_norm 1 and for max_norm 0.5 on gradients 100 times larger.
"""
import math

import torch
import torch.nn.functional as F

from fixture_writer import Writer, randn

torch.manual_seed(6)


def xent_case(fx, name, logits, targets):
    logits = logits.clone().requires_grad_()
    loss = F.cross_entropy(logits, targets, ignore_index=-1)
    loss.backward()
    # the same by the definition, as a check of this script
    valid = targets != -1
    lse = torch.logsumexp(logits.detach(), dim=1)
    picked = logits.detach()[valid, targets[valid]]
    assert math.isclose(loss.item(), (lse[valid] - picked).mean().item(),
                        rel_tol=1e-12)
    assert logits.grad[~valid].abs().max() == 0
    fx.add(name + ".logits", logits)
    fx.add(name + ".targets", targets)
    fx.add(name + ".loss", loss)
    fx.add(name + ".dlogits", logits.grad)


def adamw_by_hand(p, grads, lr, wd, b1, b2, eps):
    """The update of ch6_exercises.h, in float64: the script's check."""
    m = torch.zeros_like(p)
    v = torch.zeros_like(p)
    p = p.clone()
    for t, g in enumerate(grads, start=1):
        p = p * (1 - lr * wd)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        denom = v.sqrt() / math.sqrt(1 - b2 ** t) + eps
        p = p - lr / (1 - b1 ** t) * m / denom
    return p


def adamw_case(fx, name, p0, grads, wd):
    lr, betas, eps = 1e-3, (0.9, 0.95), 1e-8
    p = p0.clone().requires_grad_()
    opt = torch.optim.AdamW([p], lr=lr, betas=betas, eps=eps,
                            weight_decay=wd)
    after = []
    for g in grads:
        p.grad = g.clone()
        opt.step()
        after.append(p.detach().clone())
    state = opt.state[p]
    hand = adamw_by_hand(p0, grads, lr, wd, *betas, eps)
    assert torch.allclose(after[-1], hand, rtol=0, atol=1e-15)
    fx.add(name + ".p0", p0)
    fx.add(name + ".grads", torch.stack(grads))
    fx.add(name + ".p", torch.stack(after))
    fx.add(name + ".m", state["exp_avg"])
    fx.add(name + ".v", state["exp_avg_sq"])


def clip_case(fx, name, grads, max_norm):
    params = [torch.zeros_like(g, requires_grad=True) for g in grads]
    for p, g in zip(params, grads):
        p.grad = g.clone()
    total = torch.nn.utils.clip_grad_norm_(params, max_norm)
    flat_in = torch.cat([g.flatten() for g in grads])
    assert math.isclose(total.item(), flat_in.norm().item(), rel_tol=1e-12)
    assert total.item() > max_norm                 # it does clip
    fx.add(name + ".g", flat_in)
    fx.add(name + ".max_norm", torch.tensor(max_norm))
    fx.add(name + ".norm", total)
    fx.add(name + ".clipped", torch.cat([p.grad.flatten() for p in params]))


def main():
    fx = Writer("ch6_ex.txt", "chapter 6 exercises: xent.* cross-entropy "
                "with ignore_index -1 and its autograd gradient; adamw.* "
                "torch.optim.AdamW, 10 steps on 12 parameters; clip.* "
                "clip_grad_norm_ over three tensors")
    # cross-entropy: ordinary logits, two rows ignored
    targets = torch.tensor([3, -1, 0, 10, 5, -1, 7, 3])
    xent_case(fx, "xent", randn(8, 11, std=2.0), targets)
    # huge logits: exp of them overflows even in float64 without the max
    big = randn(4, 5, std=300.0)
    big[0, 2], big[3, 1] = 1000.0, -1000.0
    xent_case(fx, "xent_big", big, torch.tensor([2, 1, -1, 4]))

    # AdamW: gradients of mixed sizes; elements 0 and 1 tiny (eps counts),
    # element 2 zero at every other step
    n, steps = 12, 10
    p0 = randn(n)
    scale = torch.ones(n, dtype=torch.float64)
    scale[0:2] = 1e-7
    scale[8:] = 10.0
    grads = []
    for s in range(steps):
        g = randn(n) * scale
        if s % 2 == 0:
            g[2] = 0.0
        grads.append(g.to(torch.float32).to(torch.float64))
    adamw_case(fx, "adamw.wd", p0, grads, 0.1)
    adamw_case(fx, "adamw.nowd", p0, grads, 0.0)

    shapes = [(4, 5), (7,), (3, 3)]
    clip_case(fx, "clip.one", [randn(*s) for s in shapes], 1.0)
    clip_case(fx, "clip.half", [randn(*s, std=100.0) for s in shapes], 0.5)
    fx.close()


if __name__ == "__main__":
    main()
