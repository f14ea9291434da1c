"""Chapter 7's translation model in PyTorch: the pieces that
translate_torch.py (training), decode_torch.py (decoding speed) and
tests/bench/bench_mt.py share. Needs PyTorch; the build and the tests
never do.

- Bpe: the tokenizer of a ./ch7 checkpoint (its "vocab" metadata, in the
  format of bpe.h), encoding a line as bpe.c does.
- read_pairs, make_batches: the corpus as ids, and pairs.c's batches.
- Model: the module of gen_ch7_model.py (imported; it is checked there
  against PyTorch's own Transformer layers) in float32, with the C
  model's dropout.
- Plain, Cached: decoding without and with a key/value cache; greedy()
  and beam() decode with either as decode.c does, translate() in batches
  as translate.c does.
"""
import math
import re
import sys

import torch
import torch.nn.functional as F
from torch import nn

import check_ch7_checkpoint as ckpt
import gen_ch7
import gen_ch7_model as ref

gen_ch7.CHECK = False   # the modules' PyTorch ops, without the checks

PAD, BOS, EOS, UNK = 0, 1, 2, 3   # task.h's and bpe.h's special ids
N_SPECIAL = 4

# ---- the tokenizer ----------------------------------------------------------

# A piece: one optional space, then the longest run of other characters
# (bpe.h): "a  dog " -> "a", " ", " dog", " ". Merges never cross pieces.
PIECE = re.compile(r" ?[^ ]+| ")


class Bpe:
    """bpe.c's tokenizer, read from bpe_to_string's text:
    "bpe1 A M\\n", the A characters, "\\n", then M lines "a b\\n"."""

    def __init__(self, text):
        lines = text.split("\n")
        magic, A, M = lines[0].split(" ")
        alphabet = lines[1]
        if magic != "bpe1" or len(alphabet) != int(A) \
                or len(lines) != int(M) + 3:
            sys.exit("mt_torch: not a bpe1 tokenizer string")
        self.char_id = {c: N_SPECIAL + i for i, c in enumerate(alphabet)}
        self.merges = [tuple(map(int, m.split())) for m in lines[2:-1]]
        self.rank = {pair: i for i, pair in enumerate(self.merges)}
        self.first_merge = N_SPECIAL + len(alphabet)   # merge i's id - i
        # each id's text: nothing for <pad> <bos> <eos>, U+FFFD for <unk>
        self.text = ["", "", "", "\ufffd"] + list(alphabet)
        for a, b in self.merges:
            self.text.append(self.text[a] + self.text[b])
        self.vocab_size = len(self.text)
        self.cache = {}   # piece -> ids

    def encode_piece(self, piece):
        """The pair that was learnt first is merged, everywhere in the
        piece, left to right, until no pair of it was ever merged."""
        sym = [self.char_id.get(c, UNK) for c in piece]
        while True:
            ranks = [self.rank.get(p) for p in zip(sym, sym[1:])]
            best = min((r for r in ranks if r is not None), default=None)
            if best is None:
                return sym
            a, b = self.merges[best]
            out, i = [], 0
            while i < len(sym):
                if i + 1 < len(sym) and sym[i] == a and sym[i + 1] == b:
                    out.append(self.first_merge + best)
                    i += 2
                else:
                    out.append(sym[i])
                    i += 1
            sym = out

    def encode(self, line):
        ids = []
        for piece in PIECE.findall(line):
            if piece not in self.cache:
                self.cache[piece] = self.encode_piece(piece)
            ids += self.cache[piece]
        return ids

    def decode(self, ids):
        return "".join(self.text[i] for i in ids)


def tokenizer_of(path):
    """The Bpe of a checkpoint that ./ch7 --save wrote."""
    _, meta = ckpt.read_st(path)
    if "vocab" not in meta:
        sys.exit("%s: no tokenizer in the metadata (not a ./ch7 --task "
                 "translate checkpoint?)" % path)
    return Bpe(meta["vocab"])


# ---- the corpus -------------------------------------------------------------

def read_lines(path):
    """The lines of a UTF-8 file as pairs.c reads them: cut at each line
    end, "\\n", "\\r\\n" or a lone "\\r" (open()'s universal newlines,
    utf8.h's read_text), no line after a final one."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def read_pairs(bpe, data, split, src, tgt, max_len, drop_long):
    """[(source ids, target ids)] of data/split.src and .tgt, as
    pairs_load: a pair longer than max_len ids on a side is left out
    when drop_long (training) and an error otherwise."""
    lines = [read_lines("%s/%s.%s" % (data, split, lang))
             for lang in (src, tgt)]
    if len(lines[0]) != len(lines[1]):
        sys.exit("%s: %s and %s differ in lines" % (split, src, tgt))
    pairs = []
    for n, (s, t) in enumerate(zip(*lines)):
        p = (bpe.encode(s), bpe.encode(t))
        if max(len(p[0]), len(p[1])) > max_len:
            if drop_long:
                continue
            sys.exit("%s line %d: more than %d tokens" % (split, n + 1,
                                                          max_len))
        pairs.append(p)
    return pairs


def batch_tensors(pairs, rows, S, T):
    """src (B, S), tgt_in (B, T) = <bos> y, tgt_out (B, T) = y <eos>,
    pad after the end: batcher_fill."""
    B = len(rows)
    src = torch.full((B, S), PAD)
    tgt_in = torch.full((B, T), PAD)
    tgt_out = torch.full((B, T), PAD)
    for r, i in enumerate(rows):
        s, y = pairs[i]
        src[r, :len(s)] = torch.tensor(s, dtype=torch.long)
        tgt_in[r, :len(y) + 1] = torch.tensor([BOS] + y)
        tgt_out[r, :len(y) + 1] = torch.tensor(y + [EOS])
    return src, tgt_in, tgt_out


def make_batches(pairs, tokens):
    """pairs.c's batches: the pairs sorted by (target length, source
    length, line), cut greedily so that rows * (S + T), padding
    included, stays within tokens (T counts <bos> / <eos>)."""
    order = sorted(range(len(pairs)),
                   key=lambda i: (len(pairs[i][1]), len(pairs[i][0]), i))
    out, i = [], 0
    while i < len(order):
        rows, S, T = [], 1, 1
        while i < len(order):
            s, y = pairs[order[i]]
            S2, T2 = max(S, len(s)), max(T, len(y) + 1)
            if (len(rows) + 1) * (S2 + T2) > tokens:
                break
            rows.append(order[i])
            S, T = S2, T2
            i += 1
        if not rows:
            sys.exit("batches: a pair alone needs more than %d tokens"
                     % tokens)
        out.append(batch_tensors(pairs, rows, S, T))
    return out


# ---- the model --------------------------------------------------------------

def config(vocab_size, max_len, embd, layers, heads, ffn):
    """gen_ch7_model's case for ./ch7 --task translate's model: one
    vocabulary, tied, biases, ReLU, pad 0 (seq2seq_config_default)."""
    return dict(Vs=vocab_size, Vt=vocab_size, max_len=max_len, Le=layers,
                Ld=layers, NH=heads, C=embd, F=ffn, bias=True, tie=True,
                act="relu", pad=PAD)


class Model(ref.Seq2Seq):
    """gen_ch7_model.Seq2Seq in float32, with dropout where seq2seq.h
    has it: after the embeddings and on every sub-layer's output before
    its residual add (not on the attention weights)."""

    def __init__(self, k, dropout=0.0):
        super().__init__(k)
        self.float()               # the reference builds float64
        self.pe = self.pe.float()  # a plain tensor: .float() skips it
        self.p = dropout
        for layer in [*self.encoder.layers, *self.decoder.layers]:
            for sub in layer.children():
                if not isinstance(sub, nn.LayerNorm):
                    sub.register_forward_hook(self.drop)

    def drop(self, module, inputs, out):
        return F.dropout(out, self.p, self.training)

    def embed(self, table, ids):
        return F.dropout(super().embed(table, ids), self.p, self.training)


def load(path):
    """(the Model in eval mode, its Bpe) of a ./ch7 checkpoint."""
    tensors, meta = ckpt.read_st(path)
    model = Model(ckpt.case_of(meta["config"]))
    model.load_state_dict(tensors, strict=True)
    return model.eval(), Bpe(meta["vocab"])


# ---- decoding states: R rows, each fed one token a step ---------------------

class Plain:
    """Without a cache: every step runs the decoder over the whole prefix
    again and keeps the last position. The encoder runs once; rows
    b * copies .. + copies - 1 read source b."""

    def __init__(self, model, src, copies):
        self.m = model
        memory, mask = model.encode(src)
        self.memory = memory.repeat_interleave(copies, 0)
        self.mask = mask.repeat_interleave(copies, 0)
        self.prefix = src.new_empty(len(self.memory), 0)

    def step(self, tokens):   # (R,) -> next-token logits (R, V)
        self.prefix = torch.cat([self.prefix, tokens[:, None]], 1)
        h = self.m.decode(self.memory, self.mask, self.prefix)
        return self.m.generator(h[:, -1])

    def reorder(self, rows):  # row r takes over row rows[r]'s prefix
        self.prefix = self.prefix[rows]


class Cached:
    """With a key/value cache, as seq2seq_step: each step feeds one new
    position through every decoder layer. Its self-attention appends its
    key and value to the cache and reads all of them but those of a <pad>
    fed (hidden, as Plain's forward pass hides them); the
    cross-attention's keys and values are made once from the memory."""

    def __init__(self, model, src, copies):
        self.m = m = model
        memory, mask = model.encode(src)
        memory = memory.repeat_interleave(copies, 0)
        R, _, C = memory.shape
        L, T = len(m.decoder.layers), m.pe.shape[0]
        self.NH = NH = m.decoder.layers[0].self_attn.NH
        self.allowed = mask.repeat_interleave(copies, 0)[:, None, None, :]
        self.cross = [[gen_ch7.heads(t, NH)
                       for t in layer.cross_attn.kv_proj(memory).split(C, 2)]
                      for layer in m.decoder.layers]
        self.k = memory.new_zeros(L, R, NH, T, C // NH)   # (L,R,NH,T,HS)
        self.v = torch.zeros_like(self.k)
        self.fed = torch.zeros(R, T, dtype=torch.bool)   # not a <pad>
        self.t = 0   # positions fed so far

    def step(self, tokens):
        m, t, NH = self.m, self.t, self.NH
        C = m.C
        x = (m.tgt_embed.weight[tokens] * math.sqrt(C) + m.pe[t])[:, None]
        self.fed[:, t] = tokens != PAD
        seen = self.fed[:, None, None, :t + 1]   # (R, 1, 1, t + 1)
        for i, layer in enumerate(m.decoder.layers):
            sa, ca = layer.self_attn, layer.cross_attn
            q, k, v = [gen_ch7.heads(z, NH)
                       for z in sa.c_attn(layer.ln_1(x)).split(C, 2)]
            self.k[i, :, :, t] = k[:, :, 0]
            self.v[i, :, :, t] = v[:, :, 0]
            a = gen_ch7.attention(q, self.k[i, :, :, :t + 1],
                                  self.v[i, :, :, :t + 1], seen)
            x = x + sa.c_proj(gen_ch7.merge(a))
            q = gen_ch7.heads(ca.q_proj(layer.ln_2(x)), NH)
            a = gen_ch7.attention(q, *self.cross[i], self.allowed)
            x = x + ca.out_proj(gen_ch7.merge(a))
            x = x + layer.mlp(layer.ln_3(x))
        self.t += 1
        return m.generator(m.decoder.norm(x[:, 0]))

    def reorder(self, rows):
        self.k = self.k[:, rows]
        self.v = self.v[:, rows]
        self.fed = self.fed[rows]


# ---- greedy and beam search, as decode.c ------------------------------------

def greedy(state, limits):
    """Each row takes its most likely next token (the lowest id of equal
    ones) until <eos> (left out) or its length limit."""
    R = len(limits)
    out = [[] for _ in range(R)]
    live = [n > 0 for n in limits]
    tokens = torch.full((R,), BOS)
    for _ in range(max(limits, default=0)):
        best = state.step(tokens).argmax(-1).tolist()
        for r in range(R):
            if not live[r]:
                continue   # its row runs on, unread
            if best[r] == EOS:
                live[r] = False
                continue
            out[r].append(best[r])
            tokens[r] = best[r]
            live[r] = len(out[r]) < limits[r]
        if not any(live):
            break
    return out


class Beams:
    """decode.c's Beams: the k rows of every source, their tokens and
    log P, and each source's best finished hypothesis."""

    def __init__(self, limits, k, alpha):
        B = len(limits)
        self.k, self.alpha, self.limits = k, alpha, limits
        self.logp = [0.0] * (B * k)
        self.alive = [False] * (B * k)
        self.hist = [[] for _ in range(B * k)]
        self.best = [-math.inf] * B
        self.out = [[] for _ in range(B)]
        for b in range(B):
            self.alive[b * k] = limits[b] > 0   # one beam to start from

    def finish(self, b, tokens, eos, logp):
        """A hypothesis ends (its length counts the <eos>): source b's
        answer if it beats the best, score = log P / length^alpha."""
        score = logp / (len(tokens) + eos) ** self.alpha
        if score > self.best[b]:
            self.best[b] = score
            self.out[b] = list(tokens)

    def step_source(self, b, t, cands, step):
        """decode.c's beam_step for source b at step t, cands its 2k best
        extensions (log P, row, token), best first. Fills step's from,
        tokens and hist for its rows; returns whether a live beam could
        still beat the best finished hypothesis."""
        k, limit, n, bound = self.k, self.limits[b], 0, -math.inf
        for i, (lp, row, v) in enumerate(cands):
            if n == k:
                break
            if v == EOS:   # an <eos> among the first k finishes
                if i < k:
                    self.finish(b, self.hist[row], True, lp)
                continue
            r = b * k + n
            n += 1
            step["hist"][r] = self.hist[row] + [v]
            step["from"][r], step["tokens"][r] = row, v
            self.logp[r] = lp
            self.alive[r] = t + 1 < limit
            if self.alive[r]:   # the best it could reach: log P at limit
                bound = max(bound, lp / limit ** self.alpha)
            else:
                self.finish(b, step["hist"][r], False, lp)
        for r in range(b * k + n, (b + 1) * k):   # rows left dead
            self.alive[r] = False
        return bound > self.best[b]


def beam(state, limits, k, alpha):
    """Beam search of width k over B sources, k rows each (decode.h)."""
    B, R = len(limits), len(limits) * k
    s = Beams(limits, k, alpha)
    over = [n == 0 for n in limits]
    tokens = torch.full((R,), BOS)
    for t in range(max(limits, default=0)):
        z = state.step(tokens).double().log_softmax(-1)   # (R, V)
        V = z.shape[1]
        dead = torch.tensor([not a for a in s.alive])[:, None]
        cand = (torch.tensor(s.logp, dtype=torch.float64)[:, None] + z)
        cand = cand.masked_fill(dead, -math.inf).view(B, k * V)
        # each source's 2k best, in decode.c's order: higher log P, then
        # the lower row, then the lower token (equal log P at the cut
        # between 2k and 2k + 1 is left to topk)
        lp, idx = [x.tolist() for x in cand.topk(2 * k, dim=1)]
        step = {"from": list(range(R)), "tokens": [EOS] * R,
                "hist": [[] for _ in range(R)]}
        for b in range(B):
            if over[b]:
                continue   # its rows run on, unread
            cands = sorted((-p, i) for p, i in zip(lp[b], idx[b]))
            cands = [(-p, b * k + i // V, i % V) for p, i in cands]
            over[b] = not s.step_source(b, t, cands, step)
            if over[b]:
                for r in range(b * k, (b + 1) * k):
                    step["from"][r], step["tokens"][r] = r, EOS
        if all(over):
            break
        s.hist = step["hist"]
        tokens = torch.tensor(step["tokens"])
        state.reorder(torch.tensor(step["from"]))
    return s.out


def translate(model, sources, batch, state_cls, k=1, alpha=1.0, extra=50):
    """Decodes every source (a list of ids) as translate.c does: sorted
    by length, in batches of `batch`, each sentence limited to its
    length + extra tokens and the model's max_len. Greedy for k = 1, a
    beam of k otherwise. Returns the ids of each, in the given order."""
    order = sorted(range(len(sources)), key=lambda i: (len(sources[i]), i))
    out = [None] * len(sources)
    with torch.inference_mode():
        for first in range(0, len(order), batch):
            rows = order[first:first + batch]
            S = max([1] + [len(sources[i]) for i in rows])
            src = torch.full((len(rows), S), PAD)
            for r, i in enumerate(rows):
                src[r, :len(sources[i])] = torch.tensor(sources[i],
                                                        dtype=torch.long)
            limits = [min(len(sources[i]) + extra, model.pe.shape[0])
                      for i in rows]
            state = state_cls(model, src, k)
            hyps = greedy(state, limits) if k == 1 else beam(state, limits,
                                                             k, alpha)
            for i, h in zip(rows, hyps):
                out[i] = h
    return out


def bleu(hyps, refs):
    """sacreBLEU's corpus BLEU (as bleu.c), or None without sacrebleu."""
    try:
        import sacrebleu
    except ImportError:
        return None
    return sacrebleu.metrics.BLEU().corpus_score(hyps, [refs])
