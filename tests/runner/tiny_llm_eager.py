"""The tiny-LLM example run eagerly (examples/tiny_llm/model.py in PyTorch): the reference
greedy tokens that both runners' generate loops must reproduce."""

from __future__ import annotations

import importlib.util
from typing import Any

from tests.helpers.paths import EXAMPLES

MODEL_PY = EXAMPLES / "tiny_llm" / "model.py"


def eager_module() -> Any:
    spec = importlib.util.spec_from_file_location("tiny_llm_model_eager", MODEL_PY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def eager_greedy(prompt: list[int], new_tokens: int) -> list[int]:
    """The reference loop on the same weights: prefill the prompt, then one token per step."""
    import torch

    tiny = eager_module()
    model = tiny.build_model()
    k, v = tiny.empty_cache()
    ids = torch.tensor([prompt], dtype=torch.int64)
    position = 0
    tokens: list[int] = []
    with torch.no_grad():
        for _ in range(new_tokens):
            logits, k, v = model(ids, torch.tensor([position], dtype=torch.int64), k, v)
            token = int(torch.argmax(logits[0, -1]))
            tokens.append(token)
            position += ids.shape[1]
            ids = torch.tensor([[token]], dtype=torch.int64)
    return tokens
