"""The recipe's bundle files and `bundle.json` `llm` section, made once and cached.

`recipe_files` runs with the exported program (it needs transformers for the
tokenizer) and returns plain files — `llm.json` (the facts, with the folder's chat
template and special-token strings, `trt_edge.llm.chat`) and `tokenizer.json`
when the folder has a tokenizer — which the stage cache stores beside the program
and the `.pte`, so a rebuild from the cache neither imports transformers nor loses
them. `llm_section` turns those facts into the `LlmSection` the bundle carries.
"""

from __future__ import annotations

import json
from typing import Any

from trt_edge_runner.bundle_format import (
    LLM_SECTION_SLOTS_VERSION,
    LLM_SECTION_VERSION,
    LLM_SECTION_WINDOW_VERSION,
    LlmSection,
    TensorSpec,
    canonical_json,
)

from trt_edge.llm.tokenizer import TOKENIZER_FILE, bundle_tokenizer
from trt_edge.manifest.huggingface import (
    FILLED,
    POSITIONS_INPUT,
    SLOT_INPUT,
    TOKENS_INPUT,
    WINDOW_INPUT,
)
from trt_edge.manifest.resolved import ResolvedManifest

FACTS_FILE = "llm.json"
# `attention: filled`: window lengths are multiples of this. A new length makes XNNPACK
# re-plan its delegates (reshape), so decode pays that once per bucket of tokens, not per
# token; and attention reads at most bucket - 1 slots that hold nothing yet.
WINDOW_BUCKET = 64


def recipe_files(manifest: ResolvedManifest, wrapper: Any) -> dict[str, bytes]:
    """`llm.json` (+ `tokenizer.json`) for the bundle; `wrapper` is the exported StaticCacheLM."""

    source = manifest.huggingface
    assert source is not None
    tokenizer = bundle_tokenizer(manifest)
    facts = {
        "architecture": source.architecture,
        "max_cache_len": source.max_cache_len,
        "vocab_size": source.vocab_size,
        "bos_token_id": tokenizer.special.bos_token_id,
        "eos_token_ids": list(tokenizer.special.eos_token_ids),
        "pad_token_id": tokenizer.special.pad_token_id,
        "tokenizer": TOKENIZER_FILE if tokenizer.json_text is not None else None,
        "adds_bos": tokenizer.adds_bos,
        "prepend_bos": tokenizer.prepend_bos,
        "cache_buffers": wrapper.cache_buffer_names(),
        "chat_template": tokenizer.chat_template,
        "special_tokens": tokenizer.special_strings or {},
    }
    if source.attention == FILLED:
        facts["window"] = {"input": WINDOW_INPUT, "bucket": WINDOW_BUCKET}
    if source.slots > 1:
        facts["slots"] = {"input": SLOT_INPUT, "count": source.slots}
    files = {FACTS_FILE: canonical_json(facts)}
    if tokenizer.json_text is not None:
        files[TOKENIZER_FILE] = tokenizer.json_text.encode("utf-8")
    return files


def bundle_files(files: dict[str, bytes]) -> dict[str, bytes]:
    """The files that go into the bundle directory (all but the facts)."""
    return {name: data for name, data in files.items() if name != FACTS_FILE}


def llm_section(
    files: dict[str, bytes], method: str, outputs: tuple[TensorSpec, ...]
) -> LlmSection:
    facts = json.loads(files[FACTS_FILE])
    window = facts.get("window")
    slots = facts.get("slots")
    version = LLM_SECTION_VERSION if window is None else LLM_SECTION_WINDOW_VERSION
    if slots is not None:
        version = LLM_SECTION_SLOTS_VERSION
    return LlmSection(
        version=version,
        method=method,
        max_cache_len=facts["max_cache_len"],
        vocab_size=facts["vocab_size"],
        tokens_input=TOKENS_INPUT,
        positions_input=POSITIONS_INPUT,
        logits_output=outputs[0].name,
        eos_token_ids=tuple(facts["eos_token_ids"]),
        bos_token_id=facts["bos_token_id"],
        pad_token_id=facts["pad_token_id"],
        tokenizer=facts["tokenizer"],
        adds_bos=facts["adds_bos"],
        prepend_bos=facts["prepend_bos"],
        requires_zeroed_planned_memory=True,
        cache_buffers=tuple(facts["cache_buffers"]),
        architecture=facts["architecture"],
        chat_template=facts.get("chat_template"),
        special_tokens=dict(facts.get("special_tokens") or {}),
        window_input=None if window is None else window["input"],
        window_bucket=None if window is None else window["bucket"],
        slot_input=None if slots is None else slots["input"],
        slots=1 if slots is None else slots["count"],
    )
