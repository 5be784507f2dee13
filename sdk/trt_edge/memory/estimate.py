"""`manifest_estimate`: a Hugging Face model's memory needs before anything is built.

`trt-edge validate` must stay instant and torch-free, and before a build there is no
program to read. For a Hugging Face folder the big figures follow from files alone: the
weights from the safetensors headers (every tensor's shape; the recipe exports in
float32), the KV cache from `config.json` (2 × layers × key/value heads × `max_cache_len`
× head dim × 4 bytes × `runtime.slots`, the recipe's static cache). Activations are not known before
lowering, so the estimate is a lower bound; the build records the real figures
(`needs.bundle_memory`).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

from trt_edge_runner.bundle_format import MemorySection

from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.memory.needs import RUNNER_BYTES

FLOAT32 = 4


def _safetensors_elements(path: Path) -> int:
    """How many elements the tensors of one `.safetensors` file hold (its JSON header only)."""
    with path.open("rb") as handle:
        (length,) = struct.unpack("<Q", handle.read(8))
        header: dict[str, Any] = json.loads(handle.read(length))
    count = 0
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        elements = 1
        for extent in entry["shape"]:
            elements *= int(extent)
        count += elements
    return count


def manifest_estimate(manifest: ResolvedManifest) -> MemorySection | None:
    """A lower bound of what the bundle will need, or None when it cannot be told before
    building (not a Hugging Face model, or its files cannot be read)."""
    source = manifest.huggingface
    if source is None:
        return None
    try:
        config = json.loads((source.folder / "config.json").read_text("utf-8"))
        config = config.get("text_config", config)
        elements = sum(
            _safetensors_elements(p) for p in sorted(source.folder.glob("*.safetensors"))
        )
        heads = int(config["num_attention_heads"])
        kv_heads = int(config.get("num_key_value_heads") or heads)
        head_dim = int(config.get("head_dim") or int(config["hidden_size"]) // heads)
        layers = int(config["num_hidden_layers"])
    except (OSError, ValueError, KeyError, TypeError, struct.error):
        return None
    weights = elements * FLOAT32
    kv_cache = 2 * layers * kv_heads * source.max_cache_len * head_dim * FLOAT32 * source.slots
    return MemorySection(
        weights_bytes=weights,
        planned_bytes=kv_cache,
        kv_cache_bytes=kv_cache,
        runner_bytes=RUNNER_BYTES,
        total_bytes=weights + kv_cache + RUNNER_BYTES,
    )
