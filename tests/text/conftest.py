"""Tokenizer folders for the text-layer tests: a BPE trained here, saved by transformers.

`chat_text(template)` writes a tokenizer folder (the example's trained byte-level BPE,
its special tokens, `template` as transformers 5 saves it) once per session and returns
transformers' tokenizer for it (the reference) and our `BundleText` over a bundle-style
directory holding the `tokenizer.json` and `llm` facts the build would record.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from trt_edge_runner.bundle_format import LLM_SECTION_VERSION, LlmSection

from tests.llm.llm_folders import example_writer

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@dataclass(frozen=True)
class ChatText:
    folder: Path
    reference: Any  # transformers' tokenizer for the folder
    text: Any  # trt_edge_runner.text.BundleText over the bundle-style directory


def section_for(folder: Path, reference: Any, vocab: int) -> LlmSection:
    """The `llm` section the build records for this folder (its chat fields from the sdk)."""
    from trt_edge.llm.chat import folder_chat_template, special_token_strings

    return LlmSection(
        version=LLM_SECTION_VERSION,
        method="forward",
        max_cache_len=64,
        vocab_size=vocab,
        tokens_input="input_ids",
        positions_input="cache_position",
        logits_output="logits",
        eos_token_ids=(reference.eos_token_id,),
        bos_token_id=reference.bos_token_id,
        pad_token_id=reference.pad_token_id,
        tokenizer="tokenizer.json",
        adds_bos=True,
        prepend_bos=False,
        requires_zeroed_planned_memory=True,
        cache_buffers=(),
        architecture="test",
        chat_template=folder_chat_template(folder),
        special_tokens=special_token_strings(reference),
    )


@pytest.fixture(scope="session")
def chat_text(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str | None], ChatText]:
    made: dict[str | None, ChatText] = {}
    writer: Any = example_writer()
    tokenizer_object = writer.train_tokenizer(512)

    def make(template: str | None) -> ChatText:
        if template in made:
            return made[template]
        import transformers
        from trt_edge_runner.text import BundleText

        hf: Any = transformers  # untyped for mypy's strict mode

        root = tmp_path_factory.mktemp("chat")
        folder = root / "folder"
        writer.save_tokenizer(tokenizer_object, template, folder)
        reference = hf.AutoTokenizer.from_pretrained(folder, local_files_only=True)
        bundle = root / "bundle"
        bundle.mkdir()
        (bundle / "tokenizer.json").write_text(
            reference.backend_tokenizer.to_str(), encoding="utf-8"
        )
        section = section_for(folder, reference, 512)
        made[template] = ChatText(folder, reference, BundleText.from_bundle(bundle, section))
        return made[template]

    return make
