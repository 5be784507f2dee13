"""A tiny decoder-only transformer with a caller-owned KV cache.

Why caller-owned caches: the cache tensors travel in and out of `forward`, so a
`.pte` built from this model is a pure function (no mutable buffers), prefill and
decode are the same method at different sequence lengths, and the runner's
generate loop just feeds the returned caches back. Every cache update and the
causal mask are dense tensor ops over the whole static cache (a one-hot position
matrix), so nothing depends on tensor *values* at export time: torch.export sees
only the symbolic `seq` dimension.

I/O contract (docs/device.md, "Generating on a device"):
    forward(input_ids [1, seq] int64, start_pos [1] int64,
            k_cache [LAYERS, 1, HEADS, CACHE_LEN, HEAD_DIM] float32,
            v_cache [same]) -> (logits [1, seq, VOCAB], new k_cache, new v_cache)
Token i of the call sits at position start_pos + i; positions >= CACHE_LEN are
not stored (keep start_pos + seq <= CACHE_LEN).
"""

from __future__ import annotations

import math

import torch
from torch import nn

VOCAB = 256
LAYERS = 2
HEADS = 4
HEAD_DIM = 16
D_MODEL = HEADS * HEAD_DIM
FFN = 128
CACHE_LEN = 640
SEED = 20261129

# Large but finite: a query with no visible key (only past the cache end)
# gets uniform attention instead of NaN.
_MASKED = -1.0e9


def positional_encoding(positions: torch.Tensor) -> torch.Tensor:
    """Sinusoidal encoding computed from positions, so no table bounds the context."""
    half = D_MODEL // 2
    freqs = torch.exp(torch.arange(half, dtype=torch.float32) * (-math.log(10000.0) / half))
    angles = positions.to(torch.float32).unsqueeze(-1) * freqs
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1)


class DecoderLayer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm_attn = nn.LayerNorm(D_MODEL)
        self.qkv = nn.Linear(D_MODEL, 3 * D_MODEL)
        self.proj = nn.Linear(D_MODEL, D_MODEL)
        self.norm_ffn = nn.LayerNorm(D_MODEL)
        self.ffn_in = nn.Linear(D_MODEL, FFN)
        self.ffn_out = nn.Linear(FFN, D_MODEL)

    def forward(
        self,
        x: torch.Tensor,
        write: torch.Tensor,
        keep: torch.Tensor,
        visible: torch.Tensor,
        k_cache: torch.Tensor,
        v_cache: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        seq = x.shape[1]
        q, k, v = self.qkv(self.norm_attn(x)).split(D_MODEL, dim=-1)
        q = q.view(1, seq, HEADS, HEAD_DIM).transpose(1, 2)
        k = k.view(1, seq, HEADS, HEAD_DIM).transpose(1, 2)
        v = v.view(1, seq, HEADS, HEAD_DIM).transpose(1, 2)
        # Scatter the new keys/values into their cache rows: keep old rows, add new ones.
        k_cache = k_cache * keep + torch.matmul(write, k)
        v_cache = v_cache * keep + torch.matmul(write, v)
        scores = torch.matmul(q, k_cache.transpose(-1, -2)) / math.sqrt(HEAD_DIM)
        scores = scores.masked_fill(visible.logical_not(), _MASKED)
        attn = torch.matmul(torch.softmax(scores, dim=-1), v_cache)
        attn = attn.transpose(1, 2).reshape(1, seq, D_MODEL)
        x = x + self.proj(attn)
        x = x + self.ffn_out(torch.nn.functional.gelu(self.ffn_in(self.norm_ffn(x))))
        return x, k_cache, v_cache


class TinyLLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D_MODEL)
        self.layers = nn.ModuleList(DecoderLayer() for _ in range(LAYERS))
        self.norm = nn.LayerNorm(D_MODEL)
        self.head = nn.Linear(D_MODEL, VOCAB, bias=False)

    def forward(
        self,
        input_ids: torch.Tensor,
        start_pos: torch.Tensor,
        k_cache: torch.Tensor,
        v_cache: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        seq = input_ids.shape[1]
        positions = start_pos + torch.arange(seq, dtype=torch.int64)  # [seq]
        slots = torch.arange(CACHE_LEN, dtype=torch.int64)  # [CACHE_LEN]
        # write[p, i] = 1 where cache slot p receives token i of this call.
        write = (slots.unsqueeze(1) == positions.unsqueeze(0)).to(torch.float32)
        keep = 1.0 - write.sum(dim=1, keepdim=True)  # [CACHE_LEN, 1]
        # visible[i, p]: token i attends to slot p when p <= its own position.
        visible = slots.unsqueeze(0) <= positions.unsqueeze(1)  # [seq, CACHE_LEN]
        x = self.embed(input_ids) + positional_encoding(positions).unsqueeze(0)
        new_k = []
        new_v = []
        for i, layer in enumerate(self.layers):
            x, k_i, v_i = layer(x, write, keep, visible, k_cache[i], v_cache[i])
            new_k.append(k_i)
            new_v.append(v_i)
        logits = self.head(self.norm(x))
        return logits, torch.stack(new_k), torch.stack(new_v)


def empty_cache() -> tuple[torch.Tensor, torch.Tensor]:
    """Zeroed (k_cache, v_cache) for a fresh sequence."""
    shape = (LAYERS, 1, HEADS, CACHE_LEN, HEAD_DIM)
    return torch.zeros(shape), torch.zeros(shape)


def build_model() -> nn.Module:
    """The manifest's entrypoint: deterministic weights from a fixed seed, eval mode."""
    generator = torch.Generator().manual_seed(SEED)
    model = TinyLLM()
    with torch.no_grad():
        for param in model.parameters():
            param.copy_(torch.randn(param.shape, generator=generator) * 0.2)
    return model.eval()
