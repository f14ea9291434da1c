#!/usr/bin/env python3
"""Trains chapter 7's German to English model with PyTorch, on the CPU,
with ./ch7 --task translate's model and recipe: the PyTorch side of
tests/bench/bench_mt.py.

    ./ch7 --task translate --save run.safetensors   # C, and its tokenizer
    python3 tests/reference/translate_torch.py --tokenizer-from \\
        run.safetensors                             # the same in PyTorch
    python3 tests/reference/translate_torch.py --help

Needs PyTorch (and sacrebleu==2.6.0 for the BLEU at the end); the build
and the tests never do. The tokenizer is not learnt here: it is read
from a ./ch7 checkpoint (any one trained on the same corpus with the same
--merges), and encodes as bpe.c does (mt_torch.py). The rest follows
mt.c:

- batches as pairs.c: pairs sorted by length, cut at --batch-tokens
  source + target ids with padding, visited in a new shuffled order each
  epoch (a torch.randperm, not the C program's order);
- the model of gen_ch7_model.py in float32 (mt_torch.Model): tied
  embeddings, biases, ReLU, dropout after the embeddings and each
  sub-layer; Xavier-uniform matrices (the embedding too), biases 0,
  LayerNorm weights 1, as seq2seq_init;
- label-smoothed cross-entropy over the non-pad targets; AdamW with betas
  (0.9, 0.98), eps 1e-9, weight decay 0.01 on the 2-D tensors only;
  gradients clipped to norm 1; the learning rate of chapter 6's
  lr_schedule: linear warmup, then a cosine to lr / 10 at the last step.

It prints a progress line every --print-every steps, then

  trained     N steps in S s: X tokens/s (source + target),
              Y target tokens/s

with the same counts as ./ch7 (the real source ids and the non-pad
targets, <eos> included; the steps' time only), and the greedy BLEU of
the test set.
"""
import argparse
import math
import time

import torch

import gen_ch7_model as ref
import mt_torch as mt


def lr_schedule(it, warmup, decay_steps, lr_max, lr_min):
    """Chapter 6's optim.c: the learning rate of step it (0-based)."""
    if it < warmup:
        return lr_max * (it + 1) / (warmup + 1)
    if it > decay_steps:
        return lr_min
    ratio = (it - warmup) / (decay_steps - warmup) \
        if decay_steps > warmup else 1.0
    coeff = 0.5 * (1.0 + math.cos(math.pi * ratio))   # 1 -> 0
    return lr_min + coeff * (lr_max - lr_min)


def init(model):
    """seq2seq_init: Xavier-uniform for every matrix, biases 0, LayerNorm
    weights 1."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 2:
                torch.nn.init.xavier_uniform_(p)
            else:
                p.fill_(0.0 if name.endswith(".bias") else 1.0)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.
                                ArgumentDefaultsHelpFormatter)
    p.add_argument("--tokenizer-from", required=True, metavar="CKPT",
                   help="a ./ch7 --task translate checkpoint: its BPE")
    p.add_argument("--data", default="data/multi30k")
    p.add_argument("--src", default="de")
    p.add_argument("--tgt", default="en")
    p.add_argument("--max-len", type=int, default=100,
                   help="longer training pairs are left out")
    p.add_argument("--embd", type=int, default=128)
    p.add_argument("--layers", type=int, default=3,
                   help="encoder layers, and as many decoder layers")
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--ffn", type=int, default=512)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--smoothing", type=float, default=0.1)
    p.add_argument("--batch-tokens", type=int, default=4000)
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--steps", type=int, default=0,
                   help="0: --epochs' worth")
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--warmup", type=int, default=400)
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--threads", type=int, default=2,
                   help="torch.set_num_threads")
    p.add_argument("--print-every", type=int, default=50)
    return p.parse_args()


def main():
    a = parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    print("== Chapter 7 in PyTorch %s, %d threads ==\n"
          % (torch.__version__, torch.get_num_threads()))

    bpe = mt.tokenizer_of(a.tokenizer_from)
    print("tokenizer   from %s: %d tokens" % (a.tokenizer_from,
                                              bpe.vocab_size))
    train = mt.read_pairs(bpe, a.data, "train", a.src, a.tgt, a.max_len,
                          True)
    test = mt.read_pairs(bpe, a.data, "test_2016_flickr", a.src, a.tgt,
                         a.max_len, False)
    batches = mt.make_batches(train, a.batch_tokens)
    real = sum(len(s) + len(y) + 1 for s, y in train)
    slots = sum(s.numel() + t.numel() for s, t, _ in batches)
    print("batches     %d of at most %d tokens an epoch, %.1f%% of them "
          "padding" % (len(batches), a.batch_tokens,
                       100 * (1 - real / slots)))
    steps = a.steps or a.epochs * len(batches)
    min_lr = a.lr / 10

    model = mt.Model(mt.config(bpe.vocab_size, a.max_len + 1, a.embd,
                               a.layers, a.heads, a.ffn), a.dropout)
    init(model)
    params = list(model.parameters())   # the tied matrix once
    print("model       d_model %d, %d + %d layers, %d heads, FFN %d, tied "
          "embeddings: %d parameters" % (a.embd, a.layers, a.layers,
                                         a.heads, a.ffn,
                                         sum(p.numel() for p in params)))
    print("training    %d steps (%.1f epochs), lr %g -> %g (warmup %d, "
          "cosine), label smoothing %g, dropout %g\n"
          % (steps, steps / len(batches), a.lr, min_lr, a.warmup,
             a.smoothing, a.dropout))
    opt = torch.optim.AdamW(
        [{"params": [p for p in params if p.dim() == 2],
          "weight_decay": 0.01},
         {"params": [p for p in params if p.dim() != 2],
          "weight_decay": 0.0}], lr=a.lr, betas=(0.9, 0.98), eps=1e-9)

    gen = torch.Generator().manual_seed(a.seed)
    order, train_time, tokens, targets = [], 0.0, 0, 0
    model.train()
    for step in range(steps):
        if step % len(batches) == 0:   # a new epoch, a new order
            order = torch.randperm(len(batches), generator=gen).tolist()
        src, tgt_in, tgt_out = batches[order[step % len(batches)]]
        t0 = time.perf_counter()
        lr = lr_schedule(step, a.warmup, steps, a.lr, min_lr)
        for g in opt.param_groups:
            g["lr"] = lr
        loss = ref.loss_of(model(src, tgt_in), tgt_out, mt.PAD, a.smoothing)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        loss = loss.item()
        dt = time.perf_counter() - t0
        n_tgt = int((tgt_out != mt.PAD).sum())
        n = int((src != mt.PAD).sum()) + n_tgt
        train_time += dt
        tokens += n
        targets += n_tgt
        if step == 0 or (step + 1) % a.print_every == 0 or step + 1 == steps:
            print("step %d/%d  loss %.4f  lr %.1e  %.0f tok/s"
                  % (step + 1, steps, loss, lr, n / dt), flush=True)
    print("\ntrained     %d steps in %.1f s: %.0f tokens/s (source + "
          "target),\n            %.0f target tokens/s"
          % (steps, train_time, tokens / train_time, targets / train_time))

    model.eval()
    t0 = time.perf_counter()
    hyps = mt.translate(model, [s for s, _ in test], 100, mt.Cached)
    secs = time.perf_counter() - t0
    hyps = [bpe.decode(h) for h in hyps]
    refs = [bpe.decode(y) for _, y in test]   # as mt.c: through the BPE
    score = mt.bleu(hyps, refs)
    print("\ntest set (%d sentences):" % len(test))
    print("  greedy   %s" % (score or "BLEU: pip install sacrebleu==2.6.0"))
    print("           %.1f sentences/s" % (len(test) / secs))


if __name__ == "__main__":
    main()
