"""A save_pretrained folder → an eager transformers model, and the export wrapper around it.

Loading never touches the network: `HF_HUB_OFFLINE=1` is set before transformers is
imported, every `from_pretrained` gets `local_files_only=True`, and no code from the
folder runs (`trust_remote_code=False`). Weights load as float32 (transformers 5
would otherwise pick the checkpoint's dtype).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from trt_edge_runner.bundle_format import file_sha256

from trt_edge.manifest.huggingface import FILLED, FUSED
from trt_edge.manifest.resolved import ResolvedManifest
from trt_edge.pipeline.errors import ModelSourceError
from trt_edge.pipeline.load_model import SourceDigest

MIN_TRANSFORMERS = (5, 0)  # AttentionInterface, masking_utils, logits_to_keep, dtype=


def _where(manifest: ResolvedManifest) -> str:
    return manifest.where("model", "huggingface", "path")


def folder_digest(manifest: ResolvedManifest) -> SourceDigest:
    """Every file of the folder (config, weights, tokenizer, generation config): any of them
    changes what the recipe builds or what the bundle carries. Hidden files are skipped."""
    source = manifest.huggingface
    assert source is not None
    folder = source.folder
    if not folder.is_dir():
        raise ModelSourceError(
            f"{_where(manifest)}: model.huggingface.path: {folder} is not a folder"
        )
    digest = hashlib.sha256()
    names: list[str] = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if any(part.startswith(".") for part in Path(rel).parts):
            continue
        digest.update(rel.encode() + b"\0" + bytes.fromhex(file_sha256(path)))
        names.append(rel)
    return SourceDigest(sha256=digest.hexdigest(), files=tuple(names))


def import_transformers(manifest: ResolvedManifest) -> Any:
    """transformers, offline and quiet, or a `ModelSourceError` saying what to install."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    try:
        import transformers
    except ImportError as exc:
        raise ModelSourceError(
            f"{_where(manifest)}: the Hugging Face recipe needs transformers ({exc})",
            hint="pip install transformers==5.23.0 (and list it in model.requirements)",
        ) from None
    major_minor = tuple(int(p) for p in transformers.__version__.split(".")[:2] if p.isdigit())
    if major_minor < MIN_TRANSFORMERS:
        raise ModelSourceError(
            f"{_where(manifest)}: transformers {transformers.__version__} is installed; the "
            "Hugging Face recipe needs transformers >= 5.0",
            hint="pip install transformers==5.23.0",
        )
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    return transformers


def load_eager(manifest: ResolvedManifest, attention: str | None = None) -> Any:
    """The folder's model in eval mode, float32, as transformers runs it (the reference)."""
    import torch

    source = manifest.huggingface
    assert source is not None
    transformers = import_transformers(manifest)
    kwargs: dict[str, Any] = {}
    if attention is not None:
        kwargs["attn_implementation"] = attention
    try:
        model = transformers.AutoModelForCausalLM.from_pretrained(
            source.folder,
            dtype=torch.float32,
            local_files_only=True,
            trust_remote_code=False,
            **kwargs,
        )
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise ModelSourceError(
            f"{_where(manifest)}: transformers could not load {source.folder}: "
            f"{type(exc).__name__}: {first}",
            hint="the folder must be what save_pretrained wrote (config.json and safetensors)",
        ) from exc
    if type(model).__name__ != source.architecture:
        raise ModelSourceError(
            f"{_where(manifest)}: {source.folder} loaded as {type(model).__name__}, but its "
            f"config.json names {source.architecture}"
        )
    return model.eval()


def load_for_export(manifest: ResolvedManifest) -> Any:
    """The model wrapped for export: static cache, bmm attention and the exact rewrites."""
    from trt_edge.llm.attention import implementation, load_fused_attention_op, register_attention
    from trt_edge.llm.rewrites import LastPositionHead, add_rotation_buffer, replace_tanh_gelu
    from trt_edge.llm.static_cache import cache_wrapper

    source = manifest.huggingface
    assert source is not None
    model = load_eager(manifest)
    register_attention()
    fused = source.attention == FUSED
    if fused:
        load_fused_attention_op()
    model.set_attn_implementation(implementation(fused=fused, rows=source.slots > 1))
    replace_tanh_gelu(model)
    model.lm_head = LastPositionHead(model.lm_head)  # the same Parameter: ties stay tied
    wrapper = cache_wrapper(
        model,
        source.max_cache_len,
        windowed=source.attention == FILLED,
        fused=fused,
        slots=source.slots,
    )
    config = model.config.get_text_config()
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    add_rotation_buffer(wrapper, int(head_dim), next(model.parameters()).dtype)
    return wrapper.eval()
