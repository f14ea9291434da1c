#!/usr/bin/env python3
"""Writes the PyTorch reference of chapter 7's loss (smoothing.c).

    python3 tests/reference/gen_ch7_loss.py    # from the repository root

needs PyTorch; the build and the tests never do. For each case it draws
float32 logits and targets and computes, in float64,

    loss = F.cross_entropy(logits, targets, ignore_index=pad,
                           label_smoothing=eps)          # mean
    nll  = F.cross_entropy(logits, targets, ignore_index=pad)
    dlogits = d loss / d logits                          # autograd

into tests/reference/ch7_loss.txt as <case>.logits, .targets, .pad, .eps,
.n_valid, .loss, .nll and .dlogits. Before writing, it checks the claims
that chapters/ch7_encdec/smoothing.h makes about PyTorch:

  - the smoothed target puts 1 - eps + eps/V on the target and eps/V on
    every other class, the padding class included (ignore_index only
    drops the rows whose target is pad), so the gradient of a row that
    counts is (softmax - q) / n_valid, and 0 on a row that does not;
  - loss_row = (lse - z_y) + eps * (z_y - mean_j z_j);
  - the Annotated Transformer's KL form (eps/(V-2) on the classes that are
    neither the target nor pad, 0 on pad, summed over tokens) equals the
    cross-entropy against its own target minus that target's entropy;
  - with every row ignored, PyTorch's mean is nan (the C code returns 0).
"""
import math

import torch
import torch.nn.functional as F

from fixture_writer import Writer, randn

torch.manual_seed(7)

# name, N, V, pad, eps, targets (None: random, avoiding pad), logit std
CASES = [
    # eps = 0: the plain cross-entropy; two pad rows, a target next to pad
    ("plain", 6, 7, 0, 0.0, [3, 0, 1, 6, 0, 2], 2.0),
    # the usual eps; pad = 1 with targets 0 and 2 beside it
    ("smooth", 8, 11, 1, 0.1, [0, 1, 2, 10, 5, 1, 2, 7], 1.5),
    # logits of +-80: a naive exp overflows float32 (exp(89) does)
    ("large", 5, 6, 5, 0.1, [4, 5, 0, 4, 2], None),
    # chapter 5's convention pad = -1, no row ignored, more smoothing
    ("nopad", 4, 9, -1, 0.25, [8, 0, 4, 4], 1.0),
    # three classes: eps/V and eps/(V-1) are far apart
    ("tiny", 5, 3, 0, 0.1, [1, 2, 0, 2, 1], 1.0),
]


def f32(x):
    return float(torch.tensor(x, dtype=torch.float32))


def large_logits(N, V):
    sign = torch.randint(0, 2, (N, V)).to(torch.float64) * 2 - 1
    return sign * 80 + randn(N, V, std=0.5)


def smoothed_target(targets, V, pad, eps):
    q = torch.full((len(targets), V), eps / V, dtype=torch.float64)
    q[torch.arange(len(targets)), targets] += 1 - eps
    q[targets == pad] = 0
    return q


def annotated_kl(logits, targets, V, pad, eps):
    """The Annotated Transformer's LabelSmoothing: KLDivLoss(sum) against
    q' (1 - eps on y, eps/(V-2) elsewhere, 0 on pad and on pad rows)."""
    q = torch.full_like(logits, eps / (V - 2))
    q[torch.arange(len(targets)), targets] = 1 - eps
    q[:, pad] = 0
    q[targets == pad] = 0
    logp = F.log_softmax(logits, 1)
    return F.kl_div(logp, q, reduction="sum"), q, logp


def check_claims(name, logits, targets, V, pad, eps, loss, grad):
    keep = targets != pad
    n = int(keep.sum())
    p = logits.softmax(1)
    want = (p - smoothed_target(targets, V, pad, eps)) / n
    want[~keep] = 0
    assert torch.allclose(grad, want, atol=1e-15), "gradient is not p - q"
    lse = logits.logsumexp(1)
    zy = logits[torch.arange(len(targets)), targets.clamp(min=0)]
    rows = (lse - zy) + eps * (zy - logits.mean(1))
    assert abs(rows[keep].mean() - loss) < 1e-12, "loss formula"
    if 0 <= pad < V and eps > 0 and V > 2:
        kl, q2, logp = annotated_kl(logits, targets, V, pad, eps)
        ce2 = -(q2 * logp).sum()
        h = -(1 - eps) * math.log(1 - eps) - eps * math.log(eps / (V - 2))
        assert abs(kl - (ce2 - n * h)) < 1e-10, "KL = CE - H"
        print("  %s: KL form %.6f (sum), = CE' - n H; CE' / n = %.6f, "
              "ours %.6f" % (name, kl, ce2 / n, loss))


def main():
    out = Writer("ch7_loss.txt", "chapter 7: label-smoothed cross-entropy "
                 "(ignore_index=pad, mean), its NLL and its gradient")
    for name, N, V, pad, eps, tg, std in CASES:
        eps = f32(eps)           # the float the C code gets
        z = large_logits(N, V) if std is None else randn(N, V, std=std)
        z.requires_grad_()
        targets = torch.tensor(tg)
        loss = F.cross_entropy(z, targets, ignore_index=pad,
                               label_smoothing=eps)
        nll = F.cross_entropy(z, targets, ignore_index=pad)
        loss.backward()
        check_claims(name, z.detach(), targets, V, pad, eps, loss.item(),
                     z.grad)
        out.add(name + ".logits", z)
        out.add(name + ".targets", targets)
        out.add(name + ".pad", pad)
        out.add(name + ".eps", eps)
        out.add(name + ".n_valid", int((targets != pad).sum()))
        out.add(name + ".loss", loss)
        out.add(name + ".nll", nll)
        out.add(name + ".dlogits", z.grad)
    # every row ignored: 0 / 0 in PyTorch
    z = randn(3, 4)
    allpad = F.cross_entropy(z, torch.zeros(3, dtype=torch.long),
                             ignore_index=0, label_smoothing=0.1)
    assert math.isnan(float(allpad))
    print("  every row pad: PyTorch gives %s" % float(allpad))
    out.close()


if __name__ == "__main__":
    main()
