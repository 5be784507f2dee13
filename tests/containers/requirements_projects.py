"""Projects for the model-requirements tests: manifests that declare `model.requirements`.

- `linear_project(root, requirements)`: the tiny Linear model of `models/linear` with
  requirement lines added (fast to build; the requirements are only checked).
- `hf_project(root)`: a Hugging Face mini (Qwen2, 1 layer, hidden 32, vocabulary 256,
  random weights, a trained BPE) written with `save_pretrained` by the gemma3 example's
  own writer, and a manifest requiring the example's transformers/tokenizers pins, so
  the example's checked-in lock (`examples/gemma3/manifest.cpu.lock`) is its lock too.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import yaml

from tests.llm.llm_folders import example_writer

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


HF_MANIFEST = """\
apiVersion: trt-edge/v1
kind: Model
metadata: {{name: mini-qwen2, version: 0.1.0}}
model:
  huggingface: {{path: ./folder, max_cache_len: 16}}
  requirements: {requirements}
profiles:
  - name: decode
    dims: {{seq: 1}}
  - name: prefill
    dims: {{seq: {{min: 2, opt: 4, max: 8}}}}
runtime:
  policy: pinned
  phases: {{prefill: prefill, decode: decode}}
build:
  backend: xnnpack
  targets: [cpu-x86_64]
"""


def hf_project(root: Path) -> Path:
    """`root/manifest.yaml` + `root/folder/` (a save_pretrained Qwen2 mini); the manifest."""
    import transformers
    from transformers.utils import logging

    hf_logging: Any = logging
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    writer = example_writer()
    config = transformers.Qwen2Config(
        vocab_size=256,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=64,
        initializer_range=0.1,
        tie_word_embeddings=True,
        pad_token_id=writer.PAD_ID,
        eos_token_id=writer.EOS_ID,
        bos_token_id=writer.BOS_ID,
    )
    root.mkdir(parents=True, exist_ok=True)
    writer.write_folder(root / "folder", config)
    manifest = root / "manifest.yaml"
    manifest.write_text(HF_MANIFEST.format(requirements=json.dumps(example_requirements())))
    return manifest
