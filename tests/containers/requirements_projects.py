"""Projects for the model-requirements tests: manifests that declare `model.requirements`.

- `linear_project(root, requirements)`: the tiny Linear model of `models/linear` with
  requirement lines added (fast to build; the requirements are only checked).
- `hf_project(root)`: the LLM tests' Hugging Face Qwen2 mini (`tests/llm/llm_folders.py`:
  random weights, a trained BPE, written with `save_pretrained` by the gemma3 example's
  own writer), its manifest requiring the example's transformers/tokenizers pins, so
  the example's checked-in lock (`examples/gemma3/manifest.cpu.lock`) is its lock too.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import yaml

from tests.llm.llm_folders import write_project

REPO = Path(__file__).resolve().parents[2]
LINEAR = Path(__file__).parent / "models" / "linear"
EXAMPLE = REPO / "examples" / "gemma3"


def linear_project(root: Path, requirements: list[str]) -> Path:
    """`root/manifest.yaml` (+ model.py) of the tiny Linear model with `requirements`."""
    shutil.copytree(LINEAR, root)
    manifest = root / "manifest.yaml"
    text = manifest.read_text()
    line = "  entrypoint: model.py:build_model\n"
    assert line in text
    manifest.write_text(text.replace(line, line + f"  requirements: {json.dumps(requirements)}\n"))
    return manifest


def example_requirements() -> list[str]:
    """The gemma3 example's `model.requirements`, read from its manifest."""
    doc: dict[str, Any] = yaml.safe_load((EXAMPLE / "manifest.yaml").read_text())
    lines: list[str] = doc["model"]["requirements"]
    return lines


def hf_project(root: Path) -> Path:
    """`root/manifest.yaml` + `root/folder/` (the LLM tests' Qwen2 mini) requiring the
    gemma3 example's pins; the manifest."""
    return write_project(root, "qwen2", requirements=example_requirements())
