#!/usr/bin/env python3
"""Writes the PyTorch reference of chapter 7's whole model (seq2seq.h): the
encoder-decoder Transformer, its label-smoothed loss, every gradient, and
ten AdamW steps.

    python3 tests/reference/gen_ch7_model.py   # from the repository root

needs PyTorch; the build and the tests never do. The model, in float64,
Pre-LN, dropout 0, written with the decoder layer of gen_ch7.py (imported,
not copied) and an encoder layer with chapter 4's block names:

    src (B, S) -> src_embed[src] * sqrt(C) + pe[:S]
               -> encoder.layers.{l}: x = x + attn(ln_1(x))   not causal
                                      x = x + mlp(ln_2(x))
               -> encoder.norm                                 = memory
    tgt_in (B, T) -> tgt_embed[tgt_in] * sqrt(C) + pe[:T]
               -> decoder.layers.{l} (gen_ch7.DecoderLayer)
               -> decoder.norm -> generator (Linear, no bias)  = logits
    loss = F.cross_entropy(logits.view(-1, V), tgt_out.view(-1),
                           ignore_index=pad, label_smoothing=eps)

pe is the sinusoid of chapter 5's positional.c, sin and cos interleaved:
pe[t][2i] = sin(t w_i), pe[t][2i+1] = cos(t w_i), w_i = 10000^(-2i/C).
The masks come from the pad id: src != pad limits the keys of the
encoder's self-attention and of every cross-attention; tgt_in != pad and
causality those of the decoder's self-attention. With tie, src_embed,
tgt_embed and generator are one (V, C) tensor (three state_dict names,
one parameter; its gradient is the sum of the three uses).

For each case of CASES, into tests/reference/ch7_model.txt:

    <case>.config      Vs Vt max_len Le Ld NH C F bias tie act pad
                       (act: 0 ReLU, 1 exact GELU)
    <case>.eps         the label smoothing (a float32 value)
    <case>.src (B, S), <case>.tgt_in (B, T), <case>.tgt_out (B, T)
    <case>.param.<name>   every state_dict tensor, in state_dict order:
                          src_embed.weight, tgt_embed.weight,
                          encoder.layers.{l}.*, encoder.norm.*,
                          decoder.layers.{l}.*, decoder.norm.*,
                          generator.weight (the tied three are equal)
    <case>.logits (B, T, Vt), <case>.loss, <case>.nll (eps = 0)
    <case>.grad.<name>    d loss / d parameter, the same names and order
    <case>.train.loss (10,)   the loss before each of ten AdamW steps on
                              the same batch (torch.optim.AdamW, lr 1e-2
                              constant, betas (0.9, 0.95), eps 1e-8,
                              weight decay 0.1 on the 2-D tensors only,
                              no clipping)
    <case>.train.param.<name> every parameter after the tenth step

Parameters are drawn in float32 and written exactly (%.9g). The reference
module is checked against PyTorch's own nn.TransformerEncoderLayer and
nn.TransformerDecoderLayer (norm_first=True) before anything is written.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

import gen_ch7
from fixture_writer import Writer
from gen_ch7 import (LN_EPS, DecoderLayer, Mlp, SelfAttention, layer_norm,
                     layernorm)

STEPS, LR, BETAS, ADAM_EPS, WD = 10, 1e-2, (0.9, 0.95), 1e-8, 0.1

# name: the config (seq2seq.h's fields) and the batch. Every batch has
# padding in source and target, S != T, and one sentence without padding.
CASES = [
    # tied, biases, ReLU (the paper's model), pad 0, S > T
    dict(name="tied", Vs=11, Vt=11, max_len=9, Le=2, Ld=2, NH=3, C=12,
         F=20, bias=True, tie=True, act="relu", pad=0, bos=1, eos=2,
         src_len=[7, 4, 5], tgt_len=[4, 2, 1], S=7, T=5),
    # three tensors, no biases, GELU, pad 3 (not 0), Vs != Vt, T > S,
    # two heads of five
    dict(name="untied", Vs=13, Vt=9, max_len=8, Le=1, Ld=2, NH=2, C=10,
         F=14, bias=False, tie=False, act="gelu", pad=3, bos=0, eos=1,
         src_len=[3, 4], tgt_len=[5, 2], S=4, T=6),
]
EPS = float(torch.tensor(0.1, dtype=torch.float32))   # the C code's float


def sinusoid(T, C):
    """Chapter 5's table, written from its definition."""
    pe = torch.zeros(T, C, dtype=torch.float64)
    for t in range(T):
        for c in range(0, C, 2):
            w = 10000.0 ** (-c / C)
            pe[t, c] = math.sin(t * w)
            if c + 1 < C:
                pe[t, c + 1] = math.cos(t * w)
    return pe


class EncoderLayer(nn.Module):
    """Chapter 4's Pre-LN block, not causal, with a key padding mask."""

    def __init__(self, C, NH, Fh, bias, act):
        super().__init__()
        self.ln_1 = layer_norm(C, bias)
        self.attn = SelfAttention(C, NH, bias, causal=False)
        self.ln_2 = layer_norm(C, bias)
        self.mlp = Mlp(C, Fh, bias, act)

    def forward(self, x, src_mask):
        x = x + self.attn(layernorm(x, self.ln_1), src_mask)
        return x + self.mlp(layernorm(x, self.ln_2))


class Stack(nn.Module):
    def __init__(self, layers, C, bias):
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.norm = layer_norm(C, bias)


class Seq2Seq(nn.Module):
    def __init__(self, k):
        super().__init__()
        C, bias = k["C"], k["bias"]
        self.C, self.pad = C, k["pad"]
        self.pe = sinusoid(k["max_len"], C)
        emb = lambda V: nn.Embedding(V, C, dtype=torch.float64)
        self.src_embed = emb(k["Vs"])
        self.tgt_embed = self.src_embed if k["tie"] else emb(k["Vt"])
        self.encoder = Stack([EncoderLayer(C, k["NH"], k["F"], bias,
                                           k["act"])
                              for _ in range(k["Le"])], C, bias)
        self.decoder = Stack([DecoderLayer(C, k["NH"], k["F"], bias,
                                           k["act"])
                              for _ in range(k["Ld"])], C, bias)
        self.generator = nn.Linear(C, k["Vt"], bias=False,
                                   dtype=torch.float64)
        if k["tie"]:
            self.generator.weight = self.src_embed.weight

    def embed(self, table, ids):
        return table.weight[ids] * math.sqrt(self.C) + self.pe[:ids.shape[1]]

    def encode(self, src):
        src_mask = src != self.pad
        x = self.embed(self.src_embed, src)
        for layer in self.encoder.layers:
            x = layer(x, src_mask)
        return layernorm(x, self.encoder.norm), src_mask

    def decode(self, memory, src_mask, tgt_in):
        """The decoder's output (B, T, C), before the generator."""
        tgt_mask = tgt_in != self.pad
        y = self.embed(self.tgt_embed, tgt_in)
        for layer in self.decoder.layers:
            y = layer(y, memory, tgt_mask, src_mask)
        return layernorm(y, self.decoder.norm)

    def forward(self, src, tgt_in):
        memory, src_mask = self.encode(src)
        return self.generator(self.decode(memory, src_mask, tgt_in))


def loss_of(logits, tgt_out, pad, eps):
    V = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, V), tgt_out.reshape(-1),
                           ignore_index=pad, label_smoothing=eps)


# ---- checks of the reference against PyTorch's own layers --------------------

def torch_layer_check(model, k, src, tgt_in):
    """The same weights in nn.TransformerEncoderLayer / DecoderLayer
    (norm_first, batch_first, dropout 0): the same memory and logits."""
    C, NH, Fh, bias = k["C"], k["NH"], k["F"], k["bias"]
    act = F.relu if k["act"] == "relu" else F.gelu
    opts = dict(dropout=0.0, activation=act, batch_first=True,
                norm_first=True, bias=bias, layer_norm_eps=LN_EPS,
                dtype=torch.float64)
    src_pad, tgt_pad = src == k["pad"], tgt_in == k["pad"]

    def copy_norms(dst, src_lns):
        for d, s in zip(dst, src_lns):
            d.weight.copy_(s.weight)
            if bias:
                d.bias.copy_(s.bias)

    def copy_lin(d, s):
        d.weight.copy_(s.weight)
        if bias:
            d.bias.copy_(s.bias)

    with torch.no_grad():
        x = model.embed(model.src_embed, src)
        for mine in model.encoder.layers:
            ref = nn.TransformerEncoderLayer(C, NH, Fh, **opts)
            copy_lin(ref.self_attn.out_proj, mine.attn.c_proj)
            ref.self_attn.in_proj_weight.copy_(mine.attn.c_attn.weight)
            if bias:
                ref.self_attn.in_proj_bias.copy_(mine.attn.c_attn.bias)
            copy_lin(ref.linear1, mine.mlp.c_fc)
            copy_lin(ref.linear2, mine.mlp.c_proj)
            copy_norms([ref.norm1, ref.norm2], [mine.ln_1, mine.ln_2])
            ref.train()          # keep off the inference fast path
            x = ref(x, src_key_padding_mask=src_pad)
        memory = model.encoder.norm(x)
        mine_memory, _ = model.encode(src)
        assert gen_ch7.close(memory, mine_memory), "encoder disagrees"
        T = tgt_in.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool).triu(1)  # True: hidden
        y = model.embed(model.tgt_embed, tgt_in)
        for mine in model.decoder.layers:
            ref = nn.TransformerDecoderLayer(C, NH, Fh, **opts)
            ref.self_attn.in_proj_weight.copy_(mine.self_attn.c_attn.weight)
            copy_lin(ref.self_attn.out_proj, mine.self_attn.c_proj)
            ref.multihead_attn.in_proj_weight.copy_(torch.cat(
                [mine.cross_attn.q_proj.weight,
                 mine.cross_attn.kv_proj.weight]))
            copy_lin(ref.multihead_attn.out_proj, mine.cross_attn.out_proj)
            if bias:
                ref.self_attn.in_proj_bias.copy_(mine.self_attn.c_attn.bias)
                ref.multihead_attn.in_proj_bias.copy_(torch.cat(
                    [mine.cross_attn.q_proj.bias,
                     mine.cross_attn.kv_proj.bias]))
            copy_lin(ref.linear1, mine.mlp.c_fc)
            copy_lin(ref.linear2, mine.mlp.c_proj)
            copy_norms([ref.norm1, ref.norm2, ref.norm3],
                       [mine.ln_1, mine.ln_2, mine.ln_3])
            ref.train()
            y = ref(y, memory, tgt_mask=causal, tgt_is_causal=True,
                    tgt_key_padding_mask=tgt_pad,
                    memory_key_padding_mask=src_pad)
        logits = model.generator(model.decoder.norm(y))
        assert gen_ch7.close(logits, model(src, tgt_in)), "decoder disagrees"


# ---- drawing a case ----------------------------------------------------------

def init(model, k):
    """Embeddings N(0, 0.5^2) (times sqrt(C) in the model), the untied
    generator N(0, 1/C); the layers and the final LayerNorms as gen_ch7's
    init: LayerNorm weights 1 + N(0, 0.2^2), biases N(0, 0.1^2),
    matrices N(0, 1/fan_in). All float32 values."""
    with torch.no_grad():
        for layer in list(model.encoder.layers) + list(model.decoder.layers):
            gen_ch7.init(layer)
        for norm in (model.encoder.norm, model.decoder.norm):
            norm.weight.copy_(gen_ch7.randn(k["C"], std=0.2, mean=1.0))
            if norm.bias is not None:
                norm.bias.copy_(gen_ch7.randn(k["C"], std=0.1))
        model.src_embed.weight.copy_(gen_ch7.randn(k["Vs"], k["C"], std=0.5))
        if not k["tie"]:
            model.tgt_embed.weight.copy_(
                gen_ch7.randn(k["Vt"], k["C"], std=0.5))
            model.generator.weight.copy_(
                gen_ch7.randn(k["Vt"], k["C"], std=1 / math.sqrt(k["C"])))


def real_ids(n, V, pad):
    """n ids in [0, V) other than pad."""
    ids = torch.randint(V - 1, (n,))
    return ids + (ids >= pad).long()


def batch(k):
    """Sources of src_len real tokens and pads after; targets <bos> y and
    y <eos> for sentences y of tgt_len tokens, pads after."""
    B, S, T, pad = len(k["src_len"]), k["S"], k["T"], k["pad"]
    src = torch.full((B, S), pad)
    tgt_in = torch.full((B, T), pad)
    tgt_out = torch.full((B, T), pad)
    for b in range(B):
        n = k["src_len"][b]
        src[b, :n] = real_ids(n, k["Vs"], pad)
        n = k["tgt_len"][b]
        y = real_ids(n, k["Vt"], pad)
        tgt_in[b, :n + 1] = torch.cat([torch.tensor([k["bos"]]), y])
        tgt_out[b, :n + 1] = torch.cat([y, torch.tensor([k["eos"]])])
    assert (src == pad).any() and (tgt_in == pad).any()
    assert (src != pad).all(1).any() or (tgt_in != pad).all(1).any()
    return src, tgt_in, tgt_out


def write_case(out, k):
    name = k["name"]
    model = Seq2Seq(k)
    init(model, k)
    src, tgt_in, tgt_out = batch(k)
    torch_layer_check(model, k, src, tgt_in)
    sd = model.state_dict(keep_vars=True)
    names = list(sd.keys())
    if k["tie"]:
        same = {sd[n].data_ptr() for n in ("src_embed.weight",
                                           "tgt_embed.weight",
                                           "generator.weight")}
        assert len(same) == 1, "the tied tensors are not one"
        assert len(list(model.parameters())) == len(names) - 2
    pe = model.pe
    alt = torch.zeros_like(pe)       # the table another way
    pos = torch.arange(pe.shape[0], dtype=torch.float64)[:, None]
    freq = torch.exp(torch.arange(0, k["C"], 2, dtype=torch.float64)
                     * -(math.log(10000.0) / k["C"]))
    alt[:, 0::2] = torch.sin(pos * freq)
    alt[:, 1::2] = torch.cos(pos * freq)
    assert torch.allclose(pe, alt, atol=1e-12), "sinusoid"

    out.add(name + ".config", [k["Vs"], k["Vt"], k["max_len"], k["Le"],
                               k["Ld"], k["NH"], k["C"], k["F"],
                               int(k["bias"]), int(k["tie"]),
                               0 if k["act"] == "relu" else 1, k["pad"]])
    out.add(name + ".eps", EPS)
    out.add(name + ".src", src)
    out.add(name + ".tgt_in", tgt_in)
    out.add(name + ".tgt_out", tgt_out)
    for n in names:
        out.add(name + ".param." + n, sd[n])

    logits = model(src, tgt_in)
    loss = loss_of(logits, tgt_out, k["pad"], EPS)
    nll = loss_of(logits, tgt_out, k["pad"], 0.0)
    params = list(model.parameters())
    grads = dict(zip([id(p) for p in params],
                     torch.autograd.grad(loss, params)))
    out.add(name + ".logits", logits)
    out.add(name + ".loss", loss)
    out.add(name + ".nll", nll)
    for n in names:
        out.add(name + ".grad." + n, grads[id(sd[n])])
    print("  %s: %d parameters, loss %.6f, nll %.6f" % (
        name, sum(p.numel() for p in params), loss.item(), nll.item()))

    decay = [p for p in params if p.dim() == 2]
    other = [p for p in params if p.dim() != 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": WD},
                             {"params": other, "weight_decay": 0.0}],
                            lr=LR, betas=BETAS, eps=ADAM_EPS, foreach=False)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        step_loss = loss_of(model(src, tgt_in), tgt_out, k["pad"], EPS)
        step_loss.backward()
        opt.step()
        losses.append(step_loss.item())
    print("  %s: losses %s" % (name, " ".join("%.4f" % x for x in losses)))
    out.add(name + ".train.loss", torch.tensor(losses))
    for n in names:
        out.add(name + ".train.param." + n, sd[n])


def main():
    torch.manual_seed(77)
    out = Writer("ch7_model.txt", "chapter 7: the whole encoder-decoder "
                 "(seq2seq.h), forward, loss, every gradient and %d AdamW "
                 "steps (lr %g, betas %s, eps %g, wd %g on 2-D tensors); "
                 "parameters in state_dict order" % (STEPS, LR, BETAS,
                                                      ADAM_EPS, WD))
    for k in CASES:
        write_case(out, k)
    out.close()


if __name__ == "__main__":
    main()
