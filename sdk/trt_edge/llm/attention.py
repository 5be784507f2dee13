"""An attention function over the static cache that XNNPACK takes whole.

transformers' sdpa/eager paths leave operators outside XNNPACK on every layer —
`repeat_kv`'s `expand` for grouped-query attention, SDPA's safe-softmax
decomposition (`eq`/`any`/`where`/`logical_not`), a scalar multiply — and each one
ends a delegate and starts another. This function is the same math in operators
XNNPACK lowers: 3D `bmm`, a broadcast add of the additive mask, `softmax`. It is
registered with transformers' `AttentionInterface` under `ATTENTION_NAME` and
selected with `model.set_attn_implementation`, so the model code is untouched.

`fused_attention` (`attention: fused`, registered as `FUSED_ATTENTION_NAME`) is the
other road: one operator over the cache buffers in place, ExecuTorch's
`llama::custom_sdpa` (the one its own LLM export emits; the runtime kernel ships in the
executorch wheel for the Python runtime, and trt-edge-run carries its own
implementation, `device_runner/cpp/runner/fused_attention.cpp`). Decode then reads
exactly the filled slots once: no window copy, no mask, no softmax over empty slots.
"""

from __future__ import annotations

from typing import Any

import torch

ATTENTION_NAME = "trt_edge_bmm"
# `runtime.slots` > 1: the same math over a batch of rows, each with its own cache and mask.
ROWS_ATTENTION_NAME = "trt_edge_bmm_rows"
FUSED_ATTENTION_NAME = "trt_edge_fused"
# The keyword the export wrapper passes down the model to `fused_attention`: the first
# written position of this call (transformers forwards unknown keywords to attention).
START_KWARG = "trt_edge_start_pos"


def load_fused_attention_op() -> None:
    """Make `torch.ops.llama.custom_sdpa` exist for export and its ExecuTorch kernel exist
    for the Python runtime: importing ExecuTorch's module loads both (idempotent)."""
    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401


def fused_start(cache_position: torch.Tensor, seq: Any, max_cache_len: int) -> Any:
    """The call's first position as a symbolic int the fused operator takes, bounded so
    export can prove every read and write stays inside the buffers."""
    start = cache_position[0].item()
    torch._check(start >= 0)  # type: ignore[no-untyped-call]
    torch._check(start + seq <= max_cache_len)  # type: ignore[no-untyped-call]
    return start


def fused_attention(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float | None = None,
    dropout: float = 0.0,
    softcap: float | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """query `[1, H, s, d]`; key/value the whole sequence-major buffers `[1, L, KV, d]`
    (`static_cache.BufferCache`, fused). Returns `[1, s, H, d]`, as transformers expects.

    The causal mask is the operator's own (`is_causal` with the start position): query
    i attends to slots `[0, start + i]`; `attention_mask` is not read. Grouped-query
    attention is the operator's too (H a multiple of KV), so no key is repeated.
    """
    if softcap is not None:
        raise ValueError("fused attention has no logit softcap: build with attention: filled")
    start = kwargs[START_KWARG]
    head_dim = query.shape[3]
    scale = head_dim**-0.5 if scaling is None else scaling
    q = query.transpose(1, 2)  # [1, s, H, d]: the operator's sequence-major layout
    out = torch.ops.llama.custom_sdpa(q, key, value, start, None, 0.0, True, scale)
    return out, None


def bmm_attention(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float | None = None,
    dropout: float = 0.0,
    softcap: float | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """query `[1, H, s, d]`, key/value `[1, KV, L, d]`, mask `[1, 1, s, L]`.

    L is the whole cache, or its window with `attention: filled` (`static_cache`).

    Grouped-query attention without `repeat_kv`: the `H / KV` query heads that share
    a KV head are stacked along rows, `[KV, n_rep * s, d]`, so one bmm per KV head
    serves them all and no key or value is ever copied.
    """
    _, n_heads, seq, head_dim = query.shape
    n_kv, cache_len, v_dim = key.shape[1], key.shape[2], value.shape[3]
    n_rep = n_heads // n_kv
    scale = head_dim**-0.5 if scaling is None else scaling
    # .contiguous() first: reshaping the transposed query directly makes export emit a
    # stride guard it cannot prove over seq's range ("s*min(32, 64*s) == 32*s").
    q = query.contiguous().reshape(n_kv, n_rep * seq, head_dim)
    # key[0], not a reshape: over a windowed cache (a slice of the buffer) a reshape
    # makes export ask whether the slice is contiguous, i.e. guard on the window's length.
    k, v = key[0], value[0]
    scores = torch.bmm(q, k.transpose(1, 2)) * scale
    if softcap is not None:
        scores = torch.tanh(scores / softcap) * softcap
    if attention_mask is not None:
        # [KV, n_rep, s, L] + [1, 1, s, L]: a broadcast add, no materialised repeat.
        scores = scores.reshape(n_kv, n_rep, seq, cache_len) + attention_mask
        probs = torch.softmax(scores, dim=-1).reshape(n_kv, n_rep * seq, cache_len)
    else:
        probs = torch.softmax(scores, dim=-1)
    out = torch.bmm(probs, v)  # [KV, n_rep * s, dv]
    # To [1, s, H, dv] (what transformers' attention functions return): split the
    # symbolic dim first, then merge static ones. One reshape doing both makes export
    # emit a guard it cannot prove over seq's range (seen on the Llama mini).
    out = out.reshape(n_kv, n_rep, seq, v_dim).permute(2, 0, 1, 3)  # [s, KV, n_rep, dv]
    return out.reshape(1, seq, n_heads, v_dim), None


def rows_attention(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float | None = None,
    dropout: float = 0.0,
    softcap: float | None = None,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """`bmm_attention` for a batch of conversations (`static_cache.SlotCache`): query
    `[B, H, s, d]`, key/value `[B, KV, L, d]` (each row its own slot's cache, gathered),
    mask `[B, 1, s, L]` (each row its own positions).

    Rows never mix: every bmm is over `B * KV` independent matrices, so a row's result is
    the one it has alone (its logits are bit-equal in a batch on XNNPACK: tests/llm).
    """
    batch, n_heads, seq, head_dim = query.shape
    n_kv, cache_len, v_dim = key.shape[1], key.shape[2], value.shape[3]
    n_rep = n_heads // n_kv
    scale = head_dim**-0.5 if scaling is None else scaling
    q = query.contiguous().reshape(batch * n_kv, n_rep * seq, head_dim)
    k = key.reshape(batch * n_kv, cache_len, head_dim)
    v = value.reshape(batch * n_kv, cache_len, v_dim)
    scores = torch.bmm(q, k.transpose(1, 2)) * scale
    if softcap is not None:
        scores = torch.tanh(scores / softcap) * softcap
    if attention_mask is not None:
        # [B, KV, n_rep, s, L] + [B, 1, 1, s, L]: each row's own mask, broadcast over heads.
        scores = scores.reshape(batch, n_kv, n_rep, seq, cache_len) + attention_mask.unsqueeze(1)
        scores = scores.reshape(batch * n_kv, n_rep * seq, cache_len)
    probs = torch.softmax(scores, dim=-1)
    out = torch.bmm(probs, v)  # [B * KV, n_rep * s, dv]
    out = out.reshape(batch, n_kv, n_rep, seq, v_dim).permute(0, 3, 1, 2, 4)
    return out.reshape(batch, seq, n_heads, v_dim), None


def implementation(fused: bool, rows: bool) -> str:
    """The registered name the export selects: fused (`attention: fused`), rows
    (`runtime.slots` > 1: a batch of conversations) or plain bmm attention."""
    if fused:
        return FUSED_ATTENTION_NAME
    return ROWS_ATTENTION_NAME if rows else ATTENTION_NAME


def register_attention() -> None:
    """Make the attention implementations names transformers accepts (idempotent)."""
    from transformers import AttentionInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, eager_mask

    AttentionInterface.register(ATTENTION_NAME, bmm_attention)
    AttentionInterface.register(FUSED_ATTENTION_NAME, fused_attention)
    AttentionInterface.register(ROWS_ATTENTION_NAME, rows_attention)
    # The wrapper passes prepared masks; transformers still looks the names up here.
    ALL_MASK_ATTENTION_FUNCTIONS.register(ATTENTION_NAME, eager_mask)
    ALL_MASK_ATTENTION_FUNCTIONS.register(FUSED_ATTENTION_NAME, eager_mask)
    ALL_MASK_ATTENTION_FUNCTIONS.register(ROWS_ATTENTION_NAME, eager_mask)
