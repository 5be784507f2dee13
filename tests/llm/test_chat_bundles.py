"""The chat template travels in the bundle and renders on the device as transformers does.

The Gemma-3 mini's folder has a Gemma-style template (chat_template.jinja), Qwen2's a
ChatML one, Llama's none: bundle.json's `llm` records each (and the special-token
strings), the validate stage checks our rendering of the staged bundle against
`apply_chat_template`, and `BundleText` reads it back from the built bundle.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.llm.llm_folders import chat_template

pytestmark = [pytest.mark.slow]

CHAT = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Name a prime."},
    {"role": "assistant", "content": "Seven."},
    {"role": "user", "content": "Another?"},
]


def bundle_doc(bundle: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((bundle / "bundle.json").read_bytes())
    return doc


@pytest.mark.parametrize(
    "arch",
    [pytest.param(a, marks=pytest.mark.xdist_group(f"llm-{a}")) for a in ("gemma3", "qwen2")],
)
def test_the_bundle_records_the_template_and_renders_it_as_transformers(
    arch: str, mini_project: Callable[[str], Path], mini_bundle: Callable[[str], Path]
) -> None:
    from transformers import AutoTokenizer
    from trt_edge_runner.text import BundleText

    folder, bundle = mini_project(arch).parent / "folder", mini_bundle(arch)
    llm = bundle_doc(bundle)["llm"]
    assert llm["chat_template"] == chat_template(arch)
    assert llm["special_tokens"] == {
        "bos_token": "<bos>",
        "eos_token": "<eos>",
        "pad_token": "<pad>",
        "unk_token": "<unk>",
    }
    report = json.loads((bundle / "reports" / "validation.json").read_bytes())
    assert report["chat_template"]["present"] and report["chat_template"]["ok"]
    assert len(report["chat_template"]["conversations"]) >= 3
    reference: Any = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    text = BundleText.from_bundle(bundle)
    want = reference.apply_chat_template(
        CHAT, tokenize=True, add_generation_prompt=True, return_dict=False
    )
    assert text.encode_chat(CHAT) == list(want)


@pytest.mark.xdist_group("llm-llama")
def test_a_model_without_a_template_records_null_and_refuses_chat_naming_the_field(
    mini_bundle: Callable[[str], Path],
) -> None:
    from trt_edge_runner.text import BundleText, NoChatTemplateError

    bundle = mini_bundle("llama")
    assert bundle_doc(bundle)["llm"]["chat_template"] is None
    text = BundleText.from_bundle(bundle)
    assert text.encode("hello")  # plain prompts still work
    with pytest.raises(NoChatTemplateError, match=r"bundle\.json: llm\.chat_template is null"):
        text.encode_chat(CHAT)


@pytest.mark.xdist_group("llm-gemma3")
def test_an_older_bundle_without_the_chat_fields_still_reads(
    mini_bundle: Callable[[str], Path], tmp_path: Path
) -> None:
    from trt_edge_runner.bundle_format import BundleManifest
    from trt_edge_runner.text import BundleText, NoChatTemplateError

    copy = tmp_path / "old"
    shutil.copytree(mini_bundle("gemma3"), copy)
    doc = bundle_doc(copy)
    del doc["llm"]["chat_template"], doc["llm"]["special_tokens"]
    (copy / "bundle.json").write_text(json.dumps(doc))
    section = BundleManifest.from_json((copy / "bundle.json").read_bytes()).llm
    assert section is not None and section.chat_template is None
    assert section.special_tokens is None and "chat_template" not in section.to_dict()
    with pytest.raises(NoChatTemplateError, match="absent") as info:
        BundleText.from_bundle(copy).encode_chat(CHAT)
    assert info.value.hint and "rebuild the bundle" in info.value.hint


@pytest.mark.xdist_group("llm-gemma3")
@pytest.mark.parametrize(
    ("field", "value"),
    [("chat_template", 3), ("special_tokens", ["<bos>"]), ("special_tokens", {"bos_token": 2})],
)
def test_chat_fields_of_the_wrong_type_are_refused_naming_the_field(
    mini_bundle: Callable[[str], Path], field: str, value: Any
) -> None:
    from trt_edge_runner.bundle_format import BundleFormatError, BundleManifest

    doc = bundle_doc(mini_bundle("gemma3"))
    doc["llm"][field] = value
    with pytest.raises(BundleFormatError, match=rf"bundle\.json: llm\.{field}(\.\w+)?: expected"):
        BundleManifest.from_dict(doc)
