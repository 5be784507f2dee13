"""What a bundle carries so a host or device speaks text: `tokenizer.json` and the special ids.

The tokenizer is shipped *as transformers runs it*: `AutoTokenizer(folder)
.backend_tokenizer`, serialised. That is not always the folder's own tokenizer.json
— for `model_type` qwen2, transformers 5 rebuilds the pre-tokenizer, and the
folder's file alone then splits digits differently. A runner needs only the
`tokenizers` library (or any HF-tokenizers implementation) and two rules:
`ids = encode(text)` (special tokens on), then `[bos] + ids` when `prepend_bos`.
Validation checks that this agrees with transformers on sample strings.

Special ids: eos from generation_config.json (what `generate()` stops on; an int or
a list), else config.json, else the tokenizer; bos and pad the same way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trt_edge.llm.chat import folder_chat_template, special_token_strings
from trt_edge.llm.loading import import_transformers
from trt_edge.manifest.resolved import ResolvedManifest

TOKENIZER_FILE = "tokenizer.json"

# Strings the build encodes both ways (transformers vs the bundle's tokenizer).
SAMPLE_TEXTS = (
    "The cache is a buffer.",
    "  leading spaces, trailing  ",
    "unicode: naïve café – 東京 🚀",
    "numbers 1234567890 and symbols #@!$%^&*()",
    "line one\nline two\ttabbed",
    "",
)


@dataclass(frozen=True)
class SpecialTokens:
    bos_token_id: int | None
    eos_token_ids: tuple[int, ...]
    pad_token_id: int | None


@dataclass(frozen=True)
class BundleTokenizer:
    """The bundle's tokenizer file (None when the folder has none) and its rules."""

    json_text: str | None
    special: SpecialTokens
    adds_bos: bool  # the tokenizer's own encode() already puts bos first
    prepend_bos: bool  # transformers puts bos first and the tokenizer does not: a runner must
    chat_template: str | None = None  # the folder's default chat template (`llm.chat`)
    special_strings: dict[str, str] | None = None  # bos_token, eos_token, … as strings


def _json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    doc = json.loads(path.read_text(encoding="utf-8"))
    return doc if isinstance(doc, dict) else {}


def _ids(value: Any) -> tuple[int, ...]:
    if isinstance(value, bool) or value is None:
        return ()
    if isinstance(value, int):
        return (value,)
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, int) and not isinstance(v, bool))
    return ()


def _first_id(*values: Any) -> int | None:
    for value in values:
        ids = _ids(value)
        if ids:
            return ids[0]
    return None


def special_tokens(folder: Path, tokenizer: Any | None) -> SpecialTokens:
    generation = _json(folder / "generation_config.json")
    config = _json(folder / "config.json")

    def pick(key: str, attr: str) -> Any:
        if generation.get(key) is not None:
            return generation[key]
        if config.get(key) is not None:
            return config[key]
        return getattr(tokenizer, attr, None) if tokenizer is not None else None

    return SpecialTokens(
        bos_token_id=_first_id(pick("bos_token_id", "bos_token_id")),
        eos_token_ids=_ids(pick("eos_token_id", "eos_token_id")),
        pad_token_id=_first_id(pick("pad_token_id", "pad_token_id")),
    )


def load_auto_tokenizer(manifest: ResolvedManifest) -> Any:
    """transformers' tokenizer for the folder (offline), the reference for text."""

    source = manifest.huggingface
    assert source is not None
    transformers = import_transformers(manifest)
    return transformers.AutoTokenizer.from_pretrained(
        source.folder, local_files_only=True, trust_remote_code=False
    )


def bundle_tokenizer(manifest: ResolvedManifest) -> BundleTokenizer:
    """The tokenizer and special ids the bundle carries (needs transformers and tokenizers)."""
    source = manifest.huggingface
    assert source is not None
    if not source.has_tokenizer:
        return BundleTokenizer(None, special_tokens(source.folder, None), False, False, None, {})
    from tokenizers import Tokenizer

    reference = load_auto_tokenizer(manifest)
    text = reference.backend_tokenizer.to_str()
    special = special_tokens(source.folder, reference)
    bos = special.bos_token_id
    own = Tokenizer.from_str(text).encode("x").ids
    adds_bos = bos is not None and bool(own) and own[0] == bos
    transformers_adds = bos is not None and reference("x")["input_ids"][:1] == [bos]
    return BundleTokenizer(
        text,
        special,
        adds_bos,
        transformers_adds and not adds_bos,
        folder_chat_template(source.folder),
        special_token_strings(reference),
    )
