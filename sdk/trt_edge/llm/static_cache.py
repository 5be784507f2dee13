"""The export wrapper: a causal LM whose KV cache lives in its own buffers.

Why not transformers' own `integrations.executorch` wrappers (5.23): their cache
tensors sit on cache-layer objects, which non-strict export lifts as *constants*
(the state would be lost between calls) and strict export breaks
`run_decompositions`; and they return logits for every position. Here each layer's
keys and values are non-persistent buffers `[1, KV, max_cache_len, head_dim]` read
through `self`, written with `index_copy_` at `cache_position`, so non-strict
export records them as mutated buffers; the masks are built from `cache_position`
with integer compares (no Python branch on a symbolic length); and only the last
position's logits leave the method.

Sliding-window layers (Gemma-3) get a full-length cache and a sliding mask over
absolute positions: exact for every position below `max_cache_len`, at the cost of
`max_cache_len - window` slots those layers never attend to.

Filled-cache attention (`attention: filled`, `windowed=True`): forward takes a third
input, `cache_window [W]`, and attention reads only the first W slots — a `slice_copy`
of each buffer after the write, and masks `[1, 1, seq, W]`. W is a symbolic size (the
input's length, a backed export dimension), so decode costs what the window holds;
the runner feeds the written slots rounded up to a bucket (`LlmSection.window_length`).
The slots past the last written position but inside W are hidden by the causal mask,
as they are today, so the result does not depend on the rounding.

Fused attention (`attention: fused`, `fused=True`): no third input. The buffers are
sequence-major, `[1, max_cache_len, KV, head_dim]`, and attention is one operator,
`llama::custom_sdpa` (`fused_attention`), which reads keys and values in place up to
`cache_position[0] + seq` — no copy of the cache, no mask tensor, and a decode step
costs what is filled, slot by slot rather than by bucket.

Slots (`runtime.slots` N > 1, `slots=N`): the program holds N caches, one per
conversation, and a call advances `batch` of them at once (continuous batching).
forward takes `input_ids [B, seq]`, `cache_position [B, seq]` (each row its own
positions) and `cache_slot [B]` (the cache each row reads and writes), and returns
`[B, vocab]`. Each layer's buffer is `[N * max_cache_len, KV, head_dim]`, slot-major, so a
row's write is one `index_put` at flat rows `slot * max_cache_len + position` (the only
in-place `index_put` ExecuTorch's kernel takes has a 1-D index) and its read one
`index_select` of its slot's rows: a copy of what attention reads anyway (`attention: all`
only: with a window as a third symbolic dim XNNPACK's partitioner finds a dependency
cycle). Rows never mix (`attention.rows_attention`).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from trt_edge.llm.attention import START_KWARG, fused_start

FULL = "full_attention"
SLIDING = "sliding_attention"


class BufferCache:
    """The part of transformers' `Cache` protocol decoder layers call: `update(k, v, layer)`.

    Writes the new keys/values at `cache_position` into the wrapper's buffers and
    returns the whole fixed-length buffers; the attention masks hide the slots that
    are not (or no longer) visible.
    """

    is_compileable = True

    def __init__(
        self,
        keys: list[torch.Tensor],
        values: list[torch.Tensor],
        cache_position: torch.Tensor,
        window: int | torch.SymInt | None = None,  # slots attention reads; None: all
        sequence_major: bool = False,  # buffers [1, slots, KV, d] (fused attention)
    ) -> None:
        self.keys = keys
        self.values = values
        self.cache_position = cache_position
        self.window = window
        self.sequence_major = sequence_major

    def update(
        self,
        key_states: torch.Tensor,
        value_states: torch.Tensor,
        layer_idx: int,
        *_: Any,
        **__: Any,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if self.sequence_major:
            # [1, KV, s, d] -> [1, s, KV, d]: the fused operator reads the buffers as they are.
            self.keys[layer_idx].index_copy_(1, self.cache_position, key_states.transpose(1, 2))
            self.values[layer_idx].index_copy_(1, self.cache_position, value_states.transpose(1, 2))
            return self.keys[layer_idx], self.values[layer_idx]
        self.keys[layer_idx].index_copy_(2, self.cache_position, key_states)
        self.values[layer_idx].index_copy_(2, self.cache_position, value_states)
        if self.window is None:
            return self.keys[layer_idx], self.values[layer_idx]
        # slice_copy, not a view: a fresh contiguous tensor, so nothing downstream asks
        # export whether a strided view is contiguous — a guard `window != max_cache_len`
        # that fails the export. The copy is `window` slots: it follows the fill too.
        key = torch.ops.aten.slice_copy.Tensor(self.keys[layer_idx], 2, 0, self.window)
        value = torch.ops.aten.slice_copy.Tensor(self.values[layer_idx], 2, 0, self.window)
        return key, value

    def get_seq_length(self, layer_idx: int = 0) -> torch.Tensor:
        """Only read when position_ids are missing; the wrapper always passes them."""
        return self.cache_position[0]


class SlotCache:
    """`BufferCache` for slots: buffers `[N * L, KV, d]`; rows name their slot and positions."""

    is_compileable = True

    def __init__(
        self,
        keys: list[torch.Tensor],
        values: list[torch.Tensor],
        cache_position: torch.Tensor,  # [B, seq]
        cache_slot: torch.Tensor,  # [B]
        max_cache_len: int,
    ) -> None:
        self.keys = keys
        self.values = values
        self.cache_position = cache_position
        self.max_cache_len = max_cache_len
        base = cache_slot.unsqueeze(1) * max_cache_len  # [B, 1]: each slot's first row
        self.written = (base + cache_position).reshape(-1)  # [B * seq]
        read = torch.arange(max_cache_len, device=cache_slot.device).unsqueeze(0)
        self.read = (base + read).reshape(-1)  # [B * max_cache_len]: each row's whole slot

    def update(
        self,
        key_states: torch.Tensor,
        value_states: torch.Tensor,
        layer_idx: int,
        *_: Any,
        **__: Any,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        batch, n_kv, seq, head_dim = key_states.shape
        rows = batch * seq
        k_new = key_states.transpose(1, 2).reshape(rows, n_kv, head_dim)
        v_new = value_states.transpose(1, 2).reshape(rows, n_kv, value_states.shape[3])
        self.keys[layer_idx].index_put_((self.written,), k_new)
        self.values[layer_idx].index_put_((self.written,), v_new)
        return self._rows(self.keys[layer_idx], batch), self._rows(self.values[layer_idx], batch)

    def _rows(self, buffer: torch.Tensor, batch: Any) -> torch.Tensor:
        """`[B, KV, length, d]`: each row's slot, as attention takes it."""
        # A flat 1-D gather, then one reshape: gathering `[N, L, ...]` by slot instead makes
        # XNNPACK's partitioner find a dependency cycle (measured on the minis).
        picked = buffer.index_select(0, self.read)
        shaped = picked.reshape(batch, self.max_cache_len, buffer.shape[1], buffer.shape[2])
        return shaped.transpose(1, 2).contiguous()

    def get_seq_length(self, layer_idx: int = 0) -> torch.Tensor:
        """Only read when position_ids are missing; the wrapper always passes them."""
        return self.cache_position[0, 0]


class StaticCacheLM(nn.Module):
    """forward(input_ids [1, seq], cache_position [seq]) -> last-position logits [1, vocab].

    `model` must already return `[1, vocab]` for the last position (its `lm_head`
    replaced by `rewrites.LastPositionHead`), so it is called with `logits_to_keep=0`.
    """

    def __init__(
        self,
        model: nn.Module,
        max_cache_len: int,
        windowed: bool = False,
        fused: bool = False,
        slots: int = 1,
    ) -> None:
        super().__init__()
        if windowed and fused:
            raise ValueError("fused attention reads the filled slots itself: no window input")
        if slots > 1 and (fused or windowed):
            raise ValueError("slots take attention: all (docs/huggingface.md says why)")
        self.windowed = windowed  # forward then needs cache_window
        self.fused = fused  # sequence-major buffers, attention by `fused_attention`
        config = model.config.get_text_config()  # type: ignore[operator, union-attr]
        self.model = model
        self.max_cache_len = max_cache_len
        self.n_layers = int(config.num_hidden_layers)
        types = getattr(config, "layer_types", None) or [FULL] * self.n_layers
        self.layer_types = [str(t) for t in types]
        unknown = sorted(set(self.layer_types) - {FULL, SLIDING})
        if unknown:
            raise ValueError(f"layer types {unknown} are not supported (only {FULL}, {SLIDING})")
        self.sliding_window = int(getattr(config, "sliding_window", 0) or 0)
        if SLIDING in self.layer_types and self.sliding_window < 1:
            raise ValueError("the config has sliding_attention layers but no sliding_window")
        n_kv = int(config.num_key_value_heads or config.num_attention_heads)
        head_dim = int(
            getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
        )
        if fused and self.layer_types != [FULL] * self.n_layers:
            raise ValueError("fused attention takes full-attention layers only (no sliding window)")
        dtype = next(model.parameters()).dtype
        shape: tuple[int, ...] = (
            (1, max_cache_len, n_kv, head_dim) if fused else (1, n_kv, max_cache_len, head_dim)
        )
        if slots > 1:
            shape = (slots * max_cache_len, n_kv, head_dim)
        for i in range(self.n_layers):
            # persistent=False: the cache is state, not a weight; it never goes to safetensors.
            self.register_buffer(f"k_cache_{i}", torch.zeros(shape, dtype=dtype), persistent=False)
            self.register_buffer(f"v_cache_{i}", torch.zeros(shape, dtype=dtype), persistent=False)

    def cache_buffer_names(self) -> list[str]:
        return [f"{kind}_cache_{i}" for i in range(self.n_layers) for kind in ("k", "v")]

    def masks(
        self, cache_position: torch.Tensor, dtype: torch.dtype, length: Any = None
    ) -> torch.Tensor | dict[str, torch.Tensor]:
        """Additive masks `[1, 1, seq, length]` (default: all `max_cache_len` positions): 0 where a
        query may attend, min elsewhere.

        Float, not bool, so attention is `scores + mask` (an add XNNPACK takes) rather
        than a `where` on booleans. Full-attention-only models take one mask; hybrid
        models take a `{layer type: mask}` mapping, which transformers uses as prepared.
        """
        length = self.max_cache_len if length is None else length
        slot = torch.arange(length, device=cache_position.device).unsqueeze(0)
        query = cache_position.unsqueeze(-1)  # [seq, 1], or [B, seq, 1] for rows
        visible = {FULL: slot <= query}
        if SLIDING in self.layer_types:
            visible[SLIDING] = visible[FULL] & (slot > query - self.sliding_window)
        lowest = torch.finfo(dtype).min
        fill = {
            name: torch.zeros((), dtype=dtype).masked_fill(~ok, lowest)
            for name, ok in visible.items()
        }
        # [1, 1, seq, length]; rows ([B, seq] positions): [B, 1, seq, length].
        rows = cache_position.dim() == 2
        masks = {name: m.unsqueeze(1) if rows else m[None, None] for name, m in fill.items()}
        if set(self.layer_types) == {FULL}:
            return masks[FULL]
        return masks

    def forward(
        self,
        input_ids: torch.Tensor,
        cache_position: torch.Tensor,
        cache_window: torch.Tensor | None = None,
    ) -> torch.Tensor:
        keys = [getattr(self, f"k_cache_{i}") for i in range(self.n_layers)]
        values = [getattr(self, f"v_cache_{i}") for i in range(self.n_layers)]
        if self.windowed and cache_window is None:
            raise ValueError("a windowed StaticCacheLM needs cache_window (its length counts)")
        window = cache_window.shape[0] if self.windowed and cache_window is not None else None
        extra: dict[str, Any] = {}
        if self.fused:
            extra[START_KWARG] = fused_start(cache_position, input_ids.shape[1], self.max_cache_len)
        out = self.model(
            input_ids=input_ids,
            position_ids=cache_position.unsqueeze(0),
            # Fused: unused by attention (the operator masks causally), so export drops it.
            attention_mask=self.masks(cache_position, keys[0].dtype, window),
            past_key_values=BufferCache(keys, values, cache_position, window, self.fused),
            use_cache=True,
            logits_to_keep=0,
            **extra,
        )
        logits: torch.Tensor = out.logits
        return logits


class SlotsLM(StaticCacheLM):
    """StaticCacheLM with `slots` conversations: forward(input_ids [B, seq], cache_position
    [B, seq], cache_slot [B]) -> `[B, vocab]`, each row in its own slot.

    `attention: all` only (the manifest check says why): each row reads its whole slot."""

    def forward(  # type: ignore[override]
        self,
        input_ids: torch.Tensor,
        cache_position: torch.Tensor,
        cache_slot: torch.Tensor,
    ) -> torch.Tensor:
        """Slots: `[B, seq]` tokens at their rows' positions in their rows' slots → `[B, vocab]`."""
        keys = [getattr(self, f"k_cache_{i}") for i in range(self.n_layers)]
        values = [getattr(self, f"v_cache_{i}") for i in range(self.n_layers)]
        out = self.model(
            input_ids=input_ids,
            position_ids=cache_position,
            attention_mask=self.masks(cache_position, keys[0].dtype),
            past_key_values=SlotCache(keys, values, cache_position, cache_slot, self.max_cache_len),
            use_cache=True,
            logits_to_keep=0,
        )
        logits: torch.Tensor = out.logits
        return logits


def cache_wrapper(
    model: nn.Module, max_cache_len: int, windowed: bool, fused: bool, slots: int
) -> StaticCacheLM:
    """The export wrapper the manifest asks for: `SlotsLM` with `runtime.slots` > 1, else
    `StaticCacheLM` (one conversation, plain, filled or fused attention)."""
    if slots > 1:
        return SlotsLM(model, max_cache_len, windowed=windowed, slots=slots)
    return StaticCacheLM(model, max_cache_len, windowed=windowed, fused=fused)
