"""An OpenAI request body → the engine's `generate` fields, or a 400 naming the field.

Checked strictly, as the engine would be: a string is not a number, a bool is not an
integer, a value out of range is refused, and a parameter this service cannot honour
(`n` > 1, `logprobs`, `echo`, penalties other than 0) is refused by name rather than
silently ignored. `top_k` and `repetition_penalty` are accepted as extensions (as vLLM and
llama.cpp's server accept them).
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from typing import Any

from trt_edge_runner.serve.api_errors import bad_field

MAX_STOP_STRINGS = 4
SEED_LIMIT = 2**63


@dataclass(frozen=True)
class Sampling:
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    repetition_penalty: float = 1.0
    seed: int = 0

    def to_engine(self) -> dict[str, Any]:
        return {
            "temperature": self.temperature,
            "top_k": self.top_k,
            "top_p": self.top_p,
            "repetition_penalty": self.repetition_penalty,
            "seed": self.seed,
        }


@dataclass(frozen=True)
class ResponseFormat:
    """`response_format`: plain text, any JSON object, or JSON held to `schema`."""

    type: str = "text"  # "text" | "json_object" | "json_schema"
    schema: dict[str, Any] | None = None  # json_schema: the schema itself

    @property
    def constrained(self) -> bool:
        return self.type != "text"

    def json_schema(self) -> dict[str, Any]:
        """The schema the output is held to (json_object: any object)."""
        return self.schema if self.schema is not None else {"type": "object"}


@dataclass(frozen=True)
class GenerationParams:
    """What an OpenAI request asks of a generation, checked."""

    max_tokens: int | None
    sampling: Sampling
    stop: tuple[str, ...] = ()
    stream: bool = False
    include_usage: bool = False
    stop_token_ids: tuple[int, ...] = field(default_factory=tuple)
    ignore_eos: bool = False
    response_format: ResponseFormat = field(default_factory=ResponseFormat)


def body_object(raw: bytes) -> dict[str, Any]:
    """The request body as a JSON object, or a 400 saying what is wrong with it."""
    if not raw.strip():
        raise bad_field("body", "the request has no body; send a JSON object")
    try:
        doc = json.loads(raw)
    except ValueError as exc:
        raise bad_field("body", f"not valid JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise bad_field("body", f"expected a JSON object, got {type(doc).__name__}")
    return doc


def _number(doc: dict[str, Any], name: str, default: float, low: float, high: float) -> float:
    value = doc.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise bad_field(name, f"expected a number, got {value!r}")
    if not low <= value <= high:
        raise bad_field(name, f"{value!r} is out of range [{low:g}, {high:g}]")
    return float(value)


def _integer(doc: dict[str, Any], name: str, low: int, high: int | None = None) -> int | None:
    value = doc.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise bad_field(name, f"expected an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        top = "" if high is None else f" and at most {high}"
        raise bad_field(name, f"{value!r} is out of range: must be at least {low}{top}")
    return value


def _boolean(doc: dict[str, Any], name: str) -> bool:
    value = doc.get(name)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise bad_field(name, f"expected true or false, got {value!r}")
    return value


def _stop(doc: dict[str, Any]) -> tuple[str, ...]:
    value = doc.get("stop")
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(s, str) and s for s in value):
        raise bad_field("stop", "expected a non-empty string or a list of non-empty strings")
    if len(value) > MAX_STOP_STRINGS:
        raise bad_field("stop", f"at most {MAX_STOP_STRINGS} stop strings, got {len(value)}")
    return tuple(value)


def _unsupported(doc: dict[str, Any]) -> None:
    n = doc.get("n")
    if n is not None and n != 1:
        raise bad_field("n", f"{n!r}: this service returns one choice per request (n = 1)")
    for name in ("presence_penalty", "frequency_penalty"):
        value = doc.get(name)
        if value is not None and value != 0:
            raise bad_field(name, "not supported (use repetition_penalty); send 0 or omit it")
    for name in ("logprobs", "top_logprobs", "echo", "best_of", "logit_bias"):
        value = doc.get(name)
        if value not in (None, False, 0, {}, []) and not (name == "best_of" and value == 1):
            raise bad_field(name, "not supported by this service; omit it")


def _response_format(doc: dict[str, Any]) -> ResponseFormat:
    """OpenAI's `response_format`, checked: `{"type": "text"}`, `{"type": "json_object"}` or
    `{"type": "json_schema", "json_schema": {"name", "schema", "strict"?, "description"?}}`.
    Whether the schema compiles is the grammar engine's to say (structured_output)."""
    value = doc.get("response_format")
    if value is None:
        return ResponseFormat()
    if not isinstance(value, dict):
        raise bad_field("response_format", f"expected an object with a type, got {value!r}")
    kind = value.get("type")
    if kind in ("text", "json_object"):
        return ResponseFormat(kind)
    if kind != "json_schema":
        raise bad_field(
            "response_format.type", f"{kind!r}: expected text, json_object or json_schema"
        )
    spec = value.get("json_schema")
    if not isinstance(spec, dict):
        raise bad_field("response_format.json_schema", "required: an object with name and schema")
    name = spec.get("name")
    if not isinstance(name, str) or not name:
        raise bad_field("response_format.json_schema.name", "required: a non-empty string")
    schema = spec.get("schema", {})
    if not isinstance(schema, dict):
        raise bad_field("response_format.json_schema.schema", "expected a JSON Schema object")
    strict = spec.get("strict")
    if strict is not None and not isinstance(strict, bool):
        raise bad_field("response_format.json_schema.strict", "expected true or false")
    return ResponseFormat("json_schema", schema)


def generation_params(
    doc: dict[str, Any], *, max_tokens_field: str = "max_tokens"
) -> GenerationParams:
    """The checked generation parameters of a completions or chat body."""
    _unsupported(doc)
    max_tokens = _integer(doc, max_tokens_field, 1)
    if max_tokens is None and max_tokens_field != "max_tokens":
        max_tokens = _integer(doc, "max_tokens", 1)
    seed = _integer(doc, "seed", -SEED_LIMIT, SEED_LIMIT - 1)
    sampling = Sampling(
        temperature=_number(doc, "temperature", 1.0, 0.0, 2.0),
        top_p=_number(doc, "top_p", 1.0, 0.0, 1.0),
        top_k=_integer(doc, "top_k", 0) or 0,
        repetition_penalty=_number(doc, "repetition_penalty", 1.0, 0.01, 10.0),
        # No seed: a fresh one, so unseeded sampled requests differ, as OpenAI's do.
        seed=(secrets.randbits(63) if seed is None else seed % SEED_LIMIT),
    )
    if sampling.top_p == 0.0:
        raise bad_field("top_p", "0 keeps no token: must be greater than 0 and at most 1")
    options = doc.get("stream_options")
    include_usage = False
    if options is not None:
        if not isinstance(options, dict):
            raise bad_field("stream_options", f"expected an object, got {options!r}")
        include_usage = _boolean(options, "include_usage")
    response_format = _response_format(doc)
    ignore_eos = _boolean(doc, "ignore_eos")
    if ignore_eos and response_format.constrained:
        raise bad_field(
            "ignore_eos", "cannot be combined with response_format: the grammar ends at eos"
        )
    return GenerationParams(
        max_tokens=max_tokens,
        sampling=sampling,
        stop=_stop(doc),
        stream=_boolean(doc, "stream"),
        include_usage=include_usage,
        ignore_eos=ignore_eos,
        response_format=response_format,
    )


def prompt_of(doc: dict[str, Any]) -> str | list[int]:
    """`prompt` of a completions body: a string or token ids (one prompt per request)."""
    value = doc.get("prompt")
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], (str, list)):
        value = value[0]
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(_is_token(t) for t in value):
        return list(value)
    if value is None:
        raise bad_field("prompt", "required: a string or a list of token ids")
    raise bad_field("prompt", "expected a string or a non-empty list of token ids (one prompt)")


def _is_token(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def messages_of(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """`messages` of a chat body, as chat templates read them: role and text content per
    message; an assistant's `tool_calls` with their arguments as an object (transformers'
    convention), a tool result's `tool_call_id`."""
    value = doc.get("messages")
    if not isinstance(value, list) or not value:
        raise bad_field("messages", "required: a non-empty list of {role, content} objects")
    out: list[dict[str, Any]] = []
    for i, message in enumerate(value):
        place = f"messages[{i}]"
        if not isinstance(message, dict):
            raise bad_field(place, "expected an object with role and content")
        role = message.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool"):
            raise bad_field(f"{place}.role", f"{role!r}: expected system, user, assistant or tool")
        content = message.get("content")
        calls = _tool_calls(message, place) if role == "assistant" else []
        if content is None and calls:
            content = ""
        if isinstance(content, list):  # content parts: text only
            texts = []
            for j, part in enumerate(content):
                if not isinstance(part, dict) or part.get("type") != "text":
                    raise bad_field(f"{place}.content[{j}]", "only text parts are supported")
                texts.append(str(part.get("text", "")))
            content = "".join(texts)
        if not isinstance(content, str):
            raise bad_field(f"{place}.content", "expected a string")
        entry: dict[str, Any] = {
            "role": "system" if role == "developer" else role,
            "content": content,
        }
        if calls:
            entry["tool_calls"] = calls
        if role == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str):
                raise bad_field(f"{place}.tool_call_id", "required: the id of the call answered")
            entry["tool_call_id"] = call_id
        out.append(entry)
    return out


def _tool_calls(message: dict[str, Any], place: str) -> list[dict[str, Any]]:
    raw = message.get("tool_calls")
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise bad_field(f"{place}.tool_calls", "expected a list of function calls")
    calls = []
    for j, call in enumerate(raw):
        where = f"{place}.tool_calls[{j}]"
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise bad_field(f"{where}.function", "expected {name, arguments}")
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except (TypeError, ValueError):
            raise bad_field(
                f"{where}.function.arguments", "expected a JSON object as text"
            ) from None
        if not isinstance(arguments, dict):
            raise bad_field(f"{where}.function.arguments", "expected a JSON object as text")
        entry = {"type": "function", "function": {"name": function["name"], "arguments": arguments}}
        if isinstance(call.get("id"), str):
            entry["id"] = call["id"]
        calls.append(entry)
    return calls
