"""Tool calls through the OpenAI API, driven by the official `openai` client over the real
engine on the mini Qwen-3 (ChatML template listing the tools in its system turn; random
weights, its most cache, 256 slots, so the tools fit): `tool_choice` named or `required` gives
a call of an offered tool whose arguments parse against its parameters, as `tool_calls` with
`finish_reason` "tool_calls", streamed the way OpenAI streams calls (the client's own
accumulation reads it back); the call and the tool's answer go back in the conversation and
the model answers; tools on /v1/completions and a tool_choice naming no offered tool are 400s
naming the field."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam

from tests.helpers.session_builds import build_once
from tests.llm.conftest import build_bundle
from tests.llm.llm_folders import manifest_text
from tests.serve.conftest import Served, bundle_doc

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("llm-qwen3")]

CACHE_SLOTS = 256
# Small on purpose: the mini's tokenizer spends some 190 tokens on the tools system turn and
# 54 on one call, and its positions end at 256.
ADD = {
    "type": "object",
    "properties": {"a": {"enum": [1, 2]}},
    "required": ["a"],
    "additionalProperties": False,
}
TOOLS: list[ChatCompletionToolParam] = [
    {"type": "function", "function": {"name": "add", "parameters": ADD}},
]
ASK: list[ChatCompletionMessageParam] = [{"role": "user", "content": "add 1"}]


@pytest.fixture(scope="module")
def bundle(llm_root: Path, mini_project: Callable[[str], Path]) -> Path:
    """The mini Qwen-3 with a CACHE_SLOTS-slot cache (its tools system turn needs room)."""
    folder = mini_project("qwen3").parent / "folder"

    def make(work: Path) -> Path:
        text = manifest_text("qwen3", max_cache_len=CACHE_SLOTS)
        manifest = work / "manifest.yaml"
        manifest.write_text(text.replace("path: ./folder", f"path: {folder}"), encoding="utf-8")
        return build_bundle(manifest, work / "out")

    return build_once(llm_root, f"qwen3-{CACHE_SLOTS}-bundle", make)


@pytest.fixture(scope="module")
def client(served: Served) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{served.url}/v1", api_key="unused", max_retries=0)


@pytest.fixture(scope="module")
def name(bundle: Path) -> str:
    model: str = bundle_doc(bundle)["model"]["name"]
    return model


def test_a_named_tool_choice_gives_a_call_whose_arguments_validate(
    client: openai.OpenAI, name: str
) -> None:
    for seed in (1, 2):
        done = client.chat.completions.create(
            model=name, messages=ASK, tools=TOOLS, temperature=1.0, seed=seed,
            tool_choice={"type": "function", "function": {"name": "add"}},
        )  # fmt: skip
        choice = done.choices[0]
        assert choice.finish_reason == "tool_calls"
        calls = choice.message.tool_calls
        assert calls is not None and len(calls) == 1
        call = calls[0]
        assert call.type == "function" and call.function.name == "add"
        jsonschema.validate(json.loads(call.function.arguments), ADD)
        assert call.id.startswith("call_")


def test_a_required_call_streams_as_openai_streams_calls(client: openai.OpenAI, name: str) -> None:
    body: dict[str, Any] = {
        "model": name, "messages": ASK, "tools": TOOLS, "tool_choice": "required",
        "temperature": 0,
    }  # fmt: skip
    whole = client.chat.completions.create(**body)
    with client.chat.completions.stream(**body) as stream:
        final = stream.get_final_completion()
    assert whole.choices[0].message.tool_calls is not None
    assert final.choices[0].finish_reason == "tool_calls"
    streamed = final.choices[0].message.tool_calls
    assert streamed is not None and len(streamed) == 1
    expected = whole.choices[0].message.tool_calls[0].function
    assert streamed[0].function.name == expected.name == "add"
    assert json.loads(streamed[0].function.arguments) == json.loads(expected.arguments)


def test_a_call_and_its_result_go_back_and_the_model_answers(
    client: openai.OpenAI, name: str
) -> None:
    first = client.chat.completions.create(
        model=name, messages=ASK, tools=TOOLS, temperature=0,
        tool_choice={"type": "function", "function": {"name": "add"}},
    )  # fmt: skip
    calls = first.choices[0].message.tool_calls
    assert calls is not None
    call = calls[0]
    assert call.type == "function"
    arguments = json.loads(call.function.arguments)
    turn: list[ChatCompletionMessageParam] = [
        *ASK,
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call.id, "type": "function",
             "function": {"name": call.function.name, "arguments": call.function.arguments}}]},
        {"role": "tool", "tool_call_id": call.id, "content": str(arguments["a"] + 1)},
    ]  # fmt: skip
    answer = client.chat.completions.create(
        model=name, messages=turn, tools=TOOLS, tool_choice="none", temperature=0, max_tokens=8
    )
    assert answer.choices[0].message.role == "assistant"
    assert answer.choices[0].message.tool_calls is None
    assert answer.usage is not None
    assert answer.usage.prompt_tokens > first.usage.prompt_tokens  # type: ignore[union-attr]


def test_tool_parameters_that_name_no_offered_tool_are_400s(
    client: openai.OpenAI, name: str
) -> None:
    bad: list[tuple[dict[str, Any], str]] = [
        ({"tool_choice": {"type": "function", "function": {"name": "nope"}}},
         "tool_choice.function.name"),
        ({"tools": [{"type": "function", "function": {"name": "bad name"}}]},
         "tools[0].function.name"),
        # Parameters the grammar engine cannot compile, once a call is forced: look-behind.
        ({"tools": [{"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {"s": {"type": "string", "pattern": "(?<=a)b"}}}}}],
          "tool_choice": "required"}, "tools"),
    ]  # fmt: skip
    for extra, field in bad:
        body = {"model": name, "messages": ASK, "tools": TOOLS, **extra}
        with pytest.raises(openai.BadRequestError) as caught:
            client.chat.completions.create(**body)
        assert isinstance(caught.value.body, dict) and caught.value.body["param"] == field
    with pytest.raises(openai.BadRequestError) as caught:
        client.completions.create(model=name, prompt="x", extra_body={"tools": TOOLS})
    assert isinstance(caught.value.body, dict) and caught.value.body["param"] == "tools"
