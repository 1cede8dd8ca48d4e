#!/usr/bin/env python3
"""Plain-PyTorch reference of nmt's two models, for the side-by-side speed benchmark.

It re-implements, module for module and with the same parameter names and shapes, what
lib/nmt/models builds in C++:

  * "transformer" (transformer.{h,cc}): post-LN (or pre-LN) encoder-decoder, fused [d,3d]
    self-attention projection `qkv_proj`, cross-attention `q_proj` + fused `kv_proj`,
    additive -1e9 masks, sinusoidal positions (not a buffer), embeddings x sqrt(d),
    source/target/output embeddings tied through `src_embedding` when configured;
  * "gru" (gru_bahdanau.{h,cc}): packed GRU encoder (optionally bidirectional + projection),
    Bahdanau additive attention (`w_q`, `w_k`, `v`), initial decoder state
    tanh(bridge([masked mean ; last real state])), GRU over [e_{t-1} ; c_t], deep output
    tanh(pre_output([s_t ; c_t ; e_{t-1}])) projected with the (tied) target embedding.

so that (a) nmt's saved weights (DIR/model.pt, a TorchScript archive whose named_parameters()
are the C++ names) load with strict name + shape checking, and (b) training runs on exactly
the batches nmt trains on. It works on subword ids only (no SentencePiece).

With the same libtorch (Debian's 1.13: nmt and python3-torch share libtorch_cpu and OpenBLAS)
and one thread, it is nmt bit for bit: initialisation replays nmt's constructors in the same
order (the same generator), so seed S gives nmt's random weights; dropout masks, gradients,
clipping and Adam updates are identical (checked over 3 updates against nmt checkpoints, both
models), so `train` reported the same final_loss as `nmt bench train` to the last digit until
nmt's fused CPU kernels replaced ATen's operators (the loss, nmt/kernels/softmax_xent.h: its own
exp, sums in double; the GRU cell and attention scores, nmt/kernels/recurrent.h; Adam's update,
nmt/kernels/adam.h): now the two agree to ~6 significant digits (`nmt bench train --unfused`
still runs ATen's GRU and torch::optim::Adam; dropout masks are drawn as before); the
greedy output ids (--out) are byte for byte those of `nmt bench translate --dump-hyp-ids`.
Three places needed LibTorch's arithmetic rather than the Python idiom (see Linear,
label_smoothed_loss, clip_gradients); none changes the cost.

Usage (Debian's python3 with python3-torch; each command prints ONE JSON object on its
last stdout line):

  nmt_reference.py train --config DIR/config.json --batches FILE --warmup W --steps N \
      --threads T [--seed S] [--blas-threads N] [--foreach] [--fused-linear]
    FILE: JSON lines {"src": [[ids...], ...], "tgt": [[ids...], ...]}, ids without BOS/EOS
    (as `nmt bench train --dump-batches` writes them). Batches are made exactly as nmt's
    make_batch does (src = ids EOS, tgt_in = BOS ids, tgt_out = ids EOS, padded with 0).
    W untimed then N timed updates, cycling through the file from batch 0. One update =
    zero_grad, teacher-forced forward, label-smoothed loss / target tokens, backward, clip
    (when train.clip_norm > 0), Adam(train.adam_beta1/2, adam_eps, weight_decay) at the
    constant rate train.lr (no warm-up schedule). Dropout as configured, model in train
    mode, seed S (default train.seed) set before the model is built. No host read until the
    end (nmt reads the loss and a gradient norm every update for its non-finite check, free
    on CPU). Output: {"model", "steps", "seconds", "tokens" (non-pad source tokens incl. EOS
    + target tokens incl. EOS over the timed steps), "tokens_per_s", "peak_rss_mb",
    "final_loss" (label-smoothed loss per target token over the timed steps, as nmt bench
    train reports it), "first_loss" (first update), "last_loss", "parameters", ...}

  nmt_reference.py translate --model DIR --ids FILE --batch-size B --threads T \
      --mode cached|naive [--max-len-a 1.5 --max-len-b 10] [--out HYP_IDS] [--limit N]
    FILE: JSON lines, one list of source subword ids per sentence (no EOS; empty list =
    empty output). Greedy decoding as lib/nmt/decode/greedy.cc: sentences sorted by
    decreasing length (stable), cut into batches of B, at most
    min(max(1, int(a * n_src_ids) + b), max_positions - 1) output tokens, sources longer
    than max_positions - 2 ids truncated.
      cached: encoder once per batch; Transformer: per-layer self-attention keys/values
              cache, cross-attention keys/values projected once; GRU: hidden state carried,
              attention key projection done once; finished sentences leave the batch.
      naive:  the tutorial way: every step re-runs the full decoder over [BOS, y1..yt]
              (Transformer: teacher-forced decoder forward, causal mask; GRU: the decoder's
              recurrence from its initial state) and keeps the whole batch until every
              sentence is finished or the longest limit is reached.
    Both give nmt's greedy output ids. One untimed sentence is translated first (as nmt bench
    translate does). --order input disables the length sort (batches in file order).
    Output: {"mode", "batch_size", "sentences", "seconds", "sentences_per_s",
    "target_tokens" (ids produced, without EOS), "target_tokens_per_s", "peak_rss_mb", ...}

Threads: --threads T calls torch.set_num_threads(T) (LibTorch intra-op pool). Matrix
products run in OpenBLAS (Debian's python3-torch and nmt link the same libtorch 1.13 and
OpenBLAS), whose pool is sized by OPENBLAS_NUM_THREADS: the caller sets it, with the same
environment for nmt and this script. Note that `nmt ... --threads T` itself gives LibTorch 1
thread and OpenBLAS T (openblas_set_num_threads) when OpenBLAS is present; to reproduce that
split here, pass `--threads 1 --blas-threads T` (calls openblas_set_num_threads via ctypes).
"""
import argparse
import contextlib
import ctypes
import json
import math
import os
import resource
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

PAD, UNK, BOS, EOS = 0, 1, 2, 3
MASK_VALUE = -1e9  # additive mask: large and finite (a fully masked row gives uniform weights)


# ------------------------------------------------------------------------------ config
MODEL_DEFAULTS = dict(
    type="transformer", src_vocab=0, tgt_vocab=0, shared_vocab=True, tie_output=True,
    d_model=256, heads=4, ffn=1024, encoder_layers=3, decoder_layers=3, pre_norm=False,
    dropout=0.1, attention_dropout=0.0, activation_dropout=0.0, max_positions=1024,
    embedding=256, hidden=256, rnn_layers=2, bidirectional=False)

TRAIN_DEFAULTS = dict(lr=7e-4, adam_beta1=0.9, adam_beta2=0.98, adam_eps=1e-9, weight_decay=0.0,
                      label_smoothing=0.1, clip_norm=0.0, seed=1)


class Config:
    """The keys of `defaults`, taken from the JSON section when present (as from_json does)."""

    def __init__(self, section, defaults):
        values = dict(defaults)
        values.update({k: v for k, v in section.items() if k in defaults})
        self.__dict__.update(values)


def read_config(path):
    with open(path) as f:
        j = json.load(f)
    if "model" not in j:
        raise SystemExit(f"{path}: no \"model\" section")
    model = Config(j["model"], MODEL_DEFAULTS)
    if model.type not in ("transformer", "gru"):
        raise SystemExit(f"{path}: unknown model type {model.type!r}")
    train = Config(j.get("train", {}), TRAIN_DEFAULTS)
    return model, train


# ------------------------------------------------------------------------------ helpers
class Linear(nn.Linear):
    """nn.Linear computing as LibTorch's C++ torch::nn::Linear does (torch/nn/functional/
    linear.h): addmm for 2-D inputs, otherwise matmul then `+= bias`. Python's F.linear fuses
    the bias into one addmm for contiguous 3-D inputs too, which rounds differently (about
    1e-7 relative); with this, training reproduces nmt's updates bit for bit.
    --fused-linear switches back to F.linear."""

    fused = False

    def forward(self, x):
        if self.fused or (self.bias is not None and x.dim() == 2):
            return F.linear(x, self.weight, self.bias)
        out = x.matmul(self.weight.t())
        if self.bias is not None:
            out += self.bias
        return out


def make_linear(in_features, out_features, bias=True):
    """Its constructor draws kaiming/uniform as LibTorch's does; nmt's init_linear is then
    applied separately, in the C++ order, so the random stream is consumed identically."""
    return Linear(in_features, out_features, bias=bias)


def init_linear(linear):
    nn.init.xavier_uniform_(linear.weight)
    if linear.bias is not None:
        nn.init.zeros_(linear.bias)


def make_table(vocab, dim):
    table = nn.Embedding(vocab, dim, padding_idx=PAD)
    nn.init.normal_(table.weight, 0.0, dim ** -0.5)
    with torch.no_grad():
        table.weight[PAD].zero_()
    return table


def shared_ref(module, name, value):
    """Keeps a reference to a module owned elsewhere without registering it (the embedding
    tables are registered once, by the model, exactly as in nmt)."""
    module.__dict__[name] = value


# ------------------------------------------------------------------------------ Transformer
class ScaledDotProductAttention(nn.Module):
    # --sdpa: PyTorch's fused kernel (flash / memory-efficient on CUDA), as nmt's LibTorch 2.x
    # build runs wherever nobody asks for the attention weights (transformer.cc). Off by default:
    # the CPU comparisons are against Debian's LibTorch 1.13, which has no such kernel.
    fused = False

    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, q, k, v, mask=None):
        if self.fused:
            return F.scaled_dot_product_attention(q, k, v, attn_mask=None if mask is None else mask.to(q.dtype),
                                                  dropout_p=self.p if self.training else 0.0)
        scale = 1.0 / math.sqrt(q.size(-1))
        scores = torch.matmul(q * scale, k.transpose(-2, -1))
        if mask is not None:
            scores = scores + mask
        attn = torch.softmax(scores, -1)
        if self.p > 0 and self.training:
            attn = F.dropout(attn, self.p, True)
        return torch.matmul(attn, v)


class MultiHeadAttention(nn.Module):
    def __init__(self, d, heads, p, self_attention):
        super().__init__()
        assert d % heads == 0
        self.d, self.heads, self.dk = d, heads, d // heads
        if self_attention:
            self.qkv_proj = make_linear(d, 3 * d)
            init_linear(self.qkv_proj)
        else:
            self.q_proj = make_linear(d, d)
            self.kv_proj = make_linear(d, 2 * d)
            init_linear(self.q_proj)
            init_linear(self.kv_proj)
        self.out_proj = make_linear(d, d)
        init_linear(self.out_proj)
        self.attention = ScaledDotProductAttention(p)

    def split_heads(self, x):  # [B,T,d] -> [B,H,T,dk]
        return x.view(x.size(0), x.size(1), self.heads, self.dk).transpose(1, 2)

    def merge_heads(self, x):  # [B,H,T,dk] -> [B,T,d]
        return x.transpose(1, 2).reshape(x.size(0), x.size(2), self.d)

    def forward_self(self, x, mask):
        B, T = x.size(0), x.size(1)
        qkv = self.qkv_proj(x).view(B, T, 3, self.heads, self.dk).permute(2, 0, 3, 1, 4)
        return self.out_proj(self.merge_heads(self.attention(qkv[0], qkv[1], qkv[2], mask)))

    def forward_self_incremental(self, x, cache, i):
        """x [B,t,d]; cache[i], cache[i+1] = keys/values so far ([B,H,T,dk] or None)."""
        B, T = x.size(0), x.size(1)
        qkv = self.qkv_proj(x).view(B, T, 3, self.heads, self.dk).permute(2, 0, 3, 1, 4)
        k, v = qkv[1], qkv[2]
        if cache[i] is not None:
            k = torch.cat((cache[i], k), 2)
            v = torch.cat((cache[i + 1], v), 2)
        else:
            k, v = k.contiguous(), v.contiguous()
        cache[i], cache[i + 1] = k, v
        return self.out_proj(self.merge_heads(self.attention(qkv[0], k, v, None)))

    def project_memory(self, memory):
        B, S = memory.size(0), memory.size(1)
        kv = self.kv_proj(memory).view(B, S, 2, self.heads, self.dk).permute(2, 0, 3, 1, 4)
        return kv[0], kv[1]

    def forward_cross(self, x, k, v, mask):
        q = self.split_heads(self.q_proj(x))
        return self.out_proj(self.merge_heads(self.attention(q, k, v, mask)))


class FeedForward(nn.Module):
    def __init__(self, d, hidden, p):
        super().__init__()
        self.fc1 = make_linear(d, hidden)
        self.fc2 = make_linear(hidden, d)
        self.dropout = nn.Dropout(p)
        init_linear(self.fc1)
        init_linear(self.fc2)
        self.p = p

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        if self.p > 0 and self.training:
            h = self.dropout(h)
        return self.fc2(h)


def sinusoid_table(max_len, d):
    position = torch.arange(max_len, dtype=torch.float).unsqueeze(1)
    div = torch.exp(torch.arange(0, d, 2, dtype=torch.float) * (-math.log(10000.0) / d))
    table = torch.zeros(max_len, d)
    table[:, 0::2] = torch.sin(position * div)
    table[:, 1::2] = torch.cos(position * div).narrow(1, 0, d // 2)
    return table


class Embeddings(nn.Module):
    """Token embedding x sqrt(d) + sinusoidal positions, then dropout. The table is the
    model's (registered there); the position table is a plain tensor, not a buffer."""

    def __init__(self, table, positions, p):
        super().__init__()
        shared_ref(self, "table", table)
        self.positions = positions
        self.dropout = nn.Dropout(p)
        self.scale = math.sqrt(table.embedding_dim)

    def forward(self, tokens, offset=0):
        length = tokens.size(1)
        if offset + length > self.positions.size(0):
            raise RuntimeError(f"sequence longer than max_positions ({self.positions.size(0)})")
        pe = self.positions.narrow(0, offset, length)
        return self.dropout(self.table(tokens) * self.scale + pe)


class EncoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self_attn = MultiHeadAttention(c.d_model, c.heads, c.attention_dropout, True)
        self.ffn = FeedForward(c.d_model, c.ffn, c.activation_dropout)
        self.norm1 = nn.LayerNorm(c.d_model)
        self.norm2 = nn.LayerNorm(c.d_model)
        self.dropout = nn.Dropout(c.dropout)
        self.pre_norm = c.pre_norm

    def forward(self, x, mask):
        if self.pre_norm:
            x = x + self.dropout(self.self_attn.forward_self(self.norm1(x), mask))
            x = x + self.dropout(self.ffn(self.norm2(x)))
        else:
            x = self.norm1(x + self.dropout(self.self_attn.forward_self(x, mask)))
            x = self.norm2(x + self.dropout(self.ffn(x)))
        return x


class DecoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self_attn = MultiHeadAttention(c.d_model, c.heads, c.attention_dropout, True)
        self.cross_attn = MultiHeadAttention(c.d_model, c.heads, c.attention_dropout, False)
        self.ffn = FeedForward(c.d_model, c.ffn, c.activation_dropout)
        self.norm1 = nn.LayerNorm(c.d_model)
        self.norm2 = nn.LayerNorm(c.d_model)
        self.norm3 = nn.LayerNorm(c.d_model)
        self.dropout = nn.Dropout(c.dropout)
        self.pre_norm = c.pre_norm

    def block(self, x, self_attention, cross_attention):
        if self.pre_norm:
            x = x + self.dropout(self_attention(self.norm1(x)))
            x = x + self.dropout(cross_attention(self.norm2(x)))
            x = x + self.dropout(self.ffn(self.norm3(x)))
        else:
            x = self.norm1(x + self.dropout(self_attention(x)))
            x = self.norm2(x + self.dropout(cross_attention(x)))
            x = self.norm3(x + self.dropout(self.ffn(x)))
        return x

    def forward(self, x, memory, causal_mask, src_mask):
        k, v = self.cross_attn.project_memory(memory)
        return self.block(x, lambda h: self.self_attn.forward_self(h, causal_mask),
                          lambda h: self.cross_attn.forward_cross(h, k, v, src_mask))

    def step(self, x, cache, i, src_mask):
        """cache[i:i+4] = self_k, self_v, cross_k, cross_v of this layer."""
        return self.block(x, lambda h: self.self_attn.forward_self_incremental(h, cache, i),
                          lambda h: self.cross_attn.forward_cross(h, cache[i + 2], cache[i + 3], src_mask))


class Encoder(nn.Module):
    def __init__(self, c, embeddings):
        super().__init__()
        self.embeddings = embeddings
        self.layers = nn.ModuleList([EncoderLayer(c) for _ in range(c.encoder_layers)])
        self.final_norm = nn.LayerNorm(c.d_model) if c.pre_norm else None

    def forward(self, src, mask):
        x = self.embeddings(src)
        for layer in self.layers:
            x = layer(x, mask)
        return self.final_norm(x) if self.final_norm is not None else x


class Decoder(nn.Module):
    def __init__(self, c, embeddings):
        super().__init__()
        self.embeddings = embeddings
        self.layers = nn.ModuleList([DecoderLayer(c) for _ in range(c.decoder_layers)])
        self.final_norm = nn.LayerNorm(c.d_model) if c.pre_norm else None
        self.causal_table = None

    def causal_mask(self, length):
        if self.causal_table is None or self.causal_table.size(0) < length:
            n = max(length, 256)
            self.causal_table = torch.full((n, n), MASK_VALUE).triu(1)
        return self.causal_table[:length, :length]

    def forward(self, tgt_in, memory, src_mask):
        x = self.embeddings(tgt_in)
        mask = self.causal_mask(tgt_in.size(1))
        for layer in self.layers:
            x = layer(x, memory, mask, src_mask)
        return self.final_norm(x) if self.final_norm is not None else x

    def start(self, memory):
        cache = []
        for layer in self.layers:
            k, v = layer.cross_attn.project_memory(memory)
            cache += [None, None, k.contiguous(), v.contiguous()]
        return cache

    def step(self, tokens, position, cache, src_mask):
        x = self.embeddings(tokens.unsqueeze(1), position)
        for n, layer in enumerate(self.layers):
            x = layer.step(x, cache, 4 * n, src_mask)
        if self.final_norm is not None:
            x = self.final_norm(x)
        return x.squeeze(1)


class Transformer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        shared = c.shared_vocab and c.src_vocab == c.tgt_vocab
        self.src_embedding = make_table(c.src_vocab, c.d_model)
        if shared:
            shared_ref(self, "tgt_embedding", self.src_embedding)
        else:
            self.tgt_embedding = make_table(c.tgt_vocab, c.d_model)
        positions = sinusoid_table(c.max_positions, c.d_model)
        self.encoder = Encoder(c, Embeddings(self.src_embedding, positions, c.dropout))
        self.decoder = Decoder(c, Embeddings(self.tgt_embedding, positions, c.dropout))
        if not c.tie_output:
            self.output = make_linear(c.d_model, c.tgt_vocab, bias=False)
            nn.init.xavier_uniform_(self.output.weight)

    @staticmethod
    def additive_mask(src_mask):
        keep = src_mask.view(src_mask.size(0), 1, 1, src_mask.size(1))
        return torch.zeros(keep.shape).masked_fill_(keep.logical_not(), MASK_VALUE)

    def project(self, hidden):
        return F.linear(hidden, self.tgt_embedding.weight) if self.config.tie_output else self.output(hidden)

    def forward(self, src, src_mask, tgt_in):
        mask = self.additive_mask(src_mask)
        memory = self.encoder(src, mask)
        return self.project(self.decoder(tgt_in, memory, mask))

    def encode(self, src, src_mask):
        return self.encoder(src, self.additive_mask(src_mask))

    # --- incremental decoding: state = [additive mask, (self_k, self_v, cross_k, cross_v) per layer]
    def start(self, memory, src_mask):
        return [self.additive_mask(src_mask)] + self.decoder.start(memory)

    def step(self, prev_tokens, state, position):
        cache = state[1:]
        hidden = self.decoder.step(prev_tokens, position, cache, state[0])
        state[1:] = cache
        return self.project(hidden)

    @staticmethod
    def select(state, index):
        return [t.index_select(0, index) for t in state]

    # --- naive decoding: the full teacher-forced decoder over the whole prefix
    def naive_start(self, memory, src_mask):
        return memory, self.additive_mask(src_mask)

    def naive_logits(self, prefix, start):
        memory, mask = start
        return self.project(self.decoder(prefix, memory, mask)[:, -1])


# ------------------------------------------------------------------------------ GRU + Bahdanau
def gru(input_size, hidden, layers, p, bidirectional):
    # As nmt: inter-layer dropout only when there is more than one layer.
    return nn.GRU(input_size, hidden, num_layers=layers, batch_first=True, bidirectional=bidirectional,
                  dropout=p if layers > 1 else 0.0)


def gru_additive_mask(src_mask):
    return torch.zeros(src_mask.shape).masked_fill_(src_mask.logical_not(), MASK_VALUE)


class AdditiveAttention(nn.Module):
    def __init__(self, query_size, key_size, hidden, p):
        super().__init__()
        self.w_q = make_linear(query_size, hidden, bias=False)
        self.w_k = make_linear(key_size, hidden, bias=False)
        self.v = make_linear(hidden, 1, bias=False)
        init_linear(self.w_q)
        init_linear(self.w_k)
        init_linear(self.v)
        self.dropout = nn.Dropout(p)
        self.p = p

    def project_keys(self, keys):
        return self.w_k(keys)

    def forward(self, query, projected_keys, values, mask):
        features = torch.tanh(self.w_q(query).unsqueeze(1) + projected_keys)
        scores = self.v(features).squeeze(-1)
        if mask is not None:
            scores = scores + mask
        attn = torch.softmax(scores, -1)
        if self.p > 0 and self.training:
            attn = self.dropout(attn)
        return torch.bmm(attn.unsqueeze(1), values).squeeze(1)


class GruEncoder(nn.Module):
    def __init__(self, E, H, L, bidirectional, p, table):
        super().__init__()
        shared_ref(self, "table", table)
        self.gru = gru(E, H, L, p, bidirectional)
        self.bidirectional = bidirectional
        if bidirectional:
            self.projection = make_linear(2 * H, H)
            init_linear(self.projection)
        self.dropout = nn.Dropout(p)

    def forward(self, src, src_mask):
        S = src.size(1)
        x = self.dropout(self.table(src))
        lengths = src_mask.sum(1).clamp_min(1).to("cpu", torch.long)
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, _ = self.gru(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, padding_value=0.0, total_length=S)
        if self.bidirectional:
            out = self.projection(out)
        return out * src_mask.unsqueeze(-1).to(out.dtype)


class BahdanauDecoder(nn.Module):
    def __init__(self, E, H, L, p, attention_p, table):
        super().__init__()
        shared_ref(self, "table", table)
        self.H, self.L = H, L
        self.attention = AdditiveAttention(H, H, H, attention_p)
        self.gru = gru(E + H, H, L, p, False)
        self.bridge = make_linear(2 * H, L * H)
        self.pre_output = make_linear(H + H + E, E)
        init_linear(self.bridge)
        init_linear(self.pre_output)
        self.dropout = nn.Dropout(p)

    def initial_state(self, memory, src_mask):  # -> [B, L, H]
        B = memory.size(0)
        lengths = src_mask.sum(1)
        mean = memory.sum(1) / lengths.clamp_min(1).unsqueeze(1).to(memory.dtype)
        last_index = (lengths - 1).clamp_min(0).view(B, 1, 1).expand(B, 1, self.H)
        last = memory.gather(1, last_index).squeeze(1)
        return torch.tanh(self.bridge(torch.cat((mean, last), -1))).view(B, self.L, self.H)

    def recur(self, e, state, keys, memory, mask):
        """e [B,E], state [L,B,H] -> (top output [B,H], context [B,H], new state)."""
        context = self.attention(state[self.L - 1], keys, memory, mask)
        out, state = self.gru(torch.cat((e, context), -1).unsqueeze(1), state)
        return out.squeeze(1), context, state

    def deep_output(self, s, c, e):
        return self.dropout(torch.tanh(self.pre_output(torch.cat((s, c, e), -1))))

    def forward(self, tgt_in, memory, src_mask):
        keys = self.attention.project_keys(memory)
        mask = gru_additive_mask(src_mask)
        embedded = self.dropout(self.table(tgt_in))
        state = self.initial_state(memory, src_mask).transpose(0, 1).contiguous()
        outputs, contexts = [], []
        for t in range(tgt_in.size(1)):
            s, c, state = self.recur(embedded.select(1, t), state, keys, memory, mask)
            outputs.append(s)
            contexts.append(c)
        return self.deep_output(torch.stack(outputs, 1), torch.stack(contexts, 1), embedded)

    def step(self, tokens, state, keys, memory, mask):
        e = self.dropout(self.table(tokens))
        s, c, state = self.recur(e, state, keys, memory, mask)
        return self.deep_output(s, c, e), state


class GruBahdanau(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        E, H, L = c.embedding, c.hidden, c.rnn_layers
        if E <= 0 or H <= 0 or L <= 0:
            raise SystemExit("gru: embedding, hidden and rnn_layers must be positive")
        shared = c.shared_vocab and c.src_vocab == c.tgt_vocab
        self.src_embedding = make_table(c.src_vocab, E)
        if shared:
            shared_ref(self, "tgt_embedding", self.src_embedding)
        else:
            self.tgt_embedding = make_table(c.tgt_vocab, E)
        self.encoder = GruEncoder(E, H, L, c.bidirectional, c.dropout, self.src_embedding)
        self.decoder = BahdanauDecoder(E, H, L, c.dropout, c.attention_dropout, self.tgt_embedding)
        if not c.tie_output:
            self.output = make_linear(E, c.tgt_vocab, bias=False)
            nn.init.xavier_uniform_(self.output.weight)

    def project(self, deep_output):
        return F.linear(deep_output, self.tgt_embedding.weight) if self.config.tie_output else self.output(deep_output)

    def forward(self, src, src_mask, tgt_in):
        memory = self.encoder(src, src_mask)
        return self.project(self.decoder(tgt_in, memory, src_mask))

    def encode(self, src, src_mask):
        return self.encoder(src, src_mask)

    # --- incremental decoding: state = [projected keys [B,S,H], memory, additive mask [B,S],
    # decoder state [L,B,H]] (the state stays in the GRU's layout: no transposes per step)
    def start(self, memory, src_mask):
        return [self.decoder.attention.project_keys(memory).contiguous(), memory.contiguous(),
                gru_additive_mask(src_mask),
                self.decoder.initial_state(memory, src_mask).transpose(0, 1).contiguous()]

    def step(self, prev_tokens, state, position):
        out, state[3] = self.decoder.step(prev_tokens, state[3], state[0], state[1], state[2])
        return self.project(out)

    @staticmethod
    def select(state, index):
        return [state[0].index_select(0, index), state[1].index_select(0, index),
                state[2].index_select(0, index), state[3].index_select(1, index)]

    # --- naive decoding: the decoder's whole recurrence re-run over the prefix at every step
    def naive_start(self, memory, src_mask):
        return memory, src_mask

    def naive_logits(self, prefix, start):
        memory, src_mask = start
        return self.project(self.decoder(prefix, memory, src_mask)[:, -1])


def make_model(c):
    return Transformer(c) if c.type == "transformer" else GruBahdanau(c)


def count_parameters(model):
    return sum(p.numel() for p in model.parameters())  # parameters() deduplicates tied weights


def load_weights(model, path):
    """Copies the parameters of nmt's TorchScript archive, checking names and shapes both ways."""
    saved = dict(torch.jit.load(path, map_location="cpu").named_parameters())
    mine = dict(model.named_parameters())
    missing = sorted(set(mine) - set(saved))
    unexpected = sorted(set(saved) - set(mine))
    if missing or unexpected:
        raise SystemExit(f"{path}: parameter names differ: missing {missing[:5]}, unexpected {unexpected[:5]}")
    with torch.no_grad():
        for name, p in mine.items():
            if tuple(saved[name].shape) != tuple(p.shape):
                raise SystemExit(f"{path}: '{name}' has shape {tuple(saved[name].shape)}, expected {tuple(p.shape)}")
            p.copy_(saved[name])


# ------------------------------------------------------------------------------ batches
def pad_rows(rows, bos, eos):
    """As nmt's pad_rows: [B, max(width, 1)] int64, zero padded; returns (tensor, non-pad count)."""
    width = max([len(r) + bos + eos for r in rows] + [1])
    out = [([BOS] if bos else []) + list(r) + ([EOS] if eos else []) for r in rows]
    count = sum(len(r) for r in out)
    return torch.tensor([r + [PAD] * (width - len(r)) for r in out], dtype=torch.long), count


def make_source_batch(sources):
    src, src_tokens = pad_rows(sources, False, True)
    return src, src.ne(PAD), src_tokens


def make_batch(sources, targets):
    src, src_mask, src_tokens = make_source_batch(sources)
    tgt_in, _ = pad_rows(targets, True, False)
    tgt_out, tgt_tokens = pad_rows(targets, False, True)
    return dict(src=src, src_mask=src_mask, tgt_in=tgt_in, tgt_out=tgt_out, src_tokens=src_tokens,
                tgt_tokens=tgt_tokens)


# LibTorch's `double * tensor` / `tensor / double` are the Scalar overloads (mul.Scalar,
# div.Scalar), whose backward multiplies in double before rounding to float; Python's `*` and
# `/` pick the Tensor overloads (float). Calling the Scalar overloads gives nmt's gradients
# bit for bit (measured: with Python's operators the gradients differ in the last bits).
mul_scalar = torch.ops.aten.mul.Scalar
div_scalar = torch.ops.aten.div.Scalar
norm_scalar = torch.ops.aten.norm.Scalar


def label_smoothed_loss(logits, target, epsilon):
    """lib/nmt/train/loss.cc: summed over non-pad positions only (fairseq's formula)."""
    V = logits.size(-1)
    flat_target = target.reshape(-1)
    index = flat_target.ne(PAD).nonzero().squeeze(1)
    lprobs = torch.log_softmax(logits.reshape(-1, V).index_select(0, index), -1)
    tgt = flat_target.index_select(0, index)
    nll = -lprobs.gather(1, tgt.unsqueeze(1)).squeeze(1).sum()
    if epsilon <= 0:
        return nll
    smooth = -lprobs.sum()
    eps_i = epsilon / (V - 1)
    return mul_scalar(nll, 1.0 - epsilon - eps_i) + mul_scalar(smooth, eps_i)


def clip_gradients(params, max_norm):
    """trainer's grad_norm + clip_gradients, without a host read: the same arithmetic as
    torch.nn.utils.clip_grad_norm_, but LibTorch's `double / tensor` is fill + div_ where
    Python's is reciprocal() * double (one rounding more), and Tensor.norm() is aten::norm."""
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return
    norm = torch.stack([norm_scalar(g, 2) for g in grads]).norm()
    denom = norm + 1e-6
    coef = torch.empty_like(denom).fill_(max_norm).div_(denom).clamp_max(1.0)
    for g in grads:
        g.mul_(coef)


# ------------------------------------------------------------------------------ common
def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def set_threads(threads, blas_threads):
    if threads > 0:
        torch.set_num_threads(threads)
    if blas_threads and blas_threads > 0:
        # The OpenBLAS that torch loaded (found in our own mappings), else the usual sonames.
        with open("/proc/self/maps") as f:
            mapped = sorted({line.split()[-1] for line in f if "libopenblas" in line.split()[-1]})
        fn = None
        for lib in mapped + ["libopenblas.so.0"]:
            try:
                fn = getattr(ctypes.CDLL(lib), "openblas_set_num_threads")
                break
            except (OSError, AttributeError):
                continue
        if fn is None:
            raise SystemExit("--blas-threads: openblas_set_num_threads not found (the BLAS is not OpenBLAS?)")
        fn(int(blas_threads))


def synchronize(device):
    """Timings on a GPU need the queued kernels finished."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def reset_peak_memory(device):
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)


def peak_gpu_mb(device):
    """Peak memory held by PyTorch's caching allocator on the GPU (None on the CPU)."""
    return torch.cuda.max_memory_allocated(device) / 2**20 if device.type == "cuda" else None


def emit(obj):
    print(json.dumps(obj), flush=True)


# ------------------------------------------------------------------------------ train
def cmd_train(a):
    set_threads(a.threads, a.blas_threads)
    Linear.fused = a.fused_linear
    ScaledDotProductAttention.fused = a.sdpa
    mc, tc = read_config(a.config)
    seed = tc.seed if a.seed is None else a.seed
    batches = []
    with open(a.batches) as f:
        for line in f:
            if line.strip():
                j = json.loads(line)
                batches.append(make_batch(j["src"], j["tgt"]))
    if not batches:
        raise SystemExit(f"{a.batches}: no batches")

    device = torch.device(a.device)
    batches = [{k: (v.to(device) if torch.is_tensor(v) else v) for k, v in b.items()} for b in batches]
    torch.manual_seed(seed)
    model = make_model(mc).to(device)
    model.train()
    params = list(model.parameters())
    optimizer = torch.optim.Adam(params, lr=tc.lr, betas=(tc.adam_beta1, tc.adam_beta2), eps=tc.adam_eps,
                                 weight_decay=tc.weight_decay, foreach=a.foreach)

    def step(b):
        optimizer.zero_grad(set_to_none=True)
        # --bf16: the forward pass under bf16 autocast, as nmt train --bf16 (CUDA only)
        # (entered only with --bf16: PyTorch 1.13 checks bf16 support even when disabled, and a
        # CPU-only build has no CUDA to ask)
        with torch.autocast("cuda", dtype=torch.bfloat16) if a.bf16 else contextlib.nullcontext():
            logits = model(b["src"], b["src_mask"], b["tgt_in"])
        loss = label_smoothed_loss(logits.float(), b["tgt_out"], tc.label_smoothing)
        div_scalar(loss, float(b["tgt_tokens"])).backward()
        if tc.clip_norm > 0:
            clip_gradients(params, tc.clip_norm)
        optimizer.step()
        return loss.detach()

    # (loss tensor, target tokens) of the first update and of the last one, read at the end
    first = last = None
    for i in range(a.warmup):
        b = batches[i % len(batches)]
        last = (step(b), b["tgt_tokens"])
        first = first or last
    tokens = tgt_tokens = 0
    loss_sum = torch.zeros((), dtype=torch.double, device=device)  # accumulated as nmt bench train does
    synchronize(device)
    reset_peak_memory(device)
    t0 = time.perf_counter()
    for i in range(a.warmup, a.warmup + a.steps):
        b = batches[i % len(batches)]
        last = (step(b), b["tgt_tokens"])
        first = first or last
        loss_sum += last[0].to(torch.double)
        tokens += b["src_tokens"] + b["tgt_tokens"]
        tgt_tokens += b["tgt_tokens"]
    synchronize(device)
    seconds = time.perf_counter() - t0
    emit({"impl": "pytorch", "model": mc.type, "steps": a.steps, "seconds": seconds, "tokens": tokens,
          "tokens_per_s": tokens / seconds, "peak_rss_mb": peak_rss_mb(), "device": str(device), "bf16": a.bf16,
          "peak_gpu_mb": peak_gpu_mb(device),
          "final_loss": loss_sum.item() / max(tgt_tokens, 1), "first_loss": first[0].item() / first[1],
          "last_loss": last[0].item() / last[1], "parameters": count_parameters(model),
          "torch_threads": torch.get_num_threads(), "torch_version": torch.__version__})


# ------------------------------------------------------------------------------ translate
def length_sorted_batches(sources, batch_size, sort=True):
    order = list(range(len(sources)))
    if sort:
        order.sort(key=lambda i: -len(sources[i]))  # stable, like std::stable_sort
    return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]


def limits_for(sources, a, max_target):
    return [min(max(1, int(a.max_len_a * len(s)) + a.max_len_b), max_target) for s in sources]


def decode_cached(model, sources, limits):
    """Incremental greedy decoding of one batch; finished sentences leave the batch."""
    device = next(model.parameters()).device
    src, src_mask, _ = make_source_batch(sources)
    src, src_mask = src.to(device), src_mask.to(device)
    B = len(sources)
    state = model.start(model.encode(src, src_mask), src_mask)
    hyps = [[] for _ in range(B)]
    alive = list(range(B))
    tokens = torch.full((B,), BOS, dtype=torch.long, device=device)
    position = 0
    while alive:
        logits = model.step(tokens, state, position)
        position += 1
        nxt = logits.argmax(-1)
        keep = []
        for r, tok in enumerate(nxt.tolist()):
            b = alive[r]
            if tok == EOS:
                continue
            hyps[b].append(tok)
            if len(hyps[b]) < limits[b]:
                keep.append(r)
        if len(keep) != len(alive):
            if not keep:
                break
            index = torch.tensor(keep, dtype=torch.long, device=device)
            state = model.select(state, index)
            nxt = nxt.index_select(0, index)
            alive = [alive[r] for r in keep]
        tokens = nxt
    return hyps


def decode_naive(model, sources, limits):
    """Tutorial greedy decoding: the whole decoder re-run over the prefix at every step and
    the whole batch kept until every sentence is finished or the longest limit is reached."""
    device = next(model.parameters()).device
    src, src_mask, _ = make_source_batch(sources)
    src, src_mask = src.to(device), src_mask.to(device)
    B = len(sources)
    start = model.naive_start(model.encode(src, src_mask), src_mask)
    ys = torch.full((B, 1), BOS, dtype=torch.long, device=device)
    hyps = [[] for _ in range(B)]
    done = [False] * B
    for _ in range(max(limits)):
        nxt = model.naive_logits(ys, start).argmax(-1)
        for b, tok in enumerate(nxt.tolist()):
            if done[b]:
                continue
            if tok == EOS:
                done[b] = True
                continue
            hyps[b].append(tok)
            done[b] = len(hyps[b]) >= limits[b]
        if all(done):
            break
        ys = torch.cat((ys, nxt.unsqueeze(1)), 1)
    return hyps


def greedy_decode(model, sources, a, max_target):
    out = [[] for _ in sources]
    non_empty = [i for i, s in enumerate(sources) if s]
    kept = [sources[i] for i in non_empty]
    decode = decode_cached if a.mode == "cached" else decode_naive
    for batch in length_sorted_batches(kept, a.batch_size, a.order == "length"):
        rows = [kept[i] for i in batch]
        for i, h in zip(batch, decode(model, rows, limits_for(rows, a, max_target))):
            out[non_empty[i]] = h
    return out


def cmd_translate(a):
    set_threads(a.threads, a.blas_threads)
    Linear.fused = a.fused_linear
    ScaledDotProductAttention.fused = a.sdpa
    mc, _ = read_config(os.path.join(a.model, "config.json"))
    t_load = time.perf_counter()
    device = torch.device(a.device)
    model = make_model(mc)
    load_weights(model, os.path.join(a.model, "model.pt"))
    model.to(device).eval()
    load_seconds = time.perf_counter() - t_load
    max_source_ids = min(1022, mc.max_positions - 1) - 1  # as nmt's Translator::encode
    max_target = mc.max_positions - 1
    sources = []
    with open(a.ids) as f:
        for line in f:
            if a.limit and len(sources) >= a.limit:
                break
            ids = json.loads(line) if line.strip() else []
            sources.append(list(ids[:max_source_ids]))
    with torch.inference_mode():
        first = next((s for s in sources if s), None)
        if first is not None:  # one untimed sentence: allocator and thread pools warm up
            greedy_decode(model, [first], a, max_target)
        synchronize(device)
        reset_peak_memory(device)
        t0 = time.perf_counter()
        hyps = greedy_decode(model, sources, a, max_target)
        synchronize(device)
        seconds = time.perf_counter() - t0
    if a.out:
        with open(a.out, "w") as f:
            for h in hyps:
                f.write(json.dumps(h, separators=(",", ":")) + "\n")  # as nmt bench --dump-hyp-ids
    n, k = len(sources), sum(len(h) for h in hyps)
    emit({"impl": "pytorch", "model": mc.type, "mode": a.mode, "batch_size": a.batch_size, "sentences": n,
          "seconds": seconds, "sentences_per_s": n / seconds, "target_tokens": k, "target_tokens_per_s": k / seconds,
          "load_seconds": load_seconds, "peak_rss_mb": peak_rss_mb(), "device": str(device),
          "peak_gpu_mb": peak_gpu_mb(device), "torch_threads": torch.get_num_threads(),
          "torch_version": torch.__version__})


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)

    t = sub.add_parser("train", help="training tokens/s on fixed batches")
    t.add_argument("--config", required=True, help="config.json with \"model\" and \"train\" sections")
    t.add_argument("--batches", required=True, help="JSON lines {\"src\": [[ids]], \"tgt\": [[ids]]}")
    t.add_argument("--warmup", type=int, default=3)
    t.add_argument("--steps", type=int, default=10)
    t.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0 = leave as is)")
    t.add_argument("--blas-threads", type=int, default=0, help="openblas_set_num_threads (0 = leave as is)")
    t.add_argument("--seed", type=int, default=None, help="default: train.seed of the config")
    t.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (the batches and the model move there)")
    t.add_argument("--bf16", action="store_true", help="bf16 autocast of the forward pass (CUDA), as nmt --bf16")
    t.add_argument("--foreach", action=argparse.BooleanOptionalAction, default=None,
                   help="Adam's multi-tensor implementation (default: PyTorch's choice)")
    t.add_argument("--sdpa", action="store_true",
                   help="F.scaled_dot_product_attention, as nmt's LibTorch 2.x build (flash / memory-efficient on CUDA)")
    t.add_argument("--fused-linear", action="store_true",
                   help="PyTorch's F.linear (bias fused into addmm for 3-D inputs) instead of LibTorch's arithmetic")
    t.set_defaults(func=cmd_train)

    d = sub.add_parser("translate", help="greedy translation speed on subword ids")
    d.add_argument("--model", required=True, help="nmt model directory (config.json, model.pt)")
    d.add_argument("--ids", required=True, help="JSON lines, one list of source ids per sentence")
    d.add_argument("--batch-size", type=int, default=64)
    d.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0 = leave as is)")
    d.add_argument("--blas-threads", type=int, default=0, help="openblas_set_num_threads (0 = leave as is)")
    d.add_argument("--mode", choices=("cached", "naive"), default="cached")
    d.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    d.add_argument("--max-len-a", type=float, default=1.5)
    d.add_argument("--max-len-b", type=int, default=10)
    d.add_argument("--order", choices=("length", "input"), default="length",
                   help="batches of length-sorted sentences (as nmt) or in input order")
    d.add_argument("--out", help="write the output ids as compact JSON lines, in input order "
                   "(the bytes of nmt bench translate --dump-hyp-ids)")
    d.add_argument("--limit", type=int, default=0, help="only the first N sentences (0 = all)")
    d.add_argument("--sdpa", action="store_true",
                   help="F.scaled_dot_product_attention, as nmt's LibTorch 2.x build (flash / memory-efficient on CUDA)")
    d.add_argument("--fused-linear", action="store_true",
                   help="PyTorch's F.linear (bias fused into addmm for 3-D inputs) instead of LibTorch's arithmetic")
    d.set_defaults(func=cmd_translate)

    a = p.parse_args(argv)
    if getattr(a, "batch_size", 1) <= 0:
        p.error("--batch-size must be positive")
    if a.command == "train" and (a.steps <= 0 or a.warmup < 0):
        p.error("--steps must be positive and --warmup not negative")
    a.func(a)


if __name__ == "__main__":
    main()
