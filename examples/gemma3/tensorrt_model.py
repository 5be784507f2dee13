"""The seed's mini Gemma-3 as a TensorRT engine: the whole sequence in, last logits out.

A TensorRT engine holds no mutable buffers, so the recipe that keeps a static KV cache
inside the program (`model.huggingface`, manifest.yaml) cannot be an engine. This is the
upstream seed's own TensorRT case instead: transformers' `Gemma3ForCausalLM` with
`use_cache=False`, called with the tokens so far and their positions, returning the logits
of the last position — prefill and decode are one function at different lengths, each
call recomputing the prefix (docs/tensorrt.md, "The KV cache and TensorRT").

    python write_model.py                  # the folder, once (random weights, no download)
    trt-edge build tensorrt.yaml --out dist
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from torch import nn

FOLDER = Path(__file__).resolve().parent / "mini-gemma3"


class LastLogits(nn.Module):
    """`input_ids [1, seq]`, `position_ids [1, seq]` -> logits of the last position."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, position_ids: torch.Tensor) -> torch.Tensor:
        out = self.model(input_ids=input_ids, position_ids=position_ids, use_cache=False)
        logits: torch.Tensor = out.logits[:, -1, :]
        return logits


def build_model() -> nn.Module:
    from transformers import AutoModelForCausalLM

    if not FOLDER.is_dir():
        raise FileNotFoundError(f"{FOLDER} is missing: run `python write_model.py` first")
    model: Any = AutoModelForCausalLM.from_pretrained(FOLDER, torch_dtype=torch.float32)
    model.config.use_cache = False
    model.eval()
    return LastLogits(model).eval()
