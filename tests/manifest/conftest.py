"""Fixtures for the manifest tests: a directory holding a model file and a manifest writer."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

BASE = """\
# golden base manifest
apiVersion: trt-edge/v1
kind: Model
metadata: {name: tiny-llm, version: 0.1.0}
model:
  entrypoint: model.py:build_model
inputs:
  - {name: input_ids, dtype: int64, shape: [1, seq], values: [0, 256]}
  - {name: start_pos, dtype: int64, shape: [1], values: [0, 640]}
  - {name: k_cache, dtype: float32, shape: [2, 1, 4, 640, 16]}
profiles:
  - name: decode
    dims: {seq: 1}
  - name: prefill
    dims: {seq: {min: 2, opt: 128, max: 512}}
runtime:
  policy: pinned
  phases: {prefill: prefill, decode: decode}
build:
  backend: auto
  targets: [cpu-x86_64]
validate:
  parity: {atol: 1.0e-3, rtol: 1.0e-3}
"""


@pytest.fixture
def base_text() -> str:
    """A valid manifest (the tiny LLM) that tests edit in one spot."""
    return BASE


@pytest.fixture
def write_manifest(tmp_path: Path) -> Callable[[str], Path]:
    """Writes `text` as manifest.yaml next to a model.py (the entrypoint file must exist)."""
    (tmp_path / "model.py").write_text("def build_model():\n    raise NotImplementedError\n")

    def write(text: str, name: str = "manifest.yaml") -> Path:
        path = tmp_path / name
        path.write_bytes(text.encode("utf-8"))
        return path

    return write


@pytest.fixture
def edited_manifest(write_manifest: Callable[[str], Path]) -> Callable[..., Path]:
    """`edited_manifest((old, new), ...)`: the base manifest with each `old` replaced by
    `new` in turn, written. An `old` that is not there fails the test: an edit that missed
    would quietly test the base manifest instead."""

    def edit(*edits: tuple[str, str]) -> Path:
        text = BASE
        for old, new in edits:
            assert old in text, f"{old!r} is not in the manifest being edited"
            text = text.replace(old, new)
        return write_manifest(text)

    return edit
