"""Eager transformers, run the way the bundle is run: the references validation compares with.

`eager_chain` is transformers' own cache semantics — one call per chunk, each
continuing the `DynamicCache` the previous call returned (sliding-window layers
included) — returning last-position logits per call, as the bundle's method does.
`eager_generate` is `model.generate(do_sample=False)` with an explicit
`GenerationConfig` (greedy, the folder's eos/pad/bos) and an attention mask, with
the per-step scores that the top-2-gap rule needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


def eager_chain(model: Any, chunks: list[list[int]]) -> list[np.ndarray]:
    """Last-position logits `[1, vocab]` after each chunk, one model call per chunk.

    `logits_to_keep=1`: the head runs on the last position only, as the bundle's does
    (`rewrites.LastPositionHead`). Over the whole chunk it made a `[seq, vocab]` tensor
    the bundle never computes — 311 MB for a 512-token chunk at a 151,936 vocabulary,
    more than a tenth of validation's peak at Qwen3-0.6B's shape — to keep one row."""
    import torch
    from transformers import DynamicCache

    cache = DynamicCache(config=model.config)
    out: list[np.ndarray] = []
    with torch.no_grad():
        for chunk in chunks:
            result = model(
                input_ids=torch.tensor([chunk], dtype=torch.int64),
                past_key_values=cache,
                use_cache=True,
                logits_to_keep=1,
            )
            cache = result.past_key_values
            out.append(result.logits[:, -1, :].float().numpy())
    return out


@dataclass(frozen=True)
class EagerGeneration:
    tokens: list[int]
    top1: list[float]  # per generated token: the largest logit
    top2_gaps: list[float]  # per generated token: top-1 minus top-2 logit


def eager_generate(model: Any, prompt: list[int], max_new_tokens: int) -> EagerGeneration:
    import torch
    from transformers import GenerationConfig

    folder = model.generation_config
    config = GenerationConfig(  # type: ignore[no-untyped-call]
        do_sample=False,
        max_new_tokens=max_new_tokens,
        min_new_tokens=0,
        eos_token_id=folder.eos_token_id,
        pad_token_id=folder.pad_token_id,
        bos_token_id=folder.bos_token_id,
    )
    ids = torch.tensor([prompt], dtype=torch.int64)
    with torch.no_grad():
        out = model.generate(
            ids,
            attention_mask=torch.ones_like(ids),
            generation_config=config,
            return_dict_in_generate=True,
            output_scores=True,
        )
    tokens = [int(t) for t in out.sequences[0, len(prompt) :]]
    top1, gaps = [], []
    for scores in out.scores:
        top = torch.topk(scores[0].float(), 2).values
        top1.append(float(top[0]))
        gaps.append(float(top[0] - top[1]))
    return EagerGeneration(tokens, top1, gaps)
