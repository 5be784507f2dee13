"""Our chat-template rendering equals transformers' `apply_chat_template`, text and ids."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.llm.llm_folders import example_writer
from tests.text.conftest import ChatText

WRITER: Any = example_writer()
TEMPLATES = {"gemma": WRITER.GEMMA_CHAT_TEMPLATE, "chatml": WRITER.CHATML_CHAT_TEMPLATE}

CONVERSATIONS: list[list[dict[str, Any]]] = [
    [{"role": "user", "content": "Hi there"}],
    [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "What is 2+2?"},
    ],
    [
        {"role": "user", "content": "First question"},
        {"role": "assistant", "content": "First answer"},
        {"role": "user", "content": "  Second, with  spaces  "},
        {"role": "assistant", "content": "Second answer"},
        {"role": "user", "content": "Third: naïve café 東京 🚀"},
    ],
    [
        {"role": "system", "content": [{"type": "text", "text": "System as parts"}]},
        {"role": "user", "content": [{"type": "text", "text": "User as parts"}]},
    ],
    [
        {"role": "user", "content": "Call a tool", "tool_calls": None},
        {"role": "assistant", "content": "ok", "reasoning": "thinking hard"},
        {"role": "user", "content": "line one\nline two\ttab"},
    ],
]


# The ChatML template prints content as it is: list parts are only Gemma's format.
CASES = [
    (template, number)
    for template in sorted(TEMPLATES)
    for number, conversation in enumerate(CONVERSATIONS)
    if template == "gemma" or all(isinstance(m["content"], str) for m in conversation)
]


@pytest.mark.parametrize(("template", "number"), CASES)
@pytest.mark.parametrize("generation_prompt", [True, False])
def test_rendering_and_ids_equal_transformers(
    chat_text: Callable[[str | None], ChatText], template: str, number: int, generation_prompt: bool
) -> None:
    case = chat_text(TEMPLATES[template])
    messages = CONVERSATIONS[number]
    want = case.reference.apply_chat_template(
        messages, tokenize=False, add_generation_prompt=generation_prompt
    )
    want_ids = case.reference.apply_chat_template(
        messages, tokenize=True, add_generation_prompt=generation_prompt, return_dict=False
    )
    assert case.text.render_chat(messages, add_generation_prompt=generation_prompt) == want
    assert case.text.encode_chat(messages, add_generation_prompt=generation_prompt) == want_ids


def test_tools_are_rendered_with_tojson_as_transformers_does(
    chat_text: Callable[[str | None], ChatText],
) -> None:
    case = chat_text(TEMPLATES["chatml"])
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather in <city> & 'quotes' — ünïcode",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ]
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    want = case.reference.apply_chat_template(
        messages, tools=tools, tokenize=False, add_generation_prompt=True
    )
    assert "<city>" in want and "ünïcode" in want  # no HTML escaping, no \\u escapes
    assert case.text.render_chat(messages, tools=tools) == want


def test_raise_exception_in_the_template_is_a_typed_error(
    chat_text: Callable[[str | None], ChatText],
) -> None:
    from trt_edge_runner.text import ChatTemplateError

    case = chat_text(TEMPLATES["gemma"])
    messages = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
    with pytest.raises(Exception, match="roles must alternate"):
        case.reference.apply_chat_template(messages, tokenize=False)
    with pytest.raises(ChatTemplateError, match="roles must alternate"):
        case.text.render_chat(messages)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("{{ messages.__class__.__mro__ }}", "unsafe"),
        ("{% set ns = namespace(_x=1) %}{{ ns._x }}", "underscore-prefixed attribute '_x'"),
        ("{% set ns = namespace() %}{% set ns._y = 1 %}", "unsafe|underscore"),
    ],
)
def test_sandbox_refuses_reaching_into_python(source: str, message: str) -> None:
    from trt_edge_runner.text import ChatTemplate, ChatTemplateError

    with pytest.raises(ChatTemplateError, match=message):
        ChatTemplate(source).render([{"role": "user", "content": "x"}])


def test_loop_controls_generation_block_and_strftime_render() -> None:
    from trt_edge_runner.text import ChatTemplate

    source = (
        "{% for m in messages %}{% if loop.index > 2 %}{% break %}{% endif %}"
        "{% generation %}[{{ m.content }}]{% endgeneration %}{% endfor %}"
        "{{ strftime_now('%Y') | length }}{{ dict(a=1) | tojson }}"
    )
    messages = [{"role": "user", "content": c} for c in "abc"]
    assert ChatTemplate(source).render(messages) == '[a][b]4{"a": 1}'


def test_template_from_tokenizer_config_json_as_older_folders_store_it(tmp_path: Path) -> None:
    from trt_edge.llm.chat import folder_chat_template
    from trt_edge.llm.errors import ChatTemplateSourceError

    (tmp_path / "tokenizer_config.json").write_text(
        json.dumps({"chat_template": "{{ messages[0].content }}"}), encoding="utf-8"
    )
    assert folder_chat_template(tmp_path) == "{{ messages[0].content }}"
    named = [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}]
    (tmp_path / "tokenizer_config.json").write_text(
        json.dumps({"chat_template": named}), encoding="utf-8"
    )
    assert folder_chat_template(tmp_path) == "D"
    (tmp_path / "chat_template.jinja").write_text("J", encoding="utf-8")
    assert folder_chat_template(tmp_path) == "J"  # the .jinja file wins, as in transformers 5
    (tmp_path / "chat_template.jinja").unlink()
    (tmp_path / "tokenizer_config.json").write_text(
        json.dumps({"chat_template": [{"name": "tool_use", "template": "T"}]}), encoding="utf-8"
    )
    with pytest.raises(ChatTemplateSourceError, match="none named 'default'"):
        folder_chat_template(tmp_path)


def test_a_folder_without_template_gives_a_typed_error_naming_the_field(
    chat_text: Callable[[str | None], ChatText],
) -> None:
    from trt_edge_runner.text import NoChatTemplateError

    case = chat_text(None)
    assert not case.text.has_chat_template
    with pytest.raises(NoChatTemplateError, match=r"llm\.chat_template is null") as info:
        case.text.encode_chat([{"role": "user", "content": "x"}])
    assert info.value.hint and "--prompt" in info.value.hint
