"""A tied embedding is stored once in the bundle (`pipeline.lower.shared_constants`).

The Qwen3 mini ties its input embedding to `lm_head`: the gather stays outside
XNNPACK, the linear goes into it, and each used to keep its own copy of the table.
The checks read the real files the build wrote: the table's bytes, taken from the
folder's safetensors, occur exactly once across `model.pte` and `model.ptd`; an
untied mini (Llama) keeps both of its tables, each once, inside `model.pte` as before.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


def table_bytes(project: Path, name: str) -> bytes:
    """The fp32 bytes of tensor `name` in the mini's folder, as saved by transformers."""
    from safetensors.numpy import load_file

    tensors = load_file(str(project.parent / "folder" / "model.safetensors"))
    data: bytes = tensors[name].astype("<f4").tobytes()
    return data


def occurrences(bundle: Path, needle: bytes) -> int:
    """How many times `needle` occurs in the bundle's program and data files together."""
    count = 0
    for path in sorted(bundle.glob("model.pt*")):
        data = path.read_bytes()
        start = data.find(needle)
        while start != -1:
            count += 1
            start = data.find(needle, start + 1)
    return count


@pytest.mark.xdist_group("llm-qwen3")
def test_a_tied_embedding_table_is_stored_once(
    mini_bundle: Callable[[str], Path], mini_project: Callable[[str], Path]
) -> None:
    from trt_edge.inspect.pte_reader import read_pte

    bundle = mini_bundle("qwen3")
    table = table_bytes(mini_project("qwen3"), "model.embed_tokens.weight")
    assert occurrences(bundle, table) == 1
    # It lives in model.ptd beside the program, which XNNPACK still runs the head in.
    assert table in (bundle / "model.ptd").read_bytes()
    backends = {d.backend_id for d in read_pte(bundle / "model.pte").delegates}
    assert backends == {"XnnpackBackend"}


@pytest.mark.xdist_group("llm-llama")
def test_untied_tables_stay_in_the_program_each_once(
    mini_bundle: Callable[[str], Path], mini_project: Callable[[str], Path]
) -> None:
    bundle = mini_bundle("llama")
    assert not (bundle / "model.ptd").exists()
    for name in ("model.embed_tokens.weight", "lm_head.weight"):
        assert occurrences(bundle, table_bytes(mini_project("llama"), name)) == 1, name
