#!/usr/bin/env python3
"""Writes the PyTorch reference of chapter 9's model side: tiny GPT-2s in
Hugging Face's two file layouts, and what transformers computes with them.

    python3 tests/reference/gen_ch9.py        # from the repository root

needs PyTorch, transformers and safetensors (written with torch 2.15,
transformers 5.24, safetensors 0.8); the build and the tests never do.
It builds a GPT2LMHeadModel of the config below (GPT-2's own code, tanh
GELU "gelu_new", no dropout) with random float32 weights: biases and
LayerNorm weights random too, so that a gradient that ignored one of them
would show. It writes, under tests/reference/ch9_model/:

  pretrained/   what model.save_pretrained(DIR) writes (config.json,
                model.safetensors: names under "transformer.", Conv1D
                weights (in, out), no lm_head.weight, no mask buffers);
                its generation_config.json is left out (nothing reads it)
  hub/          the same weights laid out as the Hub's GPT-2 file: names
                without the prefix, each layer's mask buffers attn.bias
                (1, 1, n_positions, n_positions) and attn.masked_bias (a
                scalar), and a config.json in the style of the Hub's
                (n_ctx, no n_inner, no tie_word_embeddings)
  reference.txt (a '# fixture v1' file, tests/fixture.h)
      idx, targets (B, T): a batch, targets -1 where ignored (PyTorch's
          -100 in the computation);
      logits (B, T, V) and loss: the model in float64 on that batch, the
          loss the mean cross-entropy of logits[b, t] against
          targets[b, t] (no shift: chapter 5's convention);
      grad.<name> for every tensor under chapter 5's name and in its
          layout (Conv1D weights transposed to (out, in));
      train.x, train.y (STEPS, B, n_positions), train.loss, train.norm,
          train.lr
          (STEPS,), train.param.<name>: STEPS steps of torch.optim.AdamW
          in float64 as chapter 6 takes them (weight decay on the 2-D
          weights only, gradient clipping, nanoGPT's warmup + cosine),
          the settings of gen_ch6.py, and every parameter after them.

The weights are float32 (the files); every reference number is computed
in float64 from them.
"""
import json
import math
import os
import shutil

import torch
import torch.nn.functional as F
from safetensors.torch import save_file
from transformers import GPT2Config, GPT2LMHeadModel

from fixture_writer import HERE, Writer
# chapter 6's training settings and schedule
from gen_ch6 import BETAS, CLIP, EPS, LR, STEPS, WD, lr_at

torch.manual_seed(9)
V, P, C, L, NH = 61, 16, 16, 2, 2     # vocab, n_positions, n_embd, ...
B, T = 2, 8
OUT = os.path.join(HERE, "ch9_model")
CONV1D = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight",
          "mlp.c_proj.weight")


def config():
    # <|endoftext|> is GPT-2's last id: here V - 1
    return GPT2Config(vocab_size=V, n_positions=P, n_embd=C, n_layer=L,
                      n_head=NH, activation_function="gelu_new",
                      resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                      bos_token_id=V - 1, eos_token_id=V - 1)


def random_weights(model):
    """Every parameter random, in float32; LayerNorm weights near 1."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if ".ln_" in name and name.endswith(".weight"):
                t = 1 + 0.2 * torch.randn(p.shape)
            elif name.endswith(".bias"):
                t = 0.1 * torch.randn(p.shape)
            elif name in ("transformer.wte.weight", "transformer.wpe.weight"):
                t = 0.5 * torch.randn(p.shape)
            else:   # Conv1D (in, out): scaled by the fan-in
                t = torch.randn(p.shape) / math.sqrt(p.shape[0])
            p.copy_(t.to(torch.float32))


def ours(name, t):
    """An HF tensor under chapter 5's layout: Conv1D weights transposed."""
    if name.endswith(CONV1D):
        return t.transpose(0, 1)
    return t


def save_pretrained(model):
    d = os.path.join(OUT, "pretrained")
    shutil.rmtree(d, ignore_errors=True)
    model.save_pretrained(d)
    gen = os.path.join(d, "generation_config.json")
    if os.path.exists(gen):
        os.remove(gen)
    os.chmod(os.path.join(d, "model.safetensors"), 0o644)


def save_hub(model):
    """The Hub's layout: no prefix, the mask buffers, the Hub's config."""
    d = os.path.join(OUT, "hub")
    os.makedirs(d, exist_ok=True)
    tensors = {}
    for name, t in model.state_dict().items():
        if name == "lm_head.weight":
            continue
        tensors[name[len("transformer."):]] = t.detach().clone().contiguous()
    mask = torch.tril(torch.ones(P, P)).view(1, 1, P, P)
    for i in range(L):
        tensors["h.%d.attn.bias" % i] = mask.clone()
        tensors["h.%d.attn.masked_bias" % i] = torch.tensor(-1e4)
    save_file(tensors, os.path.join(d, "model.safetensors"),
              metadata={"format": "pt"})
    os.chmod(os.path.join(d, "model.safetensors"), 0o644)
    hub = {"activation_function": "gelu_new",
           "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.0,
           "bos_token_id": V - 1, "embd_pdrop": 0.0, "eos_token_id": V - 1,
           "initializer_range": 0.02, "layer_norm_epsilon": 1e-05,
           "model_type": "gpt2", "n_ctx": P, "n_embd": C, "n_head": NH,
           "n_layer": L, "n_positions": P, "resid_pdrop": 0.0,
           "summary_activation": None, "summary_first_dropout": 0.1,
           "summary_proj_to_labels": True, "summary_type": "cls_index",
           "summary_use_proj": True,
           "task_specific_params": {"text-generation": {
               "do_sample": True, "max_length": 50}},
           "vocab_size": V}
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(hub, f, indent=2, sort_keys=True)
        f.write("\n")


def loss_of(model, idx, targets):
    logits = model(idx).logits
    loss = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1),
                           ignore_index=-100)
    return logits, loss


def as_ours(targets):
    """PyTorch's ignore index -100 as chapter 5's -1."""
    return torch.where(targets == -100, torch.full_like(targets, -1),
                       targets)


def train(model, out):
    params = list(model.parameters())   # lm_head.weight is wte: once
    decay = [p for p in params if p.dim() == 2]
    other = [p for p in params if p.dim() != 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": WD},
                             {"params": other, "weight_decay": 0.0}],
                            lr=LR, betas=BETAS, eps=EPS, foreach=False)
    # chapter 6 trains on windows of block_size: here n_positions
    xs = torch.randint(V, (STEPS, B, P))
    ys = torch.randint(V, (STEPS, B, P))
    ys[:, 0, 2] = -100
    losses, norms, lrs = [], [], []
    for it in range(STEPS):
        for g in opt.param_groups:
            g["lr"] = lr_at(it)
        opt.zero_grad()
        _, loss = loss_of(model, xs[it], ys[it])
        loss.backward()
        norms.append(torch.nn.utils.clip_grad_norm_(params, CLIP).item())
        opt.step()
        losses.append(loss.item())
        lrs.append(lr_at(it))
    print("losses", ["%.4f" % x for x in losses])
    print("norms ", ["%.3f" % x for x in norms])
    out.add("train.x", xs)
    out.add("train.y", as_ours(ys))
    out.add("train.loss", torch.tensor(losses))
    out.add("train.norm", torch.tensor(norms))
    out.add("train.lr", torch.tensor(lrs))
    for name, p in model.named_parameters():
        out.add("train.param." + name, ours(name, p.detach()))


def main():
    cfg = config()
    cfg._attn_implementation = "eager"
    model = GPT2LMHeadModel(cfg)
    random_weights(model)
    model.eval()
    save_pretrained(model)
    save_hub(model)

    model = model.double()
    out = Writer(os.path.join("ch9_model", "reference.txt"),
                 "chapter 9: a GPT2LMHeadModel (V=%d, n_positions=%d, "
                 "n_embd=%d, n_layer=%d, n_head=%d, gelu_new) in float64: "
                 "logits, loss, gradients, %d AdamW steps" % (
                     V, P, C, L, NH, STEPS))
    idx = torch.randint(V, (B, T))
    targets = torch.randint(V, (B, T))
    targets[0, 1] = -100            # ignored positions
    targets[1, T - 1] = -100
    logits, loss = loss_of(model, idx, targets)
    loss.backward()
    out.add("idx", idx)
    out.add("targets", as_ours(targets))
    out.add("logits", logits)
    out.add("loss", loss)
    for name, p in model.named_parameters():
        out.add("grad." + name, ours(name, p.grad))
    model.zero_grad()
    train(model, out)
    out.close()


if __name__ == "__main__":
    main()
