"""Exact re-expressions of model parts, so XNNPACK lowers them (and lowers them right).

Each replaces a piece of the transformers model with the same math in operators
XNNPACK takes over a dynamic `seq`; parity with the untouched eager model is what
validation checks.

- `rotate_half` as `x @ R` (R a ±1 permutation buffer): the original slices halves
  of a tensor with a dynamic dim, which XNNPACK refuses (one split per q and k, per
  layer). Patched into the modeling module only while exporting.
- `LastPositionHead`: the last position picked by a one-hot `bmm` instead of a slice
  (again: no slice of a dynamic dim), then the original `lm_head`.
- `TanhGelu`: ExecuTorch 1.5.1's XNNPACK lowering maps `gelu(approximate="tanh")`
  to its exact erf-GELU whatever `approximate` says (an error up to 4.7e-4 per
  activation: Gemma's logits moved 1.6e-4); the tanh formula written out in
  mul/add/tanh is what the model was trained with.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

import torch
from torch import nn

ROTATION_BUFFER = "rope_rotation_{dim}"


def rotation_matrix(dim: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """R with `x @ R == rotate_half(x) == cat(-x[..., h:], x[..., :h])`, exactly."""
    half = dim // 2
    r = torch.zeros(dim, dim, dtype=dtype)
    idx = torch.arange(half)
    r[idx + half, idx] = -1.0
    r[idx, idx + half] = 1.0
    return r


def add_rotation_buffer(holder: nn.Module, dim: int, dtype: torch.dtype) -> None:
    """R as a buffer of the exported module: export then sees a weight XNNPACK prepacks.

    A tensor captured by a closure instead becomes a lifted constant, which XNNPACK
    also takes, but then `to_executorch` fails re-tracing the delegate
    ("`lifted_tensor_0` is not a buffer").
    """
    holder.register_buffer(
        ROTATION_BUFFER.format(dim=dim), rotation_matrix(dim, dtype), persistent=False
    )


@contextlib.contextmanager
def rotate_half_as_matmul(model: nn.Module, holder: nn.Module) -> Iterator[None]:
    """While tracing, the modeling module's `rotate_half` (what its apply_rotary_pos_emb
    calls) multiplies by the holder's rotation buffer; restored afterwards."""
    module = sys.modules[type(model).__module__]
    original = getattr(module, "rotate_half", None)
    if original is None:
        yield
        return

    def rotate_half(x: torch.Tensor) -> torch.Tensor:
        # 2D mm on purpose: a 4D matmul broadcasts R to [1, H, d, d] with an expand.
        # .contiguous() first, for the same stride guard as in attention.bmm_attention.
        dim = x.shape[-1]
        rotation = getattr(holder, ROTATION_BUFFER.format(dim=dim))
        return torch.mm(x.contiguous().reshape(-1, dim), rotation).reshape(x.shape)

    module.rotate_half = rotate_half  # type: ignore[attr-defined]
    try:
        yield
    finally:
        module.rotate_half = original  # type: ignore[attr-defined]


class LastPositionHead(nn.Module):
    """`lm_head` of the last position only: `[B, s, D]` hidden states → `[B, vocab]` logits.

    The one-hot row depends only on the symbolic length (an input's size), so it is
    computed before the first delegate; `bmm`, not `mm`: XNNPACK's mm wants a static
    weight, bmm takes two activations. Holds the original head, so tied weights stay tied.
    """

    def __init__(self, head: nn.Module) -> None:
        super().__init__()
        self.head = head

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        batch, seq, width = hidden.shape[0], hidden.shape[1], hidden.shape[2]
        if not isinstance(batch, int) or batch != 1:
            # Slots (`runtime.slots`): each row's last position, `[B, s, D]` → `[B, vocab]`.
            # A select, not the one-hot bmm: expanded over rows, that bmm makes XNNPACK's
            # partitioner find a dependency cycle.
            rows: torch.Tensor = self.head(hidden[:, -1, :])
            return rows
        positions = torch.arange(seq, device=hidden.device)
        onehot = (positions == seq - 1).to(hidden.dtype).reshape(1, 1, seq)
        last = torch.bmm(onehot, hidden)  # [1, 1, D]
        logits: torch.Tensor = self.head(last.reshape(1, width))
        return logits


class TanhGelu(nn.Module):
    """gelu(x, approximate="tanh"), written out (x*x*x, not pow: XNNPACK's pow takes 2 only)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        inner = 0.7978845608028654 * (x + 0.044715 * (x * x * x))
        return 0.5 * x * (1.0 + torch.tanh(inner))


def replace_tanh_gelu(model: nn.Module) -> int:
    """Swap every transformers `GELUTanh` activation for `TanhGelu`; returns how many."""
    from transformers.activations import GELUTanh

    count = 0
    for module in model.modules():
        for name, child in list(module.named_children()):
            if isinstance(child, GELUTanh):
                setattr(module, name, TanhGelu())
                count += 1
    return count
