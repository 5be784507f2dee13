"""Structured output through the OpenAI API, driven by the official `openai` client over the
real engine on the mini Gemma-3 bundle (random weights, so unconstrained text is noise): with
`response_format` json_schema or json_object the text always parses and validates, streamed or
not, in chat and completions; a schema the grammar engine cannot compile is a 400 naming
`response_format.json_schema`. A property test draws schemas from a small family (objects of
bounded integers, booleans, enums, short strings, small arrays; the mini's cache holds 48
tokens) and sampled generations: every output validates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import openai
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.serve.conftest import Served, bundle_doc

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("llm-gemma3")]

POINT = {
    "type": "object",
    "properties": {"x": {"type": "integer", "minimum": 0, "maximum": 9}, "ok": {"type": "boolean"}},
    "required": ["x", "ok"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def client(served: Served) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{served.url}/v1", api_key="unused", max_retries=0)


@pytest.fixture(scope="module")
def name(bundle: Path) -> str:
    model: str = bundle_doc(bundle)["model"]["name"]
    return model


def schema_format(schema: dict[str, Any]) -> Any:
    return {"type": "json_schema", "json_schema": {"name": "out", "schema": schema, "strict": True}}


def test_chat_json_schema_output_parses_and_validates(client: openai.OpenAI, name: str) -> None:
    for seed in (1, 2, 3):
        done = client.chat.completions.create(
            model=name, messages=[{"role": "user", "content": "a point"}], temperature=1.0,
            seed=seed, response_format=schema_format(POINT),
        )  # fmt: skip
        content = done.choices[0].message.content
        assert content is not None
        jsonschema.validate(json.loads(content), POINT)
        assert done.choices[0].finish_reason == "stop"


def test_streamed_json_schema_output_equals_the_whole_answer(
    client: openai.OpenAI, name: str
) -> None:
    body: dict[str, Any] = {
        "model": name, "prompt": "p", "temperature": 0, "max_tokens": 40,
        # The client's completions have no response_format parameter; the service's do.
        "extra_body": {"response_format": schema_format(POINT)},
    }  # fmt: skip
    whole = client.completions.create(**body).choices[0].text
    chunks = client.completions.create(**body, stream=True)
    assert "".join(c.choices[0].text for c in chunks if c.choices) == whole
    jsonschema.validate(json.loads(whole), POINT)


def test_json_object_output_is_an_object(client: openai.OpenAI, name: str) -> None:
    done = client.chat.completions.create(
        model=name, messages=[{"role": "user", "content": "{}"}], temperature=0.7, seed=5,
        response_format={"type": "json_object"}, max_tokens=30,
    )  # fmt: skip
    content = done.choices[0].message.content or ""
    if done.choices[0].finish_reason == "stop":  # else the cache ran out inside the object
        assert isinstance(json.loads(content), dict)
    else:
        assert content.startswith("{")


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "pattern": "(?<=a)b"},  # look-behind: no regex engine reads it
        {"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}},
    ],
)
def test_a_schema_the_grammar_engine_cannot_compile_is_a_400_naming_the_field(
    client: openai.OpenAI, name: str, schema: dict[str, Any]
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(
            model=name, messages=[{"role": "user", "content": "x"}],
            response_format=schema_format(schema),
        )  # fmt: skip
    assert isinstance(caught.value.body, dict)
    assert caught.value.body["param"] == "response_format.json_schema"


def test_a_malformed_response_format_is_a_400_naming_its_part(
    client: openai.OpenAI, name: str
) -> None:
    malformed: list[tuple[Any, str]] = [
        ({"type": "xml"}, "response_format.type"),
        ({"type": "json_schema"}, "response_format.json_schema"),
        (
            {"type": "json_schema", "json_schema": {"schema": {}}},
            "response_format.json_schema.name",
        ),
    ]
    for response_format, field in malformed:
        with pytest.raises(openai.BadRequestError) as caught:
            client.chat.completions.create(
                model=name, messages=[{"role": "user", "content": "x"}],
                response_format=response_format,
            )  # fmt: skip
        assert isinstance(caught.value.body, dict) and caught.value.body["param"] == field


# ---- the property: any schema of the family, any seed -> output that validates -----------
KEYS = st.sampled_from(["a", "b", "n", "ok"])
LEAF = st.one_of(
    st.integers(0, 50).map(lambda low: {"type": "integer", "minimum": low, "maximum": low + 9}),
    st.just({"type": "boolean"}),
    st.lists(st.sampled_from(["x", "y", "z", "w"]), min_size=1, max_size=3, unique=True).map(
        lambda values: {"enum": values}
    ),
    # ASCII letters: a random model's characters may be four bytes (tokens) each, and the
    # mini's cache holds 48 tokens; the family's longest text is 39 characters.
    st.integers(0, 2).map(lambda n: {"type": "string", "pattern": f"^[a-z]{{{n},{n + 1}}}$"}),
    st.just({"type": "null"}),
)
VALUE = st.one_of(
    LEAF,
    LEAF.map(lambda item: {"type": "array", "items": item, "maxItems": 2}),
)


@st.composite
def small_schemas(draw: st.DrawFn) -> dict[str, Any]:
    keys = draw(st.lists(KEYS, min_size=1, max_size=2, unique=True))
    properties = {key: draw(VALUE) for key in keys}
    required = [key for key in keys if draw(st.booleans())]
    return {
        "type": "object", "properties": properties, "required": required,
        "additionalProperties": False,
    }  # fmt: skip


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(schema=small_schemas(), seed=st.integers(0, 2**31))
def test_any_schema_of_the_family_gives_output_that_validates(
    client: openai.OpenAI, name: str, schema: dict[str, Any], seed: int
) -> None:
    done = client.completions.create(
        model=name, prompt="p", temperature=1.0, seed=seed, max_tokens=44,
        extra_body={"response_format": schema_format(schema)},
    )  # fmt: skip
    choice = done.choices[0]
    assert choice.finish_reason == "stop", (schema, choice.text)  # the grammar ended, at eos
    jsonschema.validate(json.loads(choice.text), schema)
