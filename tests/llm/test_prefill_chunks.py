"""The Python `prefill_chunks` on the shared vectors the C++ runner's passes too (ctest
generate_units): both generate loops split a long prompt into the same calls."""

from __future__ import annotations

import json
from typing import Any

import pytest
from trt_edge.llm.generation import prefill_chunks

from tests.helpers.paths import VECTORS

DOC = json.loads((VECTORS / "prefill_chunks.json").read_text(encoding="utf-8"))


def test_the_vector_file_is_the_prefill_chunks_format() -> None:
    assert DOC["format"] == "prefill_chunks" and len(DOC["cases"]) >= 15


@pytest.mark.parametrize("case", DOC["cases"], ids=[c["name"] for c in DOC["cases"]])
def test_python_prefill_chunks_passes_the_shared_vectors(case: dict[str, Any]) -> None:
    chunks = prefill_chunks(case["length"], case["low"], case["high"])
    assert chunks == case["expect"]
    assert sum(chunks) == case["length"]
