"""What a manifest can know about a Hugging Face folder without importing transformers.

`trt-edge validate` must stay instant, so a `model.huggingface` folder is read
here with `json` and `pathlib` only: `config.json` says which architecture and
how many positions and tokens the model has, the directory listing says whether
the weights and a tokenizer are there. The build loads the model itself later
(`trt_edge.llm.loading`); this module only decides whether it can.

The recipe's inputs are fixed (one method serving prefill and decode), so a
manifest may leave `inputs` out and `implied_inputs` supplies them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trt_edge_runner.bundle_format import DimRange, Profile, TensorSpec

from trt_edge.manifest.diagnostics import FieldProblem

# Architectures the recipe is written and tested for, with the `model_type` their
# config.json carries. Anything else is refused at validate time, not half-built.
SUPPORTED_ARCHITECTURES: dict[str, str] = {
    "Gemma3ForCausalLM": "gemma3_text",
    "LlamaForCausalLM": "llama",
    "Qwen2ForCausalLM": "qwen2",
    "Qwen3ForCausalLM": "qwen3",
}

SEQ = "seq"  # the symbol of the new tokens
TOKENS_INPUT = "input_ids"
POSITIONS_INPUT = "cache_position"
# `attention: filled`: a third input whose length (symbol WINDOW) is how many cache slots
# attention reads, the written ones rounded up to WINDOW_BUCKET (see trt_edge.llm.window).
FILLED = "filled"
# `attention: fused`: one operator reads the cache in place up to the call's last position
# (trt_edge.llm.attention.fused_attention); no third input. Full-attention layers only.
FUSED = "fused"
WINDOW = "window"
WINDOW_INPUT = "cache_window"
# `runtime.slots` > 1: the program holds that many KV caches; each call's rows (symbol
# BATCH) name the slot they read and write in SLOT_INPUT, and carry their own positions.
BATCH = "batch"
SLOT_INPUT = "cache_slot"

SAFETENSORS = "model.safetensors"
SAFETENSORS_INDEX = "model.safetensors.index.json"
PICKLED_WEIGHTS = ("pytorch_model.bin", "pytorch_model.bin.index.json")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model")


class FolderProblem(FieldProblem):
    """The `model.huggingface` folder cannot be built."""


@dataclass(frozen=True)
class FolderFacts:
    """What config.json and the directory listing say about a save_pretrained folder."""

    folder: Path
    architecture: str
    model_type: str
    vocab_size: int
    max_position_embeddings: int | None
    weights: tuple[str, ...]  # safetensors files, relative to the folder
    has_tokenizer: bool
    # Why `attention: fused` cannot build this model (sliding-window layers, a logit
    # softcap), or None: the fused operator attends causally over every earlier position.
    fused_obstacle: str | None = None


def _read_config(folder: Path) -> dict[str, Any]:
    config = folder / "config.json"
    if not config.is_file():
        raise FolderProblem(
            f"{folder} has no config.json: not a save_pretrained folder; write it with "
            "model.save_pretrained(folder) and tokenizer.save_pretrained(folder)"
        )
    try:
        doc = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise FolderProblem(f"{config} cannot be read as JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise FolderProblem(f"{config} is not a JSON object")
    return doc


def _architecture(config: dict[str, Any], source: Path) -> tuple[str, str]:
    supported = ", ".join(SUPPORTED_ARCHITECTURES)
    model_type = config.get("model_type")
    named = config.get("architectures")
    if isinstance(named, list) and named:
        known = [a for a in named if a in SUPPORTED_ARCHITECTURES]
        if not known:
            raise FolderProblem(
                f"{source}: architecture {', '.join(map(str, named))} is not supported by the "
                f"Hugging Face recipe (supported: {supported})"
            )
        architecture = known[0]
    else:
        by_type = {t: a for a, t in SUPPORTED_ARCHITECTURES.items()}
        if model_type not in by_type:
            raise FolderProblem(
                f"{source}: model_type {model_type!r} with no `architectures` is not supported "
                f"by the Hugging Face recipe (supported: {supported})"
            )
        architecture = by_type[str(model_type)]
    expected = SUPPORTED_ARCHITECTURES[architecture]
    if model_type != expected:
        raise FolderProblem(
            f"{source}: {architecture} needs model_type {expected!r}, config.json says "
            f"{model_type!r} (a multimodal or other variant is not supported)"
        )
    return architecture, expected


def _weights(folder: Path) -> tuple[str, ...]:
    single = folder / SAFETENSORS
    index = folder / SAFETENSORS_INDEX
    if single.is_file():
        return (SAFETENSORS,)
    if index.is_file():
        try:
            weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
            shards = sorted({str(name) for name in weight_map.values()})
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError):
            raise FolderProblem(f"{index} is not a safetensors index (no weight_map)") from None
        missing = [name for name in shards if not (folder / name).is_file()]
        if missing:
            raise FolderProblem(
                f"{folder}: weight file(s) {', '.join(missing)} listed in {SAFETENSORS_INDEX} "
                "are missing; copy the whole folder"
            )
        return tuple(shards)
    pickled = [name for name in PICKLED_WEIGHTS if (folder / name).is_file()]
    if pickled:
        raise FolderProblem(
            f"{folder} holds {pickled[0]} (pickled weights) but no {SAFETENSORS}: the recipe "
            "loads safetensors only; re-save with model.save_pretrained(folder)"
        )
    raise FolderProblem(
        f"{folder} has no weights: neither {SAFETENSORS} nor {SAFETENSORS_INDEX}; write them "
        "with model.save_pretrained(folder)"
    )


def _fused_obstacle(config: dict[str, Any]) -> str | None:
    """What in config.json the fused operator cannot compute, or None."""
    nested = config.get("text_config")
    text: dict[str, Any] = nested if isinstance(nested, dict) else config
    layer_types = text.get("layer_types")
    if isinstance(layer_types, list):
        sliding = "sliding_attention" in layer_types
    else:  # older configs: a window that is switched on
        sliding = bool(text.get("sliding_window")) and text.get("use_sliding_window") is not False
    if sliding:
        return "it has sliding-window attention layers"
    if text.get("attn_logit_softcapping") is not None:
        return "its attention has a logit softcap"
    return None


def _positive_int(config: dict[str, Any], key: str, source: Path) -> int | None:
    value = config.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise FolderProblem(f"{source}: {key} is {value!r}, expected a positive integer")
    return value


def read_folder(folder: Path) -> FolderFacts:
    """The facts of `folder`, or `FolderProblem` saying why it cannot be built."""
    if not folder.exists():
        raise FolderProblem(
            f"folder {folder} does not exist; the path is relative to the manifest "
            "(write the model there with save_pretrained)"
        )
    if not folder.is_dir():
        raise FolderProblem(f"{folder} is not a folder; give the save_pretrained directory")
    config = _read_config(folder)
    source = folder / "config.json"
    architecture, model_type = _architecture(config, source)
    vocab_size = _positive_int(config, "vocab_size", source)
    if vocab_size is None:
        raise FolderProblem(f"{source} has no vocab_size")
    return FolderFacts(
        folder=folder,
        architecture=architecture,
        model_type=model_type,
        vocab_size=vocab_size,
        max_position_embeddings=_positive_int(config, "max_position_embeddings", source),
        weights=_weights(folder),
        has_tokenizer=any((folder / name).is_file() for name in TOKENIZER_FILES),
        fused_obstacle=_fused_obstacle(config),
    )


def implied_inputs(
    vocab_size: int, max_cache_len: int, attention: str = FILLED, slots: int = 1
) -> tuple[TensorSpec, ...]:
    """The recipe's method inputs: the new tokens, the cache positions they are written to and,
    with `attention: filled`, the window of positions attention reads (only its length counts).

    With `slots` > 1 every call advances `batch` conversations: tokens and positions gain a
    leading batch dimension (each row its own positions) and `cache_slot [batch]` says which
    of the program's KV caches each row reads and writes."""
    inputs: tuple[TensorSpec, ...]
    if slots > 1:
        inputs = (
            TensorSpec(TOKENS_INPUT, "int64", (BATCH, SEQ), (0, vocab_size)),
            TensorSpec(POSITIONS_INPUT, "int64", (BATCH, SEQ), (0, max_cache_len)),
            TensorSpec(SLOT_INPUT, "int64", (BATCH,), (0, slots)),
        )
    else:
        inputs = (
            TensorSpec(TOKENS_INPUT, "int64", (1, SEQ), (0, vocab_size)),
            TensorSpec(POSITIONS_INPUT, "int64", (SEQ,), (0, max_cache_len)),
        )
    if attention == FILLED:
        inputs += (TensorSpec(WINDOW_INPUT, "int64", (WINDOW,), (0, max_cache_len)),)
    return inputs


def with_window_dim(profiles: tuple[Profile, ...], max_cache_len: int) -> tuple[Profile, ...]:
    """Every profile accepts any window `[1, max_cache_len]` (opt: the whole cache).

    The window is a profile dimension like `seq` — on TensorRT, where a profile's kernels
    are tuned for a short or a long context — but the recipe implies its range, as it
    implies the inputs: whatever the profile, a call may come at any fill.
    """
    window = DimRange(1, max_cache_len, max_cache_len)
    return tuple(
        p if WINDOW in p.dims else Profile(name=p.name, dims={**p.dims, WINDOW: window})
        for p in profiles
    )


def describe_inputs(inputs: tuple[TensorSpec, ...]) -> str:
    """`input_ids int64 [1, seq] values [0, 2048), cache_position ...` for messages."""
    parts = []
    for spec in inputs:
        shape = ", ".join(str(d) for d in spec.shape)
        values = f" values [{spec.values[0]}, {spec.values[1]})" if spec.values else ""
        parts.append(f"{spec.name} {spec.dtype} [{shape}]{values}")
    return ", ".join(parts)
