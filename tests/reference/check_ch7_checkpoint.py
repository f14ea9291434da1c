#!/usr/bin/env python3
"""Checks chapter 7's checkpoints (seq2seq_checkpoint.h) against PyTorch,
both ways:

    python3 tests/reference/check_ch7_checkpoint.py   # from the repository root

needs PyTorch (the safetensors package is used when installed; without
it the files are read and written here, in the same layout); the build
and the tests never need either.

1. C -> PyTorch. tests/reference/ch7_ckpt_c_{tied,untied}.safetensors are
   the two models of ch7_model.txt saved by seq2seq_save (the test
   ckpt_c_file_is_stable keeps them equal to what the C code writes
   today). Each is loaded into the reference module of gen_ch7_model.py,
   built from the file's "config" metadata, with load_state_dict(strict=
   True): every name present, none unknown, every shape right. Its
   parameters must then be the fixture's exactly, and its logits on the
   fixture's batch the fixture's.
2. PyTorch -> C. The module trains ten AdamW steps as gen_ch7_model.py
   does (the losses must match the fixture's), and its state_dict, in
   float32, is written to ch7_ckpt_torch_{tied,untied}.safetensors with
   the config and vocab metadata copied and step "10". The C test
   ckpt_reads_pytorch_file loads those and compares them with the
   fixture's trained parameters. The tied matrix is written three times
   (safetensors refuses shared storage, so each name gets a copy).

When seq2seq_save's format changes on purpose, first rewrite the C files
(the runner's ckpt_c_file_is_stable test writes them into a folder given
as CH7_CKPT_WRITE):

    CH7_CKPT_WRITE=tests/reference CK_RUN_SUITE=ch7_ckpt \
        build/cc/ex/*/run_tests

then run this script, then `make check`.
"""
import json
import os
import struct
import sys

import torch

import gen_ch7_model as ref

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = {k["name"]: k for k in ref.CASES}

try:
    from safetensors.torch import load_file, save_file
    from safetensors import safe_open
except ImportError:
    load_file = save_file = safe_open = None


# ---- safetensors, read and written here when the package is missing -----

def read_st(path):
    """(tensors, metadata) of a safetensors file of F32 tensors."""
    if load_file:
        with safe_open(path, "pt") as f:
            meta = f.metadata()
        return load_file(path), meta
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    meta = header.pop("__metadata__", {})
    tensors = {}
    for name, e in header.items():
        assert e["dtype"] == "F32", (name, e["dtype"])
        b, end = e["data_offsets"]
        t = torch.frombuffer(bytearray(data[b:end]), dtype=torch.float32)
        tensors[name] = t.reshape(e["shape"])
    return tensors, meta


def write_st(path, tensors, meta):
    """The layout of safetensors.torch.save_file: tensors by name, the
    header compact JSON padded with spaces to 8 bytes."""
    if save_file:
        save_file(tensors, path, metadata=meta)
        return
    header, offset, blobs = {"__metadata__": meta}, 0, []
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        raw = struct.pack("<%df" % t.numel(), *t.flatten().tolist())
        header[name] = {"dtype": "F32", "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        blobs.append(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


# ---- the fixture ------------------------------------------------------------

def read_fixture(path):
    """name -> float64 tensor, from a '# fixture v1' file: a line 'name
    d0 d1 ...', then the values on the lines after it."""
    out, name, shape, vals = {}, None, None, []

    def done():
        if name is not None:
            out[name] = torch.tensor(vals, dtype=torch.float64).reshape(shape)

    with open(path) as f:
        for line in f:
            words = line.split()
            if line.startswith("#") or not words:
                continue
            if words[0][0].isalpha() and words[0] not in ("nan", "inf"):
                done()
                name, shape, vals = words[0], [int(w) for w in words[1:]], []
            else:
                vals += [float(w) for w in words]
    done()
    return out


# ---- the checks -------------------------------------------------------------

def case_of(config):
    """gen_ch7_model's case dict for a file's config metadata."""
    c = json.loads(config)
    if c["act"] not in ("relu", "gelu"):
        sys.exit("the reference module has no activation %r" % c["act"])
    return dict(Vs=c["src_vocab"], Vt=c["tgt_vocab"], max_len=c["max_len"],
                Le=c["n_enc"], Ld=c["n_dec"], NH=c["n_head"], C=c["n_embd"],
                F=c["n_ffn"], bias=c["bias"], tie=c["tie"], act=c["act"],
                pad=c["pad"], dropout=c["dropout"])


def check_case(name, fx):
    src = os.path.join(HERE, "ch7_ckpt_c_%s.safetensors" % name)
    tensors, meta = read_st(src)
    k = case_of(meta["config"])
    want = CASES[name]
    for key in ("Vs", "Vt", "max_len", "Le", "Ld", "NH", "C", "F", "bias",
                "tie", "act", "pad"):
        assert k[key] == want[key], (name, key, k[key], want[key])
    assert k["dropout"] == 0
    model = ref.Seq2Seq(k)
    model.load_state_dict({n: t.to(torch.float64)
                           for n, t in tensors.items()}, strict=True)
    sd = model.state_dict()
    assert sorted(sd) == sorted(tensors), "names differ"
    for n, t in sd.items():   # the fixture's %.9g: exact in float32
        want_t = fx["%s.param.%s" % (name, n)].to(torch.float32)
        assert torch.equal(t.to(torch.float32), want_t), n
    if k["tie"]:
        assert model.generator.weight is model.src_embed.weight
        assert model.tgt_embed is model.src_embed

    ids = {w: fx["%s.%s" % (name, w)].long()
           for w in ("src", "tgt_in", "tgt_out")}
    with torch.no_grad():
        logits = model(ids["src"], ids["tgt_in"])
    fl = fx[name + ".logits"]
    diff = (logits - fl).abs().max().item()
    assert diff <= 1e-7 * fl.abs().max().item(), ("logits", diff)
    print("  %s: %s loads strictly (%d tensors), logits within %.1e"
          % (name, os.path.basename(src), len(tensors), diff))

    # ten AdamW steps, as gen_ch7_model.write_case takes them
    params = list(model.parameters())
    decay = [p for p in params if p.dim() == 2]
    other = [p for p in params if p.dim() != 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": ref.WD},
                             {"params": other, "weight_decay": 0.0}],
                            lr=ref.LR, betas=ref.BETAS, eps=ref.ADAM_EPS,
                            foreach=False)
    losses = []
    for _ in range(ref.STEPS):
        opt.zero_grad()
        loss = ref.loss_of(model(ids["src"], ids["tgt_in"]), ids["tgt_out"],
                           k["pad"], ref.EPS)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    got = torch.tensor(losses, dtype=torch.float64)
    # the fixture holds the losses in float32
    assert torch.allclose(got, fx[name + ".train.loss"], rtol=1e-7,
                          atol=0), ("losses differ", losses)
    for n, t in model.state_dict().items():
        want_t = fx["%s.train.param.%s" % (name, n)]
        assert torch.allclose(t, want_t, rtol=1e-8, atol=1e-9), n

    out = os.path.join(HERE, "ch7_ckpt_torch_%s.safetensors" % name)
    state = {n: t.detach().to(torch.float32).clone()
             for n, t in model.state_dict().items()}
    write_st(out, state, {"config": meta["config"], "vocab": meta["vocab"],
                          "step": str(ref.STEPS), "format": "pt"})
    back, back_meta = read_st(out)
    assert sorted(back) == sorted(state) and back_meta["step"] == "10"
    for n, t in state.items():
        assert torch.equal(back[n], t), n
    print("  %s: trained %d steps (loss %.4f -> %.4f), wrote %s"
          % (name, ref.STEPS, losses[0], losses[-1],
             os.path.relpath(out)))


def main():
    print("safetensors: %s" % ("the package" if save_file
                               else "this script's reader and writer"))
    fx = read_fixture(os.path.join(HERE, "ch7_model.txt"))
    for name in CASES:
        check_case(name, fx)
    print("ok: PyTorch loads the C checkpoints; run `make check` for C "
          "loading PyTorch's (ckpt_reads_pytorch_file)")


if __name__ == "__main__":
    main()
