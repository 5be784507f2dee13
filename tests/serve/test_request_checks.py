"""What the service refuses before an engine sees it: bodies, OpenAI parameters, tensors, and
exposure off loopback without a key — each a 400 (or a refused start) naming the field."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest
from trt_edge_runner.errors import UsageError
from trt_edge_runner.serve.api_errors import ApiError
from trt_edge_runner.serve.exposure import checked_exposure, is_loopback
from trt_edge_runner.serve.generation_params import (
    body_object,
    generation_params,
    messages_of,
    prompt_of,
)
from trt_edge_runner.serve.tensor_bytes import TensorDataError, pack, unpack
from trt_edge_runner.serve.tool_calls import Tool, parse_tool_calls, tool_use_of


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"temperature": 2.5}, "temperature"),
        ({"temperature": "hot"}, "temperature"),
        ({"top_p": 1.5}, "top_p"),
        ({"top_p": 0}, "top_p"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"max_tokens": True}, "max_tokens"),
        ({"max_tokens": 3.5}, "max_tokens"),
        ({"seed": "7"}, "seed"),
        ({"stop": ["a", "b", "c", "d", "e"]}, "stop"),
        ({"stop": [""]}, "stop"),
        ({"stop": 3}, "stop"),
        ({"n": 2}, "n"),
        ({"logprobs": True}, "logprobs"),
        ({"presence_penalty": 0.5}, "presence_penalty"),
        ({"stream": "yes"}, "stream"),
        ({"stream_options": []}, "stream_options"),
        ({"top_k": -1}, "top_k"),
        ({"repetition_penalty": 0}, "repetition_penalty"),
        ({"response_format": {"type": "json"}}, "response_format.type"),
        ({"response_format": "json"}, "response_format"),
        ({"response_format": {"type": "json_object"}, "ignore_eos": True}, "ignore_eos"),
    ],
)
def test_an_out_of_range_or_mistyped_parameter_is_a_400_naming_it(
    body: dict[str, Any], field: str
) -> None:
    with pytest.raises(ApiError) as caught:
        generation_params(body)
    assert caught.value.status == 400
    assert caught.value.field == field
    assert str(caught.value).startswith(f"{field}: ")


ADD = {"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"tools": {"add": {}}}, "tools"),
        ({"tools": [{"type": "function", "function": {"name": "a b"}}]}, "tools[0].function.name"),
        ({"tools": [ADD, ADD]}, "tools"),
        ({"tools": [ADD], "tool_choice": "sometimes"}, "tool_choice"),
        ({"tools": [ADD], "tool_choice": {"type": "function", "function": {"name": "mul"}}},
         "tool_choice.function.name"),
        ({"tool_choice": "required"}, "tool_choice"),
        ({"tools": [ADD], "parallel_tool_calls": "yes"}, "parallel_tool_calls"),
    ],
)  # fmt: skip
def test_bad_tools_are_400s_naming_the_part(body: dict[str, Any], field: str) -> None:
    with pytest.raises(ApiError) as caught:
        tool_use_of(body)
    assert caught.value.field == field


def test_tool_choice_decides_what_is_forced_and_what_is_read() -> None:
    assert not tool_use_of({}).active
    none = tool_use_of({"tools": [ADD], "tool_choice": "none"})
    assert not none.active and none.template_tools() == [ADD]  # rendered, not read
    choice = {"type": "function", "function": {"name": "add"}}
    named = tool_use_of({"tools": [ADD], "tool_choice": choice})
    assert named.forced and named.named == "add" and '"const": "add"' in named.forced_grammar()


def test_calls_are_read_from_the_text_and_anything_else_stays_text() -> None:
    tools = [Tool("add", {"type": "object"})]
    call = '<tool_call>\n{"name": "add", "arguments": {"a": 1}}\n</tool_call>'
    text = f'ok {call} <tool_call>{{"name": "mul"}}</tool_call>'
    content, calls = parse_tool_calls(text, tools)
    assert [(c.name, c.arguments) for c in calls] == [("add", '{"a": 1}')]
    assert content == 'ok  <tool_call>{"name": "mul"}</tool_call>'
    assert parse_tool_calls("plain", tools) == ("plain", [])


def test_messages_carry_tool_calls_and_results_as_templates_read_them() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1}'}}
    messages = messages_of({"messages": [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "2"},
    ]})  # fmt: skip
    assert messages[1]["tool_calls"][0]["function"]["arguments"] == {"a": 1}
    assert messages[2] == {"role": "tool", "content": "2", "tool_call_id": "c1"}
    bad = {**call, "function": {"name": "add", "arguments": "{oops"}}
    with pytest.raises(ApiError) as caught:
        messages_of({"messages": [{"role": "assistant", "tool_calls": [bad]}]})
    assert caught.value.field == "messages[0].tool_calls[0].function.arguments"


def test_a_text_response_format_is_what_is_generated_anyway() -> None:
    assert generation_params({"response_format": {"type": "text"}}).max_tokens is None


def test_parameters_in_range_reach_the_engine_as_given() -> None:
    params = generation_params(
        {"temperature": 0, "top_p": 0.9, "seed": 7, "max_tokens": 5, "stop": "x", "top_k": 4}
    )
    assert params.max_tokens == 5
    assert params.stop == ("x",)
    assert params.sampling.to_engine() == {
        "temperature": 0.0, "top_k": 4, "top_p": 0.9, "repetition_penalty": 1.0, "seed": 7,
    }  # fmt: skip


def test_unseeded_requests_get_different_seeds() -> None:
    seeds = {generation_params({}).sampling.seed for _ in range(8)}
    assert len(seeds) > 1


@pytest.mark.parametrize(
    ("raw", "message"),
    [(b"", "no body"), (b"{nope", "not valid JSON"), (b"[1]", "expected a JSON object")],
)
def test_a_malformed_body_is_a_400_on_the_body(raw: bytes, message: str) -> None:
    with pytest.raises(ApiError) as caught:
        body_object(raw)
    assert caught.value.field == "body"
    assert message in caught.value.message


def test_prompts_are_a_string_or_token_ids() -> None:
    assert prompt_of({"prompt": "hi"}) == "hi"
    assert prompt_of({"prompt": ["hi"]}) == "hi"
    assert prompt_of({"prompt": [1, 2]}) == [1, 2]
    for bad in (None, [], [-1], [1.5], {"a": 1}, ["a", "b"]):
        with pytest.raises(ApiError) as caught:
            prompt_of({"prompt": bad})
        assert caught.value.field == "prompt"


def test_messages_name_the_message_at_fault() -> None:
    assert messages_of({"messages": [{"role": "user", "content": "hi"}]}) == [
        {"role": "user", "content": "hi"}
    ]
    with pytest.raises(ApiError) as caught:
        messages_of({"messages": [{"role": "user", "content": "a"}, {"role": "robot"}]})
    assert caught.value.field == "messages[1].role"
    with pytest.raises(ApiError) as caught:
        messages_of({"messages": [{"role": "user", "content": 3}]})
    assert caught.value.field == "messages[0].content"


def test_tensors_pack_little_endian_and_round_trip() -> None:
    data = pack("float32", [2, 2], [[1.0, 2.0], [3.0, 4.5]])
    assert data == struct.pack("<4f", 1.0, 2.0, 3.0, 4.5)
    assert unpack("float32", data) == [1.0, 2.0, 3.0, 4.5]
    assert unpack("int64", pack("int64", [3], [1, -2, 3])) == [1, -2, 3]
    assert unpack("bfloat16", pack("bfloat16", [2], [1.0, -2.0])) == [1.0, -2.0]
    with pytest.raises(TensorDataError, match="holds 3 values"):
        pack("float32", [2, 2], [1.0, 2.0, 3.0])
    with pytest.raises(TensorDataError, match="int64"):
        pack("int64", [1], [1.5])


def test_loopback_needs_no_key_and_anything_else_does() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.2")
    assert checked_exposure("127.0.0.1", 8000, None, None, None).scheme == "http"
    with pytest.raises(UsageError, match="needs an API key") as caught:
        checked_exposure("0.0.0.0", 8000, None, None, None)
    assert "TRT_EDGE_API_KEY" in str(caught.value)
    assert checked_exposure("0.0.0.0", 8000, "k", None, None).api_key == "k"
    with pytest.raises(UsageError, match="both --tls-cert and --tls-key"):
        checked_exposure("127.0.0.1", 8000, None, None, Path("key.pem"))
